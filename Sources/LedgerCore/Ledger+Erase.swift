import Foundation
import HealthModel
import LedgerKeys
import LedgerLog

/// Erasure by destroying keys (issue 32; DESIGN.md, "Keys and erasure").
///
/// The order, each step durable before the next, so that `kill -9` anywhere leaves the
/// ledger before the erasure or after it:
/// 1. read what the scope's keys sealed (they are live): the samples' UUIDs, the
///    replacements later rules need (`ErasureReplacement`), and — a range of days
///    cutting a key's month — the samples of that month that stay;
/// 2. make the keys the batch needs: an erasure key, and a new key for each cut month
///    (`rotate`);
/// 3. append one batch, durable: the staying samples of the cut months saved again
///    under the new keys (same UUIDs), then the `erased` event(s). From here on every
///    replay passes over what the old keys sealed, whether or not they still exist:
///    the erasure has happened. Not folded: the projections are rebuilt (step 6);
/// 4. destroy the keys and the snapshot key, in one durable key-store write;
/// 5. remove every snapshot (sealed under the destroyed snapshot key);
/// 6. rebuild the projections from the log and write a snapshot under a new key.
/// A writer that opens the ledger after a crash between 3 and 5 finishes 4 and 5
/// (`finishErasures`) before anything else.
extension Ledger {
    /// What an erasure did.
    package struct ErasureOutcome: Sendable {
        /// The sequence number of its (first) `erased` event.
        package let sequence: UInt64
        /// Its `erased` events (more than one when the erased samples' UUIDs do not fit
        /// one record).
        package let erasures: [Erasure]
        /// The snapshot written afterwards (nil when stopped before, in tests).
        package let snapshot: String?

        package var scope: Erasure.Scope { erasures[0].scope }
        package var keyIds: [UInt64] { erasures[0].keyIds }
        /// Samples live when erased.
        package var samplesErased: UInt64 { erasures.reduce(0) { $0 + $1.liveAtErasure } }
        /// Every sample the destroyed keys sealed (deleted ones too).
        package var samplesSealed: Int { erasures.reduce(0) { $0 + $1.samples.count } }
        /// Samples of cut months saved again under new keys.
        package let samplesKept: Int
    }

    /// A step after which a test stops an erasure, as `kill -9` would (what is on disk
    /// stays; nothing else of the erasure runs). The caller then abandons the ledger.
    package enum ErasureStop: Sendable {
        case afterAppend, afterDestroy, afterSnapshotsRemoved
    }

    /// UUIDs per `erased` event: 8 MB of them, well inside a record's 16 MiB.
    static let erasedSamplesPerEvent = 500_000
    /// Record numbers per `erased` event: at most 10 bytes each (deltas: mostly 1–3).
    static let erasedRecordsPerEvent = 500_000
    /// Samples per re-appended save.
    static let resealedSamplesPerRecord = 2_048

