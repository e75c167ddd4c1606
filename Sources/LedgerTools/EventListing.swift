import LedgerCore
import LedgerLog
import LedgerReporting

/// The ledger's events in order, each told as one line (`EventJSON`): what `log`
/// prints. An import is a transaction (rule E11): the events of one that was aborted
/// or is still open are listed, marked not applied — found by looking ahead for its
/// end, as replay does.
extension ReadSession {
    /// Calls `line` with each event from `from` through `to` (sequence numbers), as a
    /// JSON object (`json`) or a line for people. An event that does not decode ends
    /// the listing with `ReplayError.undecodable` after the lines before it.
    package func listEvents(from: UInt64, through to: UInt64, json: Bool, _ line: (String) throws -> Void) throws {
        let (_, reader) = try reader()
        // Records under erased keys are listed as erased (issue 32), or as what replay
        // folds in their place.
        let erasures = try ErasureIndex.read(reader)
        var registry = AppRegistry()
        var problem: (any Error)?
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
                let disposition = erasures.disposition(keyId: record.sealedKeyId, sequence: record.sequence)
                var importId = EventCodec.importId(of: record)
                if case .replace(.importStarted(let start)) = disposition { importId = start.importId }
                if record.kind == EventKind.importStarted.rawValue, record.kindVersion == 2, let id = importId {
                    switch ImportBrackets.close(of: id, startedAt: record.sequence, scanningFrom: batchStart, reader: reader) {
                    case .finished?: transaction = nil
                    case .aborted(let through, _)?: transaction = (through, .aborted)
                    case nil: transaction = (UInt64.max, .open)
                    }
                }
                // Only registrations matter before the range: they name the apps.
                guard record.sequence >= from || record.kind == EventKind.appRegistered.rawValue else { return }
                if case .forged = disposition {
                    problem = ReplayError.undecodable(sequence: record.sequence, offset: record.offset, ErasureIndex.forgery)
                    stop = true
                    return
                }
                let erasedBy = erasures.erasure(ofKey: record.sealedKeyId)?.sequence
                if case .passOver = disposition, let erasedBy {
                    guard record.sequence >= from else { return }
                    do {
                        try line(EventJSON.erased(sequence: record.sequence, recordedAt: record.recordedAt, kind: record.kind,
                                                  version: record.kindVersion, offset: record.offset, erasedBy: erasedBy, json: json))
                    } catch {
                        problem = error
                        stop = true
                    }
                    return
                }
                do {
                    let event: Event
                    if case .replace(let replacement) = disposition { event = replacement } else {
                        event = try EventCodec.decode(record, source: registry.source)
                    }
                    if case .appRegistered(let ordinal, let r) = event { registry.register(ordinal, r) }
                    guard record.sequence >= from else { return }
                    let stored = StoredEvent(sequence: record.sequence, recordedAt: record.recordedAt, offset: record.offset, event: event)
                    let notApplied = transaction?.state
                    try line(json ? EventJSON.line(stored, version: record.kindVersion, registry: registry, notApplied: notApplied,
                                                   erasedBy: erasedBy)
                                  : EventJSON.text(stored, registry: registry, notApplied: notApplied)
                                    + (erasedBy.map { "\t[erased at event \($0): what replay still needs]" } ?? ""))
                } catch let error as EventDecodingError {
                    problem = ReplayError.undecodable(sequence: record.sequence, offset: record.offset, error)
                    stop = true
                } catch {
                    problem = error
                    stop = true
                }
            }
            return !stop
        }
        if let problem { throw problem }
    }
}
