import Foundation
import HealthModel
import LedgerLog

/// Every `erased` event of a log (issue 32), read before replay folds anything, and
/// how replay folds the log with them (DESIGN.md, "Keys and erasure"):
///
/// - a record sealed under an erased key is folded as its replacement, when the
///   erasure kept one, else passed over (`disposition`) — whether or not the key is
///   still in the store, so the same log always replays to the same projections
///   (a crash between appending the erasure and destroying its keys changes nothing);
/// - an event under a key still live that names erased samples (a deletion, an
///   association, a replacement by sync identity, a removal by a newer export) is
///   folded without them (`adjust`): they were never folded;
/// - a save a cut re-appended (`Erasure.resealed`) is folded where it stands, under
///   the rules but for the sharing permission (the owner re-appended it; the app held
///   the permission when it saved the sample);
/// - the `erased` event itself changes no projection (what it erased was never folded)
///   but for the workout associations of the re-appended samples, restored there (of
///   those live there: a later cut of the same month restores them again).
///
/// Not part of a state's `==`: every replay reads it afresh from the log.
///
/// Invariant: `keyIds` and `samples` are the unions of `entries`' erasures.
package struct ErasureIndex: Sendable, Equatable {
    /// One `erased` event.
    package struct Entry: Sendable, Hashable {
        package let sequence: UInt64
        package let recordedAt: Int64
        package let erasure: Erasure
    }

    package private(set) var entries: [Entry] = []
    /// Where `read` stopped looking: the log's end as it was before the key store was
    /// asked whether an erasure may exist. Replay folds nothing past it, so an erasure
    /// appended meanwhile (by a writer running beside a reader) is never met unread.
    package private(set) var readThrough: UInt64 = .max
    package private(set) var keyIds: Set<UInt64> = []
    package private(set) var samples: Set<UUID> = []
    private var replacements: [UInt64: Event] = [:]
    /// The records erasures listed (`Erasure.records`).
    private var records: Set<UInt64> = []
    /// Saves a cut re-appended (`Erasure.resealed`).
    private(set) var resealed: Set<UInt64> = []
    /// Samples whose workout associations a cut restores at its `erased` event.
    private var restored: Set<UUID> = []

    package init() {}

    package var isEmpty: Bool { entries.isEmpty }

    /// Any two compare equal (a state's `==` is over its projections).
    package static func == (a: ErasureIndex, b: ErasureIndex) -> Bool { true }

    /// Adds one `erased` event (read from the log, or about to be written: an erasure's
    /// dry run).
    mutating func add(_ erasure: Erasure, sequence: UInt64, recordedAt: Int64) {
        entries.append(Entry(sequence: sequence, recordedAt: recordedAt, erasure: erasure))
        keyIds.formUnion(erasure.keyIds)
        records.formUnion(erasure.records)
        samples.formUnion(erasure.samples)
        for r in erasure.replacements { replacements[r.sequence] = r.event }
        resealed.formUnion(erasure.resealed)
        for a in erasure.restoredAssociations { restored.formUnion(a.samples) }
    }

    /// The erasure that destroyed the key `keyId`, if one did.
    package func erasure(ofKey keyId: UInt64?) -> Entry? {
        guard let keyId, keyIds.contains(keyId) else { return nil }
        return entries.first { $0.erasure.keyIds.contains(keyId) }
    }

    /// How replay folds a record.
    package enum Disposition {
        /// As it is.
        case fold
        /// Passed over: its content is erased.
        case passOver
        /// As this event: its content erased, what later rules need kept.
        case replace(Event)
        /// Names an erased key but is no record an erasure listed: written after the
        /// erasure, or its key id rewritten by someone without the key (E16).
        case forged
    }

    /// How replay folds the record at `sequence`, sealed under `keyId` (nil: plain).
    package func disposition(keyId: UInt64?, sequence: UInt64) -> Disposition {
        guard let keyId, keyIds.contains(keyId) else { return .fold }
        guard records.contains(sequence) else { return .forged }
        if let event = replacements[sequence] { return .replace(event) }
        return .passOver
    }

    /// The event replay folds for `record`: its own, its replacement, or nil when it
    /// is passed over (for tools that read the log event by event: `diff`, the report's
    /// timeline).
    /// - Throws: the record's decoding error, or `forgery`.
    package func event(of record: borrowing RecordView, source: ((AppOrdinal) -> Source?)? = nil) throws(EventDecodingError) -> Event? {
        switch disposition(keyId: record.sealedKeyId, sequence: record.sequence) {
        case .fold: return try EventCodec.decode(record, source: source)
        case .passOver: return nil
        case .replace(let event): return event
        case .forged: throw Self.forgery
        }
    }

    /// The error replay names a forged record by.
    package static let forgery = EventDecodingError.malformed(offset: 0, reason: "sealed under a key an erasure destroyed, yet no record that erasure lists", rule: "E16")

    /// `event` without what it names that is erased, in `state` (nil: nothing of it is
    /// left to fold). Only events that name other objects change. An erased UUID saved
    /// again after its erasure (an export imported again) names that new sample. Throws
    /// S11 when the log does not give a restored sample's UUID a lookup needs.
    func adjust(_ event: Event, in state: borrowing LedgerState) throws(RuleViolation) -> Event? {
        func erased(_ uuid: UUID) throws(RuleViolation) -> Bool {
            guard samples.contains(uuid) else { return false }
            return try LedgerRules.slot(of: uuid, state) == nil
        }
        /// The objects not erased (`filter` rethrows untyped).
        func kept(_ objects: [DeletedObject]) throws(RuleViolation) -> [DeletedObject] {
            var out: [DeletedObject] = []
            for o in objects where try !erased(o.uuid) { out.append(o) }
            return out
        }
        switch event {
        case .samplesDeleted(let actor, let objects, let reason):
            let kept = try kept(objects)
            if kept.count == objects.count { return event }
            return kept.isEmpty ? nil : .samplesDeleted(actor: actor, objects: kept, reason: reason)
        case .samplesAssociated(let app, let workout, let uuids):
            if try erased(workout) { return nil }
            // A sample a cut re-appends is associated again when the erasure is folded.
            var kept: [UUID] = []
            for u in uuids {
                if try erased(u) { continue }
                if restored.contains(u), try LedgerRules.slot(of: u, state) == nil { continue }
                kept.append(u)
            }
            if kept.count == uuids.count { return event }
            return kept.isEmpty ? nil : .samplesAssociated(app: app, workout: workout, samples: kept)
        case .workoutActivitiesAdded(_, let workout, _):
            return try erased(workout) ? nil : event
        case .absentFromExport(let absence):
            // Days whose summary an erasure took are not removed again.
            let objects = try kept(absence.objects)
            let days = absence.days.filter { state.activitySummaries[LedgerState.dayKey($0)] != nil }
            if objects.count == absence.objects.count && days.count == absence.days.count { return event }
            return .absentFromExport(ExportAbsence(importId: absence.importId, exportDate: absence.exportDate,
                                                   objects: objects, days: days))
        default:
            return event
        }
    }

    /// `headers` without a replacement of an erased sample (it was never folded), or nil
    /// when none names one.
    func adjust(_ headers: ArraySlice<SampleCodec.Header>, in state: borrowing LedgerState) throws(RuleViolation) -> [SampleCodec.Header]? {
        func erased(_ uuid: UUID) throws(RuleViolation) -> Bool {
            guard samples.contains(uuid) else { return false }
            return try LedgerRules.slot(of: uuid, state) == nil
        }
        var out: [SampleCodec.Header]?
        for (i, h) in headers.enumerated() {
            guard let r = h.replaces, try erased(r) else { continue }
            if out == nil { out = Array(headers) }
            out![i].replaces = nil
        }
        return out
    }

    /// The `erased` events of the log `reader` reads, in order. Empty at once for a plain
    /// log, or a sealed one whose key store has no erasure key (none was ever written,
    /// Y5). Otherwise one pass over the log's framing without opening anything, then the
    /// `erased` records found opened and decoded.
    /// - Throws: the log's damage (`LogError`); `ReplayError.undecodable` for an `erased`
    ///   record that does not open or decode.
    ///
    /// `known`, read before up to `position` (a reader following the log, whose last
    /// replay ended where that read did): only the log after it is looked at.
    package static func read(_ reader: LogReader, continuing known: ErasureIndex? = nil,
                             from position: LogReader.Position? = nil) throws -> ErasureIndex {
        guard reader.header.allowsSealedRecords, let ring = reader.opening.keys as? LedgerKeyRing else { return ErasureIndex() }
        // The end first, then the key store: an erasure key is made before its `erased`
        // record is appended, so none can lie before this end unless the key is seen.
        let continues = known != nil && position != nil && known!.readThrough == position!.offset
        var index = continues ? known! : ErasureIndex()
        let size = try reader.size()
        guard ring.mayHoldErasures else {
            index.readThrough = size
            return index
        }
        var found: [(sequence: UInt64, offset: UInt64)] = []
        let bare = try reader.unopened()
        let end = try bare.forEachBatch(position: continues ? position! : bare.start) { batch in
            batch.forEachRecord { record in
                if record.kind == EventKind.erased.rawValue { found.append((record.sequence, record.offset)) }
            }
            return true
        }
        index.readThrough = end.endOffset
        for (sequence, offset) in found {
            let stored = try reader.record(atOffset: offset)
            do throws(EventDecodingError) {
                try SealScopes.requireSealed(kind: stored.kind, inSealedLog: true, sealed: stored.sealedKeyId != nil)
                guard case .erased(let erasure) = try EventCodec.decode(stored) else {
                    preconditionFailure("an erased record decodes as an erasure")
                }
                index.add(erasure, sequence: sequence, recordedAt: stored.recordedAt)
            } catch {
                throw ReplayError.undecodable(sequence: sequence, offset: offset, error)
            }
        }
        return index
    }
}