    /// Erases `scope`: appends an `erased` event, destroys the keys that sealed it, and
    /// rebuilds every snapshot (the owner's act; the store API has no door to it).
    /// - Throws: `LedgerError.erasureRefused` (nothing changed: a plain ledger, an
    ///   unknown source, import or type, a range of a type that is not a sample type's,
    ///   nothing to erase, a reason empty or too long); `LedgerError.keyStore`; the log's
    ///   errors.
    package func erase(_ scope: Erasure.Scope, reason: String, stoppingAfter stop: ErasureStop? = nil) async throws
        -> ErasureOutcome {
        await admit()
        if let failure { throw LedgerError.failed(cause: failure) }
        guard let ring = keyRing else {
            throw LedgerError.erasureRefused("the ledger is not encrypted: erasure destroys keys, and a plain ledger has none (copy it into an encrypted one with init --encrypt and copy)", notFound: false)
        }
        if let problem = Erasure.problem(withReason: reason) { throw LedgerError.erasureRefused(problem, notFound: false) }
        let keys = try erasedKeys(scope, ring: ring)
        guard !keys.destroyed.isEmpty else {
            throw LedgerError.erasureRefused("nothing to erase: no live key holds \(scope)", notFound: true)
        }
        try await sync()
        // 1. What the keys sealed.
        var read = try Self.readErased(scope, reason: reason, keys: keys, reader: reader, state: state)

        // The batch, its keys named later: the kept samples again, then the erasure
        // (more than one `erased` event when its lists do not fit one record).
        let recordedAt = writer.nextRecordedAt()
        let first = writer.nextSequence, offset = writer.encodedLength
        var batch = RecordBatch()
        for part in read.kept {
            EventCodec.append(.samplesSaved(app: part.app, samples: part.samples), to: &batch, sealedUnder: 0)
        }
        read.erasure = read.erasure.with(resealed: Array(first..<first + UInt64(batch.count)))
        let erasures = try read.erasure.split(samplesPerEvent: Self.erasedSamplesPerEvent, recordsPerEvent: Self.erasedRecordsPerEvent) {
            try state.samples.isLive(uuid: $0)
        }
        let sequence = first + UInt64(read.kept.count)
        for erasure in erasures {
            // What is written must read back: an erasure a reader refused would leave the
            // ledger unreadable once its keys are gone.
            let payload = EventCodec.payload(.erased(erasure))
            let decoded = payload.withUnsafeBytes { try? EventCodec.decode(kind: EventKind.erased.rawValue, version: erasure.kindVersion, payload: $0) }
            guard decoded == .erased(erasure) else {
                throw LedgerError.erasureRefused("the erasure would not read back as written (nothing was changed)", notFound: false)
            }
            EventCodec.append(.erased(erasure), to: &batch, sealedUnder: 0)
        }
        if let violation = batch.limitViolation { throw violation }

        // Dry run: the log folded as replay will fold it with this erasure, then the batch
        // checked against that: no rule may break once the keys are gone. The writer's
        // projections are dropped first (the two are never in memory together) and
        // become this fold when it passes.
        let planned = erasures.enumerated().map { k, e in
            ErasureIndex.Entry(sequence: sequence + UInt64(k), recordedAt: recordedAt, erasure: e)
        }
        let folded: LedgerState
        do {
            folded = try Self.foldPlanned(batch, kept: read.kept, planned: planned, reader: reader, first: first, offset: offset,
                                          recordedAt: recordedAt, state: &state)
        } catch let refusal as LedgerError {
            try reloadState()
            throw refusal
        }

        // 2. The keys the batch needs, then named in it.
        let erasureScope = KeyScope(source: .app(ordinal: 0), type: SealScopes.erasure, month: UTCMonth(containingNanoseconds: recordedAt))
        do {
            let newKeys = read.kept.isEmpty ? [:] : try ring.rotate(Set(read.kept.map(\.scope)))
            guard let erasureKey = try ring.keyIds(for: [erasureScope])[erasureScope] else { preconditionFailure("a key per scope asked") }
            for (k, part) in read.kept.enumerated() {
                guard let key = newKeys[part.scope] else { preconditionFailure("a new key per cut scope") }
                batch.setSealKey(ofRecord: k, to: key)
            }
            for k in read.kept.count..<batch.count { batch.setSealKey(ofRecord: k, to: erasureKey) }
        } catch {
            try reloadState()  // nothing was appended: the projections as the log holds them
            throw LedgerError.keyStore(error)
        }

        // 3. The batch, durable.
        let firstStart = UInt64(batch.recordStarts[0])
        let ticket = try enqueue(batch, recordedAt: recordedAt)
        do {
            try await writer.wait(for: ticket, durability: .durable)
        } catch {
            failure = error
            throw error
        }
        precondition(ticket.sequences.lowerBound == first && ticket.recordedAt == recordedAt
                     && ticket.recordOffsets.first == offset + firstStart, "the ledger is the log's only writer")
        state = folded
        let kept = read.kept.reduce(0) { $0 + $1.samples.count }
        func outcome(_ snapshot: String?) -> ErasureOutcome {
            ErasureOutcome(sequence: sequence, erasures: erasures, snapshot: snapshot, samplesKept: kept)
        }
        if stop == .afterAppend { return outcome(nil) }
        signalCommitted()

        // 4–6. Keys destroyed, snapshots removed, a snapshot of the projections written.
        // The erasure has happened: a failure here fails the ledger, and the next writer
        // finishes it (`finishErasures`).
        do {
            try Self.destroyKeys(keys.destroyed, ring: ring)
            if stop == .afterDestroy { return outcome(nil) }
            Self.removeSnapshots(fs)
            if stop == .afterSnapshotsRemoved { return outcome(nil) }
            return outcome(try await snapshot())
        } catch {
            if failure == nil { failure = error }
            throw error
        }
    }

