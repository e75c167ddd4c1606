import Foundation
import HealthModel
import LedgerKeys
import LedgerLog

/// Appending another ledger's events as this one's own (`encrypt SRC DST`, issue 32).
extension Ledger {
    /// Appends one batch of events read from another ledger, in its order and at its
    /// time (`recordedAt`, or this ledger's last time if later: time never goes back):
    /// laid out and sealed as this ledger's writer lays out its own (a save split by key
    /// scope; inside an import transaction, `importId`, keyed by the import), each event
    /// held to the rules and folded — or, `applied: false` (an aborted import's, rule
    /// E11), passed over as replay passes over it. Durable once `sync` returns.
    /// - Throws: `LedgerError.replayFailed` for an event the rules refuse (nothing of the
    ///   batch is appended, and the ledger fails: its projections hold the events before
    ///   it); the log's limits; `LedgerError.keyStore`.
    package func appendCopied(_ events: [Event], recordedAt: Int64, importId: UUID?, applied: Bool) async throws {
        await admit()
        if let failure { throw LedgerError.failed(cause: failure) }
        guard !events.isEmpty else { return }
        let time = max(recordedAt, state.lastRecordedAt)
        let at = Position(sequence: writer.nextSequence, offset: writer.encodedLength, recordedAt: time)
        var batch = RecordBatch(capacity: 4096)
        var sealScopes: [(record: Int, scope: KeyScope)] = []
        var folds: [(facts: EventFacts, kind: UInt16)] = []
        for event in events {
            let facts = EventFacts(event)
            let records = keyRing == nil ? [(event: event, facts: facts, scope: KeyScope?.none)]
                : SealScopes.records(of: event, facts: facts, recordedAt: time, importId: importId)
            for record in records {
                if let scope = record.scope {
                    EventCodec.append(record.event, to: &batch, sealedUnder: 0)
                    sealScopes.append((batch.count - 1, scope))
                } else {
                    EventCodec.append(record.event, to: &batch)
                }
                folds.append((record.facts, record.event.kind.rawValue))
            }
        }
        if let violation = batch.limitViolation { throw violation }
        if let keyRing, !sealScopes.isEmpty {
            let ids: [KeyScope: UInt64]
            do { ids = try keyRing.keyIds(for: sealScopes.map(\.scope)) } catch { throw LedgerError.keyStore(error) }
            for (record, scope) in sealScopes {
                guard let id = ids[scope] else { preconditionFailure("a key for every scope asked") }
                batch.setSealKey(ofRecord: record, to: id)
            }
        }
        // Checked and folded in place (a copy of the projections per batch would cost
        // the whole state each time). The source is a log replay accepted; an event the
        // rules refuse here fails the ledger, with nothing of this batch appended.
        let starts = batch.recordStarts
        for (k, fold) in folds.enumerated() {
            let sequence = at.sequence + UInt64(k), offset = at.offset + UInt64(starts[k])
            guard applied else {
                state.skip(sequence: sequence, recordedAt: time)
                continue
            }
            if let violation = LedgerRules.violation(fold.facts, in: state) {
                let error = LedgerError.replayFailed(.ruleViolation(sequence: sequence, offset: offset, violation))
                failure = error
                throw error
            }
            state.apply(fold.facts, kind: fold.kind, sequence: sequence, recordedAt: time, offset: offset)
        }
        let ticket = try enqueue(batch, predicting: at)
        replayWorkSinceSnapshot += UInt64(folds.count)
        try await wait(for: ticket, durability: .deferred)
    }
}
