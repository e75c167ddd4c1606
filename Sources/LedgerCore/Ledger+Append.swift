import Foundation
import HealthModel
import LedgerKeys
import LedgerLog

/// The ledger's write verbs: one per meaning, over one commit path.
///
/// | verb | commands | a refusal |
/// |---|---|---|
/// | `append(_:)` | one | thrown (`RuleViolation`, or the log's `LogError.tooLarge`); nothing appended |
/// | `appendAllOrNothing(_:)` | several, each decided against the state the ones before it leave | the first is thrown (`RuleViolation`, `.tooLarge` for the log's limit); nothing appended |
/// | `appendBestEffort(_:)` | several, likewise | that command is left out and reported (`RuleViolation`, `.tooLarge` for the log's limit); the others go on |
///
/// Each call's events go to the log as one batch (one commit: after a crash the whole
/// batch is there or none of it) and are folded into the projections in the same step
/// of the actor, with the facts the decider built (never rebuilt from the event).
extension Ledger {
    /// What a group append did: one result per command, in order (a command's events,
    /// or why the rules refused it), and the sequence numbers appended (nil: none).
    package struct GroupOutcome: Sendable {
        /// One per command: its stored events (empty when appended without keeping
        /// events, `keepingEvents: false`), or the rule it broke.
        package let results: [Result<[StoredEvent], RuleViolation>]
        /// The sequence numbers the group's batch took (nil: every command refused or
        /// none had events).
        package let sequences: ClosedRange<UInt64>?

        /// The commands the rules refused, by index.
        package var refused: [(index: Int, violation: RuleViolation)] {
            results.enumerated().compactMap { i, result in
                if case .failure(let v) = result { return (i, v) }
                return nil
            }
        }
    }

    /// Decides `command`, appends its events as one batch (all or nothing), folds
    /// them, and returns them once durable (or once enqueued, for `.deferred`).
    /// Throws `RuleViolation` (nothing appended) or a log error.
    @discardableResult
    package func append(_ command: LedgerCommand, durability: Durability = .durable) async throws -> [StoredEvent] {
        try await appendAllOrNothing([command], durability: durability)
    }

    /// Decides several commands in order, each against the state the ones before it
    /// leave, and appends all their events as one batch — all or nothing: the first
    /// refusal (or a batch over the log's limits) is thrown and nothing is appended
    /// or folded. With more than one command the fold happens on a copy of the
    /// projections that replaces them once the batch is enqueued; the copy duplicates
    /// what the commands change (copy on write) once — fine for a workout builder's
    /// handful of commands, not for bulk work (`appendBestEffort`).
    @discardableResult
    package func appendAllOrNothing(_ commands: [LedgerCommand], durability: Durability = .durable) async throws
        -> [StoredEvent] {
        await admit()
        let enqueued = try enqueueDecided(commands, allOrNothing: true, keepEvents: true)
        guard let ticket = enqueued.ticket else { return [] }
        try await wait(for: ticket, durability: durability)
        return enqueued.results.flatMap { (try? $0.get()) ?? [] }
    }

    /// Decides several commands in order, each against the state left by the ones
    /// before it, and appends all their events as one batch. A command the rules
    /// refuse (or too large for the log) is left out and reported; the others go on.
    /// For bulk work (imports, benchmarks): one batch of thousands of events costs one
    /// header, one link and one sync. `keepingEvents: false` does not keep a copy of
    /// every event (an import's hundreds of thousands of samples).
    package func appendBestEffort(_ commands: [LedgerCommand], durability: Durability = .durable,
                                 keepingEvents: Bool = true) async throws -> GroupOutcome {
        await admit()
        return try await appendAdmitted(commands, durability: durability, keepEvents: keepingEvents)
    }

    /// `appendBestEffort` without waiting for a transaction to end (the transaction's
    /// own calls, already admitted).
    func appendAdmitted(_ commands: [LedgerCommand], durability: Durability, keepEvents: Bool) async throws
        -> GroupOutcome {
        let enqueued = try enqueueDecided(commands, allOrNothing: false, keepEvents: keepEvents)
        guard let ticket = enqueued.ticket else { return GroupOutcome(results: enqueued.results, sequences: nil) }
        try await wait(for: ticket, durability: durability)
        return GroupOutcome(results: enqueued.results, sequences: ticket.sequences)
    }

    /// What `enqueueDecided` did: the batch handed to the writer (nil: no command had
    /// an event, nothing was appended) and one result per command.
    struct Enqueued {
        let ticket: LogWriter.Ticket?
        let results: [Result<[StoredEvent], RuleViolation>]
    }