    /// The dry run of an erasure: the log replayed from the start with `planned` known,
    /// then the batch's re-appended saves and `erased` events held to the rules and
    /// folded where the writer will put them (`first`, `offset`, `recordedAt`). `state`
    /// is emptied first. Returns the projections as a replay after the append gives them.
    /// - Throws: `LedgerError.erasureRefused` naming the rule the erasure would break.
    static func foldPlanned(_ batch: RecordBatch, kept: [(scope: KeyScope, app: AppOrdinal, samples: [SavedSample])],
                            planned: [ErasureIndex.Entry], reader: LogReader, first: UInt64, offset: UInt64, recordedAt: Int64,
                            state: inout LedgerState) throws -> LedgerState {
        state = LedgerState()
        var folded = LedgerState()
        do {
            _ = try Replayer.replay(reader, into: &folded, from: reader.start, limit: .end, decodeFully: false, progress: nil,
                                    onBatch: nil, beforeFold: nil, planned: planned)
        } catch let error as ReplayError {
            throw LedgerError.erasureRefused("the log would not replay with this erasure: \(error) (nothing was changed)", notFound: false)
        }
        var events: [(facts: EventFacts, kind: UInt16, resealed: Bool)] = kept.map {
            (EventFacts(.samplesSaved(app: $0.app, samples: $0.samples)), EventKind.samplesSaved.rawValue, true)
        }
        events += planned.map { (EventFacts.other(.erased($0.erasure)), EventKind.erased.rawValue, false) }
        for (k, e) in events.enumerated() {
            let sequence = first + UInt64(k)
            if let violation = LedgerRules.violation(e.facts, in: folded, resealed: e.resealed) {
                throw LedgerError.erasureRefused("event \(sequence) of the erasure would break a rule: \(violation) (nothing was changed)", notFound: false)
            }
            folded.apply(e.facts, kind: e.kind, sequence: sequence, recordedAt: recordedAt, offset: offset + UInt64(batch.recordStarts[k]))
        }
        return folded
    }

    /// The live keys an erasure destroys, and of those the ones whose month a range only
    /// cuts (what stays of them is saved again first).
    struct ErasedKeys {
        var destroyed: [UInt64] = []
        var cut: [UInt64: KeyScope] = [:]
    }

    /// Which keys `scope` destroys: every key of its source, import or type, but never
    /// a registration's (the app stays, and the grants and events that name it), an
    /// erasure's own, or the snapshot key (rotated by every erasure, `destroyKeys`). A
    /// range: the keys of its type whose month it touches.
    func erasedKeys(_ scope: Erasure.Scope, ring: LedgerKeyRing) throws -> ErasedKeys {
        let accepts: (KeyScope) -> Bool
        var range: (from: Date, to: Date)?
        switch scope {
        case .source(let bundle):
            guard let ordinal = state.registry.ordinal(of: bundle) else {
                throw LedgerError.erasureRefused("no app \(bundle) is registered", notFound: true)
            }
            accepts = { $0.source.kind != .importRun && $0.source.appOrdinal == UInt64(ordinal) }
        case .importRun(let id):
            // Any import the log holds, an aborted one too (its events were never
            // applied, but they are in the log, sealed under its keys).
            let bytes = SealScopes.uuidBytes(id)
            accepts = { $0.source.belongs(toImport: bytes) }
        case .type(let code):
            accepts = { $0.type == code }
        case .typeRange(let code, let from, let to):
            switch ObjectType(code: code) {
            case .quantity?, .category?, .correlation?: break
            default:
                throw LedgerError.erasureRefused("a range of days erases samples of a quantity, category or correlation type; "
                                                 + "erase a whole type otherwise", notFound: false)
            }
            guard from < to else { throw LedgerError.erasureRefused("the range ends before it starts", notFound: false) }
            guard ISO8601.isInRange(from), to <= ISO8601.validRange.upperBound else {
                throw LedgerError.erasureRefused("a range lies within \(ISO8601.validRangeText)", notFound: false)
            }
            range = (from, to)
            accepts = { $0.type == code && Self.month($0.month, overlaps: from, to) }
        case .all:
            accepts = { _ in true }
        }
        let live: [DataKey]
        do { live = try ring.liveKeys(where: { !SealScopes.survivesErasure(type: $0.type) && accepts($0) }) } catch {
            throw LedgerError.keyStore(error)
        }
        var keys = ErasedKeys()
        for key in live {
            keys.destroyed.append(key.id)
            if let range, !Self.month(key.scope.month, liesWithin: range.from, range.to) { keys.cut[key.id] = key.scope }
        }
        return keys
    }

