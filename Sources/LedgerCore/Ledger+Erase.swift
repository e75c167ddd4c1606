import Foundation
import HealthModel
import LedgerKeys
import LedgerLog

/// Erasure by destroying keys (issue 32; DESIGN.md, "Keys and erasure").
///
/// The order, each step durable before the next, so that `kill -9` anywhere leaves the
/// ledger before the erasure or after it:
/// 1. read what the scope's keys sealed (the keys are live): the samples' UUIDs and the
///    replacements later rules need (`ErasureReplacement`);
/// 2. append the `erased` event, sealed under an erasure key, durable. From here on
///    every replay passes over what those keys sealed, whether or not they still exist:
///    the erasure has happened. Not folded: the projections are rebuilt (step 5);
/// 3. destroy the keys and the snapshot key, in one durable key-store write;
/// 4. remove every snapshot (sealed under the destroyed snapshot key);
/// 5. rebuild the projections from the log and write a snapshot under a new key.
/// A writer that opens the ledger after a crash between 2 and 4 finishes 3 and 4
/// (`finishErasures`) before anything else.
extension Ledger {
    /// What an erasure did.
    package struct ErasureOutcome: Sendable {
        /// The `erased` event's sequence number.
        package let sequence: UInt64
        package let erasure: Erasure
        /// The snapshot written afterwards (nil when stopped before, in tests).
        package let snapshot: String?
    }

    /// A step after which a test stops an erasure, as `kill -9` would (what is on disk
    /// stays; nothing else of the erasure runs). The caller then abandons the ledger.
    package enum ErasureStop: Sendable {
        case afterAppend, afterDestroy, afterSnapshotsRemoved
    }

    /// Erases `scope`: appends an `erased` event, destroys the keys that sealed it, and
    /// rebuilds every snapshot (the owner's act; the store API has no door to it).
    /// - Throws: `LedgerError.erasureRefused` (nothing changed: a plain ledger, an
    ///   unknown source, import or type, nothing to erase, a reason empty or too long);
    ///   `LedgerError.keyStore`; the log's errors.
    package func erase(_ scope: Erasure.Scope, reason: String, stoppingAfter stop: ErasureStop? = nil) async throws
        -> ErasureOutcome {
        await admit()
        if let failure { throw LedgerError.failed(cause: failure) }
        guard let ring = keyRing else {
            throw LedgerError.erasureRefused("the ledger is not encrypted: erasure destroys keys, and a plain ledger has none (copy it into an encrypted one with init --encrypt and copy)", notFound: false)
        }
        guard !reason.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, reason.utf8.count <= Erasure.reasonBytesMax else {
            throw LedgerError.erasureRefused("an erasure's reason has 1 to \(Erasure.reasonBytesMax) bytes", notFound: false)
        }
        let accepts = try erasedScopes(scope)
        let keyIds: [UInt64]
        do { keyIds = try ring.liveKeys(where: accepts).map(\.id) } catch { throw LedgerError.keyStore(error) }
        guard !keyIds.isEmpty else {
            throw LedgerError.erasureRefused("nothing to erase: no live key holds \(scope)", notFound: true)
        }
        try await sync()
        let erasure = try Self.readErased(scope, reason: reason, keyIds: keyIds, reader: reader, state: state)

        // 2. The event, durable.
        let recordedAt = writer.nextRecordedAt()
        guard let erasureScope = SealScopes.scope(of: .erased(erasure), recordedAt: recordedAt, importId: nil) else {
            preconditionFailure("an erasure is sealed")
        }
        let erasureKey: UInt64
        do {
            guard let id = try ring.keyIds(for: [erasureScope])[erasureScope] else { preconditionFailure("a key per scope asked") }
            erasureKey = id
        } catch {
            throw LedgerError.keyStore(error)
        }
        var batch = RecordBatch()
        EventCodec.append(.erased(erasure), to: &batch, sealedUnder: erasureKey)
        let ticket = try enqueue(batch, recordedAt: recordedAt)
        do {
            try await writer.wait(for: ticket, durability: .durable)
        } catch {
            failure = error
            throw error
        }
        let sequence = ticket.sequences.lowerBound
        if stop == .afterAppend { return ErasureOutcome(sequence: sequence, erasure: erasure, snapshot: nil) }

        // 3–4. Keys destroyed, snapshots removed.
        try Self.destroyKeys(keyIds, ring: ring)
        if stop == .afterDestroy { return ErasureOutcome(sequence: sequence, erasure: erasure, snapshot: nil) }
        Self.removeSnapshots(fs)
        if stop == .afterSnapshotsRemoved { return ErasureOutcome(sequence: sequence, erasure: erasure, snapshot: nil) }

        // 5. The projections rebuilt without what was erased, and a snapshot of them.
        try reloadState()
        signalCommitted()
        let name = try await snapshot()
        return ErasureOutcome(sequence: sequence, erasure: erasure, snapshot: name)
    }