    /// The one commit path, in one step of the actor (no suspension): decides
    /// `commands` in order, encodes their events into one batch, folds them into the
    /// projections with the decider's facts and hands the batch to the writer. The
    /// caller then waits for the ticket (`wait(for:durability:)`), after setting
    /// whatever must hold before another caller runs (`beginImport` opens its
    /// transaction).
    ///
    /// `allOrNothing`: the first refusal is thrown and nothing is folded. Otherwise a
    /// refused command is left out and its violation kept.
    ///
    /// When the projections change, by case: one command is decided against them as
    /// they are, so its facts are kept aside and folded only once the writer has the
    /// batch (a writer that refuses it — failed, or closing — leaves them exactly as
    /// they were). Several all-or-nothing commands fold into a copy of the projections
    /// (each is decided against what the ones before it leave), swapped in once the
    /// writer has the batch. A best-effort group folds in place as it goes (a bulk
    /// import cannot copy the projections); should the writer then refuse the batch,
    /// the projections are rebuilt from the log and the ledger fails.
    ///
    /// The events are folded with the time and offsets the writer then gives the batch
    /// (`nextRecordedAt`, asserted at `enqueue`): the projections hold what a replay
    /// of the log would fold, byte for byte.
    func enqueueDecided(_ commands: [LedgerCommand], allOrNothing: Bool, keepEvents: Bool) throws -> Enqueued {
        if let failure { throw LedgerError.failed(cause: failure) }
        let slotsBefore = state.samples.count
        let at = Position(sequence: writer.nextSequence, offset: writer.encodedLength, recordedAt: writer.nextRecordedAt())
        let sealing = keyRing.map { _ in SealingContext(importId: transaction?.importId) }
        if commands.count == 1 {
            var folded = try Self.fold(commands, into: &state, at: at, allOrNothing: allOrNothing, keepEvents: keepEvents,
                                       deferringFolds: true, sealing: sealing)
            guard !folded.pending.isEmpty else { return Enqueued(ticket: nil, results: folded.results) }
            try nameSealKeys(&folded)
            let ticket = try enqueue(folded.takeBatch(), predicting: at)
            for d in folded.deferred {
                state.apply(d.facts, kind: d.kind, sequence: d.sequence, recordedAt: at.recordedAt, offset: d.offset)
            }
            return finish(folded, ticket: ticket, slotsBefore: slotsBefore)
        }
        if allOrNothing {
            var scratch = state
            var folded = try Self.fold(commands, into: &scratch, at: at, allOrNothing: true, keepEvents: keepEvents,
                                       sealing: sealing)
            guard !folded.pending.isEmpty else { return Enqueued(ticket: nil, results: folded.results) }
            try nameSealKeys(&folded)
            let ticket = try enqueue(folded.takeBatch(), predicting: at)
            state = scratch
            return finish(folded, ticket: ticket, slotsBefore: slotsBefore)
        }
        var folded = try Self.fold(commands, into: &state, at: at, allOrNothing: false, keepEvents: keepEvents,
                                   sealing: sealing)
        guard !folded.pending.isEmpty else { return Enqueued(ticket: nil, results: folded.results) }
        let ticket: LogWriter.Ticket
        do {
            try nameSealKeys(&folded)
            ticket = try enqueue(folded.takeBatch(), predicting: at)
        } catch {
            // The group's events are folded and the writer refused them (it failed, or
            // is closing; `fold` checked the log's limits): the projections would hold
            // what the log does not. Rebuilt from the log, and the ledger fails.
            if failure == nil { failure = error }
            forgetFailedImport()
            throw error
        }
        return finish(folded, ticket: ticket, slotsBefore: slotsBefore)
    }

    /// A sealed ledger's batch gets its keys: the current key of each scope its sealed
    /// records need, the missing ones created durably first (Y5), then named in the
    /// records. Nothing is folded or appended here: a key store that fails leaves the
    /// batch unwritten (`LedgerError.keyStore`).
    private func nameSealKeys(_ folded: inout FoldedBatch) throws {
        guard let keyRing, !folded.sealScopes.isEmpty else { return }
        let ids: [KeyScope: UInt64]
        do { ids = try keyRing.keyIds(for: folded.sealScopes.map(\.scope)) } catch { throw LedgerError.keyStore(error) }
        for (record, scope) in folded.sealScopes {
            guard let id = ids[scope] else { preconditionFailure("a key for every scope asked") }
            folded.encoded.setSealKey(ofRecord: record, to: id)
        }
    }

    /// Where the next batch goes: its first sequence number, its byte offset in the
    /// log and its time.
    struct Position {
        let sequence: UInt64
        let offset: UInt64
        let recordedAt: Int64
    }

