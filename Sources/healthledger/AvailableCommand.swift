import Foundation
import HealthLedger
import LedgerTools
import HealthModel
import LedgerReporting

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
            guard try global.reads.location.holdsLedger() else {
                throw HealthStoreError.notAvailableOnDevice(path: global.ledgerPath, reason: "the store holds no such ledger (run `healthledger init`)")
            }
        } else {
            try HealthStore.checkAvailability(at: global.ledgerPath)
        }
        _ = try global.reads.reader()
        let earliest = ISO8601.string(HealthStore.earliestPermittedSampleDate)
        Output.line(global.json ? "{\"available\":true,\"earliestPermittedSampleDate\":\"\(earliest)\"}"
                                : "available\nearliest permitted sample date: \(earliest)")
    }
}