    /// The first instant of `month` (UTC) and of the month after it, in the keys' own
    /// (proleptic Gregorian) calendar: Foundation's switches to Julian before 1582.
    static func bounds(of month: UTCMonth) -> (start: Date, end: Date) {
        func start(_ m: UTCMonth) -> Date { Date(timeIntervalSince1970: Double(m.firstDaySince1970) * 86_400) }
        return (start(month), start(UTCMonth(index: month.index &+ 1)))
    }

    static func month(_ month: UTCMonth, overlaps from: Date, _ to: Date) -> Bool {
        let b = bounds(of: month)
        return b.start < to && b.end > from
    }

    static func month(_ month: UTCMonth, liesWithin from: Date, _ to: Date) -> Bool {
        let b = bounds(of: month)
        return b.start >= from && b.end <= to
    }

    /// What step 1 read.
    struct ErasedRead {
        var erasure: Erasure
        /// The samples of cut months that stay, by the scope and app of the save that
        /// held them, in log order.
        var kept: [(scope: KeyScope, app: AppOrdinal, samples: [SavedSample])]
    }

    /// Step 1: reads every record the keys sealed (they are live), in log order: the
    /// samples' UUIDs (each once), the replacements of the records later rules still
    /// need, and — under a cut key — the live samples outside the range, which stay.
    static func readErased(_ scope: Erasure.Scope, reason: String, keys: ErasedKeys, reader: LogReader,
                           state: LedgerState) throws -> ErasedRead {
        let ids = Set(keys.destroyed)
        // Each UUID once in this erasure (a sample erased before and saved again since
        // is this erasure's too).
        var seen = Set<UUID>()
        var records: [UInt64] = []
        var samples: [UUID] = []
        var replacements: [ErasureReplacement] = []
        var kept: [(scope: KeyScope, app: AppOrdinal, samples: [SavedSample])] = []
        var keptAt: [KeyScope: [AppOrdinal: Int]] = [:]
        var keptUUIDs: [UUID] = []
        var headers: [SampleCodec.Header] = [], strings: [String] = []
        var range: (from: Date, to: Date)?
        if case .typeRange(_, let from, let to) = scope { range = (from, to) }
        try reader.forEachRecord { record in
            guard let id = record.sealedKeyId, ids.contains(id) else { return true }
            if let failure = record.sealFailure {
                throw LogError.sealedRecordUnopened(sequence: record.sequence, failure: failure)
            }
            records.append(record.sequence)
            if let cutScope = keys.cut[id], let range, record.kind == EventKind.samplesSaved.rawValue {
                // A month the range cuts: the live samples outside it stay.
                guard case .samplesSaved(let app, let saved) = try EventCodec.decode(record) else { return true }
                for s in saved {
                    let start = s.sample.startDate
                    var uuids: [UUID] = []
                    if case .samplesSaved(_, let hs, _) = EventFacts(.samplesSaved(app: app, samples: [s])) { uuids = hs.map(\.uuid) }
                    let live = try state.samples.slot(of: s.sample.uuid).map(state.samples.isLive) ?? false
                    if live && (start < range.from || start >= range.to) {
                        if keptAt[cutScope]?[app] == nil {
                            keptAt[cutScope, default: [:]][app] = kept.count
                            kept.append((cutScope, app, []))
                        }
                        // Still naming what it replaced, unless that is erased (then it
                        // was never folded): a predecessor outside the erasure is live
                        // until this sample comes again (E4).
                        let replaces = s.replaces.flatMap { seen.contains($0) || state.erasures.samples.contains($0) ? nil : $0 }
                        kept[keptAt[cutScope]![app]!].samples.append(SavedSample(s.sample, replaces: replaces))
                        keptUUIDs.append(s.sample.uuid)
                    } else {
                        for uuid in uuids where seen.insert(uuid).inserted { samples.append(uuid) }
                    }
                }
            } else if record.kind == EventKind.samplesSaved.rawValue {
                headers.removeAll(keepingCapacity: true)
                strings.removeAll(keepingCapacity: true)
                let version = record.kindVersion
                _ = try record.withPayload { (payload) throws(EventDecodingError) -> AppOrdinal in
                    try EventFacts.readSave(version: version, payload: payload, into: &headers, strings: &strings)
                }
                for h in headers where seen.insert(h.uuid).inserted { samples.append(h.uuid) }
            } else if ErasureReplacement.kinds.contains(record.kind) {
                let event = try EventCodec.decode(record)
                if let r = ErasureReplacement.of(event, sequence: record.sequence,
                                                 erased: { seen.contains($0) || state.erasures.samples.contains($0) }) {
                    replacements.append(r)
                }
            }
            return true
        }
        // In one pass over the index: how many are live, and what the change feed gave
        // of each (an anchor issued before the erasure is answered with these as
        // deletions; an export's unrecognized record has type code 0: no feed gives it).
        var live: UInt64 = 0
        var feedSlots: [ErasedFeedSlot?] = []
        feedSlots.reserveCapacity(samples.count)
        for uuid in samples {
            guard let slot = try state.samples.slot(of: uuid) else {
                feedSlots.append(nil)
                continue
            }
            let entry = state.samples.slots[Int(slot)]
            if state.samples.isLive(slot) { live += 1 }
            feedSlots.append(entry.typeCode == 0 ? nil : ErasedFeedSlot(typeCode: entry.typeCode, app: state.samples.app(slot),
                                                                       isMember: entry.state & SampleIndex.memberBit != 0))
        }
        // The workouts the staying samples were associated with (live ones: a deleted
        // workout's associations are not restored).
        var restored: [Erasure.RestoredAssociation] = []
        if !keptUUIDs.isEmpty {
            let staying = Set(keptUUIDs)
            for workout in state.associations.keys.sorted(by: { $0.uuidString < $1.uuidString }) {
                guard let slot = try state.samples.slot(of: workout), state.samples.isLive(slot) else { continue }
                let joined = state.associations[workout]!.filter(staying.contains)
                if !joined.isEmpty { restored.append(Erasure.RestoredAssociation(workout: workout, samples: joined)) }
            }
        }
        // Re-appended in records of at most `resealedSamplesPerRecord`.
        let parts = kept.flatMap { part in
            stride(from: 0, to: part.samples.count, by: resealedSamplesPerRecord).map { start in
                (part.scope, part.app, Array(part.samples[start..<min(start + resealedSamplesPerRecord, part.samples.count)]))
            }
        }
        return ErasedRead(erasure: Erasure(scope: scope, reason: reason, keyIds: keys.destroyed, records: records, samples: samples, liveAtErasure: live,
                                           replacements: replacements, restoredAssociations: restored, feedSlots: feedSlots),
                          kept: parts.map { (scope: $0.0, app: $0.1, samples: $0.2) })
    }