    /// Builds the stored events, once the writer has the batch.
    private func finish(_ folded: FoldedBatch, ticket: LogWriter.Ticket, slotsBefore: Int) -> Enqueued {
        replayWorkSinceSnapshot += UInt64(folded.pending.count + state.samples.count - slotsBefore)
        var results = folded.results
        if folded.keepEvents {
            for (i, p) in folded.pending.enumerated() {
                let stored = StoredEvent(sequence: ticket.sequences.lowerBound + UInt64(i), recordedAt: ticket.recordedAt,
                                         offset: ticket.recordOffsets[i], event: p.event!)
                if case .success(var list) = results[p.result] {
                    list.append(stored)
                    results[p.result] = .success(list)
                }
            }
        }
        return Enqueued(ticket: ticket, results: results)
    }

    /// Commands decided, encoded and folded, before the writer has the batch.
    struct FoldedBatch {
        /// The encoded events; taken (`takeBatch`) when handed to the writer, which seals
        /// it in place — a second reference would copy an import's megabytes.
        var encoded: RecordBatch
        var results: [Result<[StoredEvent], RuleViolation>] = []
        /// Per event, in batch order: the command (index into `results`) it belongs to,
        /// and the event itself when kept.
        var pending: [(result: Int, event: Event?)] = []
        /// With `deferringFolds`: the facts to fold once the writer has the batch.
        var deferred: [(facts: EventFacts, kind: UInt16, sequence: UInt64, offset: UInt64)] = []
        /// A sealed ledger's sealed records (index in `encoded`) and their key scopes.
        var sealScopes: [(record: Int, scope: KeyScope)] = []
        let keepEvents: Bool

        /// The batch, leaving an empty one here: the writer gets the only reference.
        mutating func takeBatch() -> RecordBatch {
            var taken = RecordBatch(capacity: 0)
            swap(&taken, &encoded)
            return taken
        }
    }

    /// Decides each command against `state` (as the ones before it left it), encodes
    /// its events and, once they fit the log's limits, folds them with the facts the
    /// decider built, at `position` (where the writer will put the batch).
    ///
    /// `sealing` (a sealed ledger): events are laid out as `SealScopes` says — a save
    /// split by key scope into several records, the health-bearing kinds sealed — each
    /// sealed record naming key 0 until `sealKeys` names the real one (its size does not
    /// depend on it, so the offsets folded here stay true).
    private static func fold(_ commands: [LedgerCommand], into state: inout LedgerState, at position: Position,
                             allOrNothing: Bool, keepEvents: Bool, deferringFolds: Bool = false,
                             sealing: SealingContext? = nil) throws -> FoldedBatch {
        // Folds now, or (one command, decided against the state as it is) keeps the
        // facts for after the writer has the batch.
        func apply(_ facts: EventFacts, kind: UInt16, sequence: UInt64, offset: UInt64, to out: inout FoldedBatch) {
            if deferringFolds {
                out.deferred.append((facts, kind, sequence, offset))
            } else {
                state.apply(facts, kind: kind, sequence: sequence, recordedAt: position.recordedAt, offset: offset)
            }
        }
        // Room for encoded saves up front (an import's batch is hundreds of kilobytes:
        // grown by doubling, it would be copied twice over).
        let encodedBytes = commands.reduce(0) { total, command in
            if case .saveEncoded(_, let samples) = command { return total + samples.byteCount + 64 }
            return total
        }
        var out = FoldedBatch(encoded: RecordBatch(capacity: 4096 + encodedBytes), keepEvents: keepEvents)
        for command in commands {
            do throws(RuleViolation) {
                if case .saveEncoded(let bundle, let encoded) = command {
                    // The bulk path: the samples' bytes go into the batch as they are and
                    // their headers are what the rules check and the projections fold.
                    let (app, samples) = try LedgerDecider.decideEncoded(bundle, encoded, state)
                    let mark = out.encoded.count, scopeMark = out.sealScopes.count
                    let parts: [(key: KeyScope?, samples: EncodedSamples)]
                    if let sealing {
                        let source = SealScopes.source(app: app, importId: sealing.importId)
                        let split = samples.split { i in
                            SealScopes.scope(typeCode: samples.typeCode(ofSample: i), start: samples.start(ofSample: i), source: source)
                        }
                        parts = split.map { ($0.key, $0.samples) }  // one scope: the samples themselves (`split`)
                    } else {
                        parts = [(nil, samples)]
                    }
                    for part in parts {
                        let kind = EventKind.samplesSaved.rawValue, version = EventKind.samplesSaved.currentVersion
                        if let scope = part.key {
                            out.encoded.append(kind: kind, version: version, sealedUnder: 0) { part.samples.writePayload(app: app, into: &$0) }
                            out.sealScopes.append((out.encoded.count - 1, scope))
                        } else {
                            out.encoded.append(kind: kind, version: version) { part.samples.writePayload(app: app, into: &$0) }
                        }
                    }
                    if case .tooLarge(let bytes, let limit)? = out.encoded.limitViolation {
                        out.encoded.removeRecords(from: mark)
                        out.sealScopes.removeSubrange(scopeMark...)
                        throw RuleViolation.tooLarge(bytes: bytes, limit: limit)
                    }
                    for (k, part) in parts.enumerated() {
                        let event = keepEvents ? LedgerDecider.event(of: part.samples, app: app, state) : nil
                        apply(part.samples.facts(app: app), kind: EventKind.samplesSaved.rawValue,
                              sequence: position.sequence + UInt64(out.pending.count),
                              offset: position.offset + UInt64(out.encoded.recordStarts[mark + k]), to: &out)
                        out.pending.append((out.results.count, event))
                    }
                    out.results.append(.success([]))
                    continue
                }
                var decided = try LedgerDecider.decideWithFacts(command, state)
                // Encode first and check the log's limits before folding anything: a
                // command too large for the log is refused like one the rules refuse.
                let mark = out.encoded.count, scopeMark = out.sealScopes.count
                if let sealing {
                    let records = decided.flatMap {
                        SealScopes.records(of: $0.event, facts: $0.facts, recordedAt: position.recordedAt,
                                           importId: sealing.importId)
                    }
                    decided = records.map { ($0.event, $0.facts) }
                    for record in records {
                        if let scope = record.scope {
                            EventCodec.append(record.event, to: &out.encoded, sealedUnder: 0)
                            out.sealScopes.append((out.encoded.count - 1, scope))
                        } else {
                            EventCodec.append(record.event, to: &out.encoded)
                        }
                    }
                } else {
                    for (event, _) in decided { EventCodec.append(event, to: &out.encoded) }
                }
                if case .tooLarge(let bytes, let limit)? = out.encoded.limitViolation {
                    out.encoded.removeRecords(from: mark)
                    out.sealScopes.removeSubrange(scopeMark...)
                    throw RuleViolation.tooLarge(bytes: bytes, limit: limit)
                }
                for (k, (event, facts)) in decided.enumerated() {
                    apply(facts, kind: event.kind.rawValue, sequence: position.sequence + UInt64(out.pending.count),
                          offset: position.offset + UInt64(out.encoded.recordStarts[mark + k]), to: &out)
                    out.pending.append((out.results.count, keepEvents ? event : nil))
                }
                out.results.append(.success([]))
            } catch {
                if allOrNothing {
                    // One command over the log's limit throws the log's own error (what the
                    // writer would); a group names it as the rule violation of that command.
                    if commands.count == 1, case .tooLarge(let bytes, let limit) = error {
                        throw LogError.tooLarge(bytes: bytes, limit: limit)
                    }
                    throw error
                }
                out.results.append(.failure(error))
            }
        }
        return out
    }

