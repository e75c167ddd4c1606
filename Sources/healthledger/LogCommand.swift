import Foundation
import LedgerCore
import LedgerLog
import LedgerReporting

/// `healthledger log`: the events, for people and for `jq`.
enum LogCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] log [--from SEQ] [--to SEQ] [--json]

        Print the ledger's events in order: one line per event; with --json, one JSON
        object per line (seq, recordedAt, kind, version, actor, offset and the event's
        fields), for example:
          healthledger log --json | jq 'select(.kind == "samplesSaved")'

        Reads without locking: safe while another process writes.

        \(ExitStatus.table)
        """

    static let command = Command(name: "log", abstract: "Print the events (JSON Lines with --json)", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let from = try args.option("--from").map { try LedgerAccess.sequence($0, "--from") } ?? 1
        let to = try args.option("--to").map { try LedgerAccess.sequence($0, "--to") } ?? UInt64.max
        try args.finish()
        guard from <= to else { throw CLIError.usage("--from \(from) is after --to \(to)") }
        let (_, reader) = try LedgerAccess.reader(global)
        var registry = AppRegistry()
        var problem: Error?
        try reader.forEachRecord { record in
            guard record.sequence <= to else { return false }
            do {
                if record.sequence < from {
                    // Only registrations matter before the range: they name the apps.
                    guard record.kind == EventKind.appRegistered.rawValue else { return true }
                }
                let event = try EventCodec.decode(record, source: registry.source)
                if case .appRegistered(let ordinal, let r) = event { registry.register(ordinal, r) }
                guard record.sequence >= from else { return true }
                let stored = StoredEvent(sequence: record.sequence, recordedAt: record.recordedAt, offset: record.offset, event: event)
                Output.line(global.json ? EventJSON.line(stored, version: record.kindVersion, registry: registry)
                                        : EventJSON.text(stored, registry: registry))
            } catch {
                problem = ReplayError.undecodable(sequence: record.sequence, offset: record.offset,
                                                  error as? EventDecodingError ?? .truncated(offset: 0))
                return false
            }
            return true
        }
        if let problem { throw problem }
        // An incomplete tail is reported by main (LedgerAccess.warnIfStoppedShort), as for every reader.
    }
}
