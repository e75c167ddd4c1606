import Foundation
import HealthLedger
import HealthModel
import LedgerCore
import LedgerLog
import LedgerReporting

/// `healthledger init`: a new, empty ledger folder.
enum InitCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] [--tz ZONE] init [--json]

        Create a new, empty ledger (folder mode 0700, files 0600). Refuses a folder that
        already holds a ledger. The owner's time zone (age, "today", day boundaries) is
        recorded as an event when --tz or $TZ names one; `timezone ZONE` changes it.

        \(ExitStatus.table)
        """

    static let command = Command(name: "init", abstract: "Create a new, empty ledger", help: help) { args, global in
        if handledHelp(&args, help) { return }
        try args.finish()
        let ledger = try Ledger.create(LedgerAccess.fileSystem(global))
        if let zone = global.timeZoneOverride?.identifier ?? GlobalOptions.environmentTimeZone {
            try await OwnerStore(ledger: ledger).setTimeZone(zone)
        }
        try await ledger.close()
        if global.json {
            var o = JSONObject()
            o.set("ledger", global.ledgerPath)
            o.set("ledgerId", ledger.ledgerId.uuidString)
            Output.line(o.string)
        } else {
            Output.line("created ledger \(ledger.ledgerId.uuidString) at \(global.ledgerPath)")
        }
    }
}

/// `healthledger timezone [ZONE]`: the owner's time zone, shown or set (an event).
enum TimeZoneCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] timezone [ZONE] [--json]

        Without ZONE: the owner's time zone the ledger keeps (UTC when none is set).
        With ZONE (an IANA name such as Pacific/Honolulu): records it as an event. Age,
        "today" and day boundaries are counted in it; --tz overrides it for one command.

        \(ExitStatus.table)
        """

    static let command = Command(name: "timezone", abstract: "Show or set the owner's time zone", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let zone = args.positional()
        try args.finish()
        let shown: String
        if let zone {
            try await withStore(global, .owner) { _, _, owner in try await owner.setTimeZone(zone) }
            shown = zone
        } else {
            shown = try LedgerView.read(global, as: .owner).ownerTimeZone ?? "UTC"
        }
        Output.line(global.json ? "{\"timeZone\":\(JSONObject.quote(shown))}" : shown)
    }
}

/// `healthledger available`: HealthKit's isHealthDataAvailable() for a ledger path.
enum AvailableCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] available [--json]

        Whether health data can be stored at the ledger path (HealthKit's
        isHealthDataAvailable()): a ledger folder exists there, its log is readable and
        writable, and it opens (a reader checks its header). Prints `available` and
        the earliest date a sample may start (HealthKit's earliestPermittedSampleDate();
        a save dated before it is refused, exit 3), else exit 4 with
        notAvailableOnDevice and the reason.

        \(ExitStatus.table)
        """

    static let command = Command(name: "available", abstract: "Whether a ledger exists at the path and opens", help: help) { args, global in
        if handledHelp(&args, help) { return }
        try args.finish()
        if LedgerAccess.isPostgresURL(global.ledgerPath) {
            // A database ledger: it exists and its log opens (the same reader check).
            guard try LedgerAccess.fileSystem(global).exists(LogWriter.logFileName) else {
                throw HealthStoreError.notAvailableOnDevice(path: global.ledgerPath, reason: "the store holds no such ledger (run `healthledger init`)")
            }
        } else {
            try HealthStore.checkAvailability(at: global.ledgerPath)
        }
        _ = try LedgerAccess.reader(global)
        let earliest = ISO8601.string(HealthStore.earliestPermittedSampleDate)
        Output.line(global.json ? "{\"available\":true,\"earliestPermittedSampleDate\":\"\(earliest)\"}"
                                : "available\nearliest permitted sample date: \(earliest)")
    }
}