    /// Waits until the writer has `ticket`'s batch (durable, or enqueued within the
    /// bulk limits); a failure fails the ledger.
    func wait(for ticket: LogWriter.Ticket, durability: Durability) async throws {
        do {
            try await writer.wait(for: ticket, durability: durability)
        } catch {
            failure = error
            throw error
        }
        signalCommitted()
    }

    /// Hands a batch folded ahead of its ticket to the writer (`enqueue`), and asserts
    /// that the writer assigned what the fold predicted: the batch's first sequence
    /// and byte offset (the writer is ours alone). Consumed: the writer seals the batch
    /// in place (its link appended), which would copy the whole buffer were the caller
    /// still holding it.
    func enqueue(_ batch: consuming RecordBatch, predicting position: Position) throws -> LogWriter.Ticket {
        let firstRecordStart = batch.recordStarts[0]
        let ticket = try enqueue(consume batch, recordedAt: position.recordedAt)
        precondition(ticket.sequences.lowerBound == position.sequence
                     && ticket.recordOffsets.first == position.offset + UInt64(firstRecordStart)
                     && ticket.recordedAt == position.recordedAt,
                     "the ledger is the log's only writer")
        return ticket
    }

    /// Hands a batch to the writer. A batch the writer refuses before anything is
    /// written or folded (over a size limit, empty, a reserved kind) leaves the
    /// ledger as it was: that error is the caller's alone. Any other failure fails
    /// the ledger (it refuses everything until reopened: the log's tail is no
    /// longer known). Only the writer's I/O poisons.
    func enqueue(_ batch: consuming RecordBatch, recordedAt: Int64? = nil) throws -> LogWriter.Ticket {
        do {
            let ticket = try writer.enqueue(consume batch, recordedAt: recordedAt)
            #if DEBUG
            if InvariantChecks.afterFolds, InvariantChecks.due(batch: ticket.sequences) {
                InvariantViolation.trap(ifAny: writer.checkInvariants(), "after enqueueing events \(ticket.sequences)")
            }
            #endif
            return ticket
        } catch let error as LogError {
            switch error {
            case .tooLarge, .emptyBatch, .invalidKind: throw error
            default:
                failure = error
                throw error
            }
        } catch {
            failure = error
            throw error
        }
    }
}