    /// Step 4: destroys `keyIds` and every snapshot key in one durable write (a new
    /// snapshot key is made when the next snapshot is written).
    static func destroyKeys(_ keyIds: [UInt64], ring: LedgerKeyRing) throws {
        do {
            let snapshotKeys = try ring.liveKeys(where: { $0 == SealedSnapshotFileSystem.scope }).map(\.id)
            try ring.destroy(ids: keyIds + snapshotKeys)
        } catch {
            throw LedgerError.keyStore(error)
        }
    }

    /// Step 5: removes the snapshot files written before the event `before` (nil:
    /// every one), and every one set aside as damaged: each was sealed under a destroyed
    /// key and holds what was erased.
    static func removeSnapshots(_ fs: any LogFileSystem, before: UInt64? = nil) {
        for file in fs.list(SnapshotFile.folder) where file.hasPrefix("snapshot-") {
            let digits = file.dropFirst("snapshot-".count).prefix { $0 != "." }
            let ending = UInt64(digits) ?? 0
            if let before, file.hasSuffix(".bin"), ending >= before { continue }
            try? fs.remove(SnapshotFile.folder + "/" + file)
        }
    }

    /// After a crash inside an erasure (its events durable, its keys or snapshots not
    /// yet gone): destroys the keys and removes the older snapshots, as the erasure would
    /// have. The projections need nothing: replay passes over what the event erased
    /// either way.
    ///
    /// A key store older than the log (restored from a backup taken before an
    /// erasure) would issue again the ids the erasure destroyed, and replay would pass
    /// over what is sealed under them: the store is made to issue none of them first.
    static func finishErasures(_ erasures: ErasureIndex, ring: LedgerKeyRing, fs: any LogFileSystem) throws {
        guard let last = erasures.entries.last, let highest = erasures.keyIds.max() else { return }
        do { try ring.issueIDs(through: highest) } catch { throw LedgerError.keyStore(error) }
        let pending = erasures.entries.flatMap(\.erasure.keyIds).filter { ring.isLive($0) }
        if !pending.isEmpty { try destroyKeys(pending, ring: ring) }
        removeSnapshots(fs, before: last.sequence)
    }
}