    /// Which keys `scope` destroys: every key of its source, import or type, but never
    /// a registration's (the app stays, and the grants and events that name it), an
    /// erasure's own, or the snapshot key (rotated by every erasure, `destroyKeys`).
    func erasedScopes(_ scope: Erasure.Scope) throws -> (KeyScope) -> Bool {
        switch scope {
        case .source(let bundle):
            guard let ordinal = state.registry.ordinal(of: bundle) else {
                throw LedgerError.erasureRefused("no app \(bundle) is registered", notFound: true)
            }
            return { !SealScopes.survivesErasure(type: $0.type) && $0.source.kind != .importRun && $0.source.appOrdinal == UInt64(ordinal) }
        case .importRun(let id):
            guard state.imports.contains(where: { $0.start.importId == id }) else {
                throw LedgerError.erasureRefused("no import \(id.uuidString.lowercased()) is in the ledger", notFound: true)
            }
            let bytes = SealScopes.uuidBytes(id)
            return { !SealScopes.survivesErasure(type: $0.type) && $0.source.belongs(toImport: bytes) }
        case .type(let code):
            return { $0.type == code && !SealScopes.survivesErasure(type: $0.type) }
        case .all:
            return { !SealScopes.survivesErasure(type: $0.type) }
        }
    }

    /// Step 1: reads every record the keys `keyIds` sealed (they are live), in log
    /// order: the samples' UUIDs (each once), and the replacements of the records later
    /// rules still need.
    static func readErased(_ scope: Erasure.Scope, reason: String, keyIds: [UInt64], reader: LogReader,
                           state: LedgerState) throws -> Erasure {
        let ids = Set(keyIds)
        var seen = state.erasures.samples
        var samples: [UUID] = []
        var replacements: [ErasureReplacement] = []
        var headers: [SampleCodec.Header] = [], strings: [String] = []
        try reader.forEachRecord { record in
            guard let id = record.sealedKeyId, ids.contains(id) else { return true }
            if let failure = record.sealFailure {
                throw LogError.sealedRecordUnopened(sequence: record.sequence, failure: failure)
            }
            if record.kind == EventKind.samplesSaved.rawValue {
                headers.removeAll(keepingCapacity: true)
                strings.removeAll(keepingCapacity: true)
                let version = record.kindVersion
                _ = try record.withPayload { (payload) throws(EventDecodingError) -> AppOrdinal in
                    try EventFacts.readSave(version: version, payload: payload, into: &headers, strings: &strings)
                }
                for h in headers where seen.insert(h.uuid).inserted { samples.append(h.uuid) }
            } else if ErasureReplacement.kinds.contains(record.kind) {
                let event = try EventCodec.decode(record)
                if let r = ErasureReplacement.of(event, sequence: record.sequence, erased: seen) { replacements.append(r) }
            }
            return true
        }
        let live = samples.reduce(into: UInt64(0)) { n, uuid in
            if let slot = state.samples.slot(of: uuid), state.samples.isLive(slot) { n += 1 }
        }
        return Erasure(scope: scope, reason: reason, keyIds: keyIds, samples: samples, liveAtErasure: live,
                       replacements: replacements)
    }

    /// Step 3: destroys `keyIds` and every snapshot key in one durable write (a new
    /// snapshot key is made when the next snapshot is written).
    static func destroyKeys(_ keyIds: [UInt64], ring: LedgerKeyRing) throws {
        do {
            let snapshotKeys = try ring.liveKeys(where: { $0 == SealedSnapshotFileSystem.scope }).map(\.id)
            try ring.destroy(ids: keyIds + snapshotKeys)
        } catch {
            throw LedgerError.keyStore(error)
        }
    }

    /// Step 4: removes the snapshot files written before the event `before` (nil:
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

    /// After a crash inside an erasure (its event durable, its keys or snapshots not yet
    /// gone): destroys the keys and removes the snapshots, as the erasure would have.
    /// The projections need nothing: replay passes over what the event erased either way.
    static func finishErasures(_ erasures: ErasureIndex, ring: LedgerKeyRing, fs: any LogFileSystem) throws {
        guard let last = erasures.entries.last else { return }
        let pending = erasures.entries.flatMap(\.erasure.keyIds).filter { ring.isLive($0) }
        if !pending.isEmpty { try destroyKeys(pending, ring: ring) }
        removeSnapshots(fs, before: last.sequence)
    }
}
