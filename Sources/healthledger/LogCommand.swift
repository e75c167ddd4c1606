import Foundation
import HealthLedger
import LedgerCore
import LedgerReporting

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
        let (_, reader) = try LedgerAccess.reader(global)
        var registry = AppRegistry()
        var problem: Error?
        // The import transaction the records are inside, and how it ends (E11).
        var transaction: (through: UInt64, state: EventJSON.TransactionState)?
        var batchStart = reader.start
        var stop = false
        try reader.forEachBatch { batch in
            defer { batchStart = batch.endPosition }
            batch.forEachRecord { record in
                guard !stop else { return }
                guard record.sequence <= to else { stop = true; return }
                if let t = transaction, record.sequence > t.through { transaction = nil }
                if record.kind == EventKind.importStarted.rawValue, record.kindVersion == 2, let id = EventCodec.importId(of: record) {
                    // Look ahead for its end, as replay does.
                    switch ImportBrackets.close(of: id, startedAt: record.sequence, scanningFrom: batchStart, reader: reader) {
                    case .finished?: transaction = nil
                    case .aborted(let through, _)?: transaction = (through, .aborted)
                    case nil: transaction = (UInt64.max, .open)
                    }
                }
                // Only registrations matter before the range: they name the apps.
                guard record.sequence >= from || record.kind == EventKind.appRegistered.rawValue else { return }
                do {
                    let event = try EventCodec.decode(record, source: registry.source)
                    if case .appRegistered(let ordinal, let r) = event { registry.register(ordinal, r) }
                    guard record.sequence >= from else { return }
                    let stored = StoredEvent(sequence: record.sequence, recordedAt: record.recordedAt, offset: record.offset, event: event)
                    let notApplied = transaction?.state
                    Output.line(global.json ? EventJSON.line(stored, version: record.kindVersion, registry: registry, notApplied: notApplied)
                                            : EventJSON.text(stored, registry: registry, notApplied: notApplied))
                } catch {
                    problem = ReplayError.undecodable(sequence: record.sequence, offset: record.offset,
                                                      error as? EventDecodingError ?? .truncated(offset: 0))
                    stop = true
                }
            }
            return !stop
        }
        if let problem { throw problem }
        // An incomplete tail is reported by main (LedgerAccess.warnIfStoppedShort), as for every reader.
    }
}
