import Foundation
import HealthLedger
import LedgerTools
import LedgerReporting

/// `healthledger ledgers --store STORE` (also `healthledger --store STORE`): the ledgers a store holds.
enum LedgersCommand {
    static let help = """
        USAGE: healthledger ledgers --store STORE [--json]
               healthledger --store STORE [--json]

        List the ledgers of a store with their log sizes. STORE is a folder (its
        subfolders that hold a ledger.log) or, in a build with PostgreSQL
        (HEALTHLEDGER_POSTGRES=1), a URL postgres://[user@]host[:port]/db: every
        ledger in its tables, each usable as --ledger postgres://host/db?ledger=NAME.
        Output: one line per ledger, NAME and bytes (--json: {"ledger","location","bytes"}).

        \(ExitStatus.table)
        """

    static let command = Command(name: "ledgers", abstract: "List the ledgers of a folder or a PostgreSQL store", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let store = try args.option("--store")
        try args.finish()
        guard let store else { throw CLIError.usage("ledgers needs --store FOLDER or --store postgres://host/db") }
        try list(store, global)
    }

    static func list(_ store: String, _ global: GlobalOptions) throws {
        let found = try LedgerStore(store).ledgers()
        for entry in found {
            if global.json {
                var o = JSONObject()
                o.set("ledger", entry.name)
                o.set("location", entry.location)
                o.set("bytes", entry.bytes)
                Output.line(o.string)
            } else {
                Output.line("\(entry.name)\t\(entry.bytes)")
            }
        }
    }
}
