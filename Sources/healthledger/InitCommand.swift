import Foundation
import HealthLedger
import HealthModel
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
        let ledger = try global.reads.location.create()
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
