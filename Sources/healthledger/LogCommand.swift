import Foundation
import HealthLedger
import LedgerTools

/// `healthledger log`: the events, for people and for `jq`.
enum LogCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] log [--from SEQ] [--to SEQ] [--json]

        Print the ledger's events in order: one line per event; with --json, one JSON
        object per line (seq, recordedAt, kind, version, actor, offset and the event's
        fields), for example:
          healthledger log --json | jq 'select(.kind == "samplesSaved")'

        An import is a transaction (events/FORMAT.md, rule E11): the events of an
        import that was aborted, or is still open, are listed but marked not applied
        (--json: "applied": false, "transaction": "aborted" or "open").

        Reads without locking: safe while another process writes.

        \(ExitStatus.table)
        """

    static let command = Command(name: "log", abstract: "Print the events (JSON Lines with --json)", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let from = try args.option("--from").map { try LedgerAccess.sequence($0, "--from") } ?? 1
        let to = try args.option("--to").map { try LedgerAccess.sequence($0, "--to") } ?? UInt64.max
        try args.finish()
        guard from <= to else { throw CLIError.usage("--from \(from) is after --to \(to)") }
        try global.reads.listEvents(from: from, through: to, json: global.json) { Output.line($0) }
        // An incomplete tail is reported by main (LedgerAccess.warnIfStoppedShort), as for every reader.
    }
}
