import Foundation
import HealthModel

/// An erasure (event kind 27, `erased`; issue 32): the owner destroyed the data keys
/// of a scope, so every record they sealed is unreadable from then on, in every copy.
///
/// It carries no health values or times: which scope, why, the destroyed key ids, the
/// UUIDs of the samples those keys sealed (random identifiers: later events may still
/// name them, and `audit` answers for them) with, since version 2, each one's type and
/// app (what the change feed had given), and — for the few records under those keys that later
/// rules still need — a *replacement*: the record's event with the erased content taken
/// out (`ErasureReplacement`). Written sealed under a key of its own (type 0xFFFC) that
/// no erasure destroys, so that only the key holder can write one and it stays readable.
///
/// Replay (`ErasureIndex`) reads every erasure of the log before it folds anything, and
/// folds each record under an erased key as its replacement, or as passed over: the
/// same log replays to the same projections whether or not the keys are still on disk.
///
/// Invariants: `keyIds` ascending, no duplicates, not empty; `samples` without
/// duplicates; replacements in ascending sequence, each of a kind `ErasureReplacement`
/// allows.
package struct Erasure: Hashable, Sendable {
    /// What the owner asked to erase.
    package enum Scope: Hashable, Sendable, CustomStringConvertible {
        /// Every record an app saved, itself or as brought by any import (by bundle id).
        case source(bundleIdentifier: String)
        /// Everything one import brought.
        case importRun(UUID)
        /// Every record of one type (its type code).
        case type(code: UInt16)
        /// The samples of one type whose start lies in [from, to).
        case typeRange(code: UInt16, from: Date, to: Date)
        /// Every health record of the person.
        case all

        package var description: String {
            func name(_ code: UInt16) -> String { ObjectType(code: code).map { "\($0)" } ?? "code \(code)" }
            switch self {
            case .source(let b): return "source \(b)"
            case .importRun(let id): return "import \(id.uuidString.lowercased())"
            case .type(let code): return "type \(name(code))"
            case .typeRange(let code, let from, let to):
                return "type \(name(code)) from \(ISO8601.string(from)) to \(ISO8601.string(to))"
            case .all: return "everything"
            }
        }
    }

    /// Samples a cut re-appended, as the workout associations they were in (restored
    /// when the erasure is folded: the re-appended samples come after the associations).
    package struct RestoredAssociation: Hashable, Sendable {
        package let workout: UUID
        package let samples: [UUID]

        package init(workout: UUID, samples: [UUID]) {
            self.workout = workout
            self.samples = samples
        }
    }

    package let scope: Scope
    /// Why, in the owner's words.
    package let reason: String
    /// The data keys destroyed, ascending.
    package let keyIds: [UInt64]
    /// The sequence numbers of the records those keys sealed, ascending: exactly what
    /// replay passes over (or replaces). A record naming one of the keys that is not
    /// listed — written after the erasure, or its key id rewritten by someone without
    /// the key — is a forgery (E16).
    package let records: [UInt64]
    /// Every sample (correlation members and workouts included) a destroyed key sealed,
    /// live at the erasure or deleted before it, in log order.
    package let samples: [UUID]
    /// How many of `samples` were live when erased.
    package let liveAtErasure: UInt64
    /// The records under the destroyed keys that later rules still need, with the
    /// erased content taken out, by sequence number (ascending).
    package let replacements: [ErasureReplacement]
    /// A range cutting a key's month (`typeRange`): the sequence numbers of the saves,
    /// in the erasure's own batch, that hold again — under new keys of the same scopes,
    /// same UUIDs — the samples of the cut months that stay (ascending).
    package let resealed: [UInt64]
    /// The workout associations of those samples.
    package let restoredAssociations: [RestoredAssociation]
    /// What the change feed had given of each of `samples`, by position: its type and
    /// the app that saved it, or nil for one never folded (an aborted import's). The
    /// feed answers an anchor issued before the erasure with these as deletions.
    /// Written from version 2 of the kind on; nil in a version 1 event.
    package let feedSlots: [ErasedFeedSlot?]?

    package init(scope: Scope, reason: String, keyIds: [UInt64], records: [UInt64] = [], samples: [UUID], liveAtErasure: UInt64,
                 replacements: [ErasureReplacement], resealed: [UInt64] = [], restoredAssociations: [RestoredAssociation] = [],
                 feedSlots: [ErasedFeedSlot?]?) {
        precondition(!keyIds.isEmpty && zip(keyIds, keyIds.dropFirst()).allSatisfy { $0 < $1 },
                     "an erasure's key ids are ascending and not empty")
        precondition(zip(records, records.dropFirst()).allSatisfy { $0 < $1 }, "an erasure's records ascend")
        precondition(feedSlots.map { $0.count == samples.count } ?? true, "a feed slot per erased sample")
        self.feedSlots = feedSlots
        self.scope = scope
        self.reason = reason
        self.keyIds = keyIds
        self.records = records
        self.samples = samples
        self.liveAtErasure = liveAtErasure
        self.replacements = replacements
        self.resealed = resealed
        self.restoredAssociations = restoredAssociations
    }

    /// The longest reason accepted, in bytes.
    package static let reasonBytesMax = 1_000

    /// Why `reason` is refused, or nil: 1 to 1,000 bytes of one line (no control
    /// character: a line feed would forge lines in `log`'s text).
    package static func problem(withReason reason: String) -> String? {
        guard !reason.trimmingCharacters(in: .whitespaces).isEmpty, reason.utf8.count <= reasonBytesMax else {
            return "an erasure's reason has 1 to \(reasonBytesMax) bytes"
        }
        guard !reason.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (0x80..<0xA0).contains($0.value) }) else {
            return "an erasure's reason is one line without control characters"
        }
        return nil
    }

    /// This erasure with the sequence numbers of its re-appended saves.
    func with(resealed: [UInt64]) -> Erasure {
        Erasure(scope: scope, reason: reason, keyIds: keyIds, records: records, samples: samples, liveAtErasure: liveAtErasure,
                replacements: replacements, resealed: resealed, restoredAssociations: restoredAssociations, feedSlots: feedSlots)
    }

    /// The version of kind 27 this erasure is written in: 2 with `feedSlots`, else 1.
    var kindVersion: UInt16 { feedSlots == nil ? 1 : 2 }

    /// This erasure as events of at most `samplesPerEvent` UUIDs each (a record holds at
    /// most 16 MiB): the first carries everything else, the others the same scope,
    /// reason and keys with the rest of the UUIDs; `isLive` counts each one's live samples.
    func split(samplesPerEvent: Int, recordsPerEvent: Int = .max, isLive: (UUID) throws -> Bool) rethrows -> [Erasure] {
        guard samples.count > samplesPerEvent || records.count > recordsPerEvent else { return [self] }
        let parts = max((samples.count + samplesPerEvent - 1) / samplesPerEvent, (records.count + recordsPerEvent - 1) / recordsPerEvent)
        /// Part `k` of `array` in parts of `size` (no overflow for a size of `.max`).
        func part<T>(_ array: [T], _ k: Int, _ size: Int) -> [T] {
            guard size < array.count else { return k == 0 ? array : [] }
            return Array(array[min(k * size, array.count)..<min((k + 1) * size, array.count)])
        }
        return try (0..<parts).map { k in
            let uuids = part(samples, k, samplesPerEvent)
            let slots = feedSlots.map { part($0, k, samplesPerEvent) }
            let listed = part(records, k, recordsPerEvent)
            let live = UInt64(try uuids.reduce(0) { $0 + (try isLive($1) ? 1 : 0) })
            return k == 0
                ? Erasure(scope: scope, reason: reason, keyIds: keyIds, records: listed, samples: uuids, liveAtErasure: live,
                          replacements: replacements, resealed: resealed, restoredAssociations: restoredAssociations, feedSlots: slots)
                : Erasure(scope: scope, reason: reason, keyIds: keyIds, records: listed, samples: uuids, liveAtErasure: live,
                          replacements: [], feedSlots: slots)
        }
    }
}

/// How the change feed had given an erased sample: its type and the app that saved it
/// (an index slot's, when the erasure was made).
package struct ErasedFeedSlot: Hashable, Sendable {
    package let typeCode: UInt16
    package let app: AppOrdinal
    /// A correlation's member (it follows its correlation in `Erasure.samples`): an app
    /// reading another app's correlation was given it when a member's type was readable.
    package let isMember: Bool

    package init(typeCode: UInt16, app: AppOrdinal, isMember: Bool = false) {
        precondition(typeCode != 0, "type code 0 names no type (it marks a sample never folded)")
        self.typeCode = typeCode
        self.app = app
        self.isMember = isMember
    }
}

/// A record under an erased key, as replay folds it instead: its event without the
/// erased content.
///
/// - `importStarted`: the import's id and form (replay needs them to bracket the
///   import, rule E11) — the export's `<Me>`, dates, locale and file name are erased;
/// - `samplesDeleted` and `absentFromExport`: what they removed that is not erased
///   (deleting it again would otherwise be lost), without the erased objects.
package struct ErasureReplacement: Hashable, Sendable {
    package let sequence: UInt64
    package let event: Event

    /// The kinds a replacement may be.
    package static let kinds: Set<UInt16> = [
        EventKind.importStarted.rawValue, EventKind.samplesDeleted.rawValue, EventKind.absentFromExport.rawValue,
    ]

    package init(sequence: UInt64, event: Event) {
        precondition(Self.kinds.contains(event.kind.rawValue), "a replacement is of a kind replay needs")
        self.sequence = sequence
        self.event = event
    }

    /// The replacement of `event` (a record under an erased key at `sequence`), or nil
    /// when nothing of it is needed. `erased`: every sample UUID erased so far.
    package static func of(_ event: Event, sequence: UInt64, erased: (UUID) -> Bool) -> ErasureReplacement? {
        switch event {
        case .importStarted(let start):
            let kept = start.isTransaction
                ? ExportImportStart(importId: start.importId, exportDate: nil, locale: nil, exportVersion: nil,
                                    sourcePath: "(erased)", me: [])
                : ExportImportStart(importId: start.importId, contentSHA256: start.contentSHA256 ?? [],
                                    exportDate: nil, locale: nil, exportVersion: nil, sourcePath: "(erased)",
                                    again: start.again, me: [])
            return ErasureReplacement(sequence: sequence, event: .importStarted(kept))
        case .samplesDeleted(let actor, let objects, _):
            let kept = objects.filter { !erased($0.uuid) }
            guard !kept.isEmpty else { return nil }
            return ErasureReplacement(sequence: sequence, event: .samplesDeleted(actor: actor, objects: kept, reason: nil))
        case .absentFromExport(let absence):
            let kept = absence.objects.filter { !erased($0.uuid) }
            return ErasureReplacement(sequence: sequence, event: .absentFromExport(ExportAbsence(
                importId: absence.importId, exportDate: nil, objects: kept, days: absence.days)))
        default:
            return nil
        }
    }
}

extension EventCodec {
    /// `erased`'s payload after the actor (events/FORMAT.md, kind 27).
    static func encodeErasure(_ e: Erasure, into w: inout ByteWriter) {
        switch e.scope {
        case .source(let bundle):
            w.u8(1)
            w.string(bundle)
        case .importRun(let id):
            w.u8(2)
            w.uuid(id)
        case .type(let code):
            w.u8(3)
            w.u16(code)
        case .all:
            w.u8(4)
        case .typeRange(let code, let from, let to):
            w.u8(5)
            w.u16(code)
            w.date(from)
            w.date(to)
        }
        w.string(e.reason)
        w.varint(e.keyIds.count)
        for id in e.keyIds { w.varint(id) }
        w.varint(e.records.count)
        var previous: UInt64 = 0
        for sequence in e.records {
            w.varint(sequence - previous)  // deltas: a few bytes per record
            previous = sequence
        }
        w.varint(e.samples.count)
        for u in e.samples { w.uuid(u) }
        w.varint(e.liveAtErasure)
        w.varint(e.replacements.count)
        for r in e.replacements {
            w.varint(r.sequence)
            w.u16(r.event.kind.rawValue)
            w.u16(r.event.kindVersion)
            w.lengthPrefixed { encodePayload(r.event, into: &$0) }
        }
        w.varint(e.resealed.count)
        for sequence in e.resealed { w.varint(sequence) }
        w.varint(e.restoredAssociations.count)
        for a in e.restoredAssociations {
            w.uuid(a.workout)
            w.varint(a.samples.count)
            for u in a.samples { w.uuid(u) }
        }
        if let slots = e.feedSlots {  // version 2
            for slot in slots {
                w.u16(slot?.typeCode ?? 0)
                w.varint(slot.map { UInt64($0.app) << 1 | ($0.isMember ? 1 : 0) } ?? 0)
            }
        }
    }

    static func decodeErasure(_ r: inout ByteReader, version: UInt16) throws(EventDecodingError) -> Erasure {
        let at = r.absolutePosition
        let scope: Erasure.Scope
        switch try r.u8() {
        case 1: scope = .source(bundleIdentifier: try r.string())
        case 2: scope = .importRun(try r.uuid())
        case 3: scope = .type(code: try r.u16())
        case 4: scope = .all
        case 5:
            let code = try r.u16()
            let from = try r.date()
            // The end is excluded: it may be the end of the valid range itself (D1).
            let to = Date(timeIntervalSinceReferenceDate: try r.finite())
            guard from < to, to <= ISO8601.validRange.upperBound else {
                throw .malformed(offset: at, reason: "an erased range ends after it starts, by \(ISO8601.validRangeText) at the latest", rule: "D1")
            }
            scope = .typeRange(code: code, from: from, to: to)
        default: throw .malformed(offset: at, reason: "unknown erasure scope")
        }
        let reasonAt = r.absolutePosition
        let reason = try r.string()
        if let problem = Erasure.problem(withReason: reason) { throw .malformed(offset: reasonAt, reason: problem) }
        let idsAt = r.absolutePosition
        let keyCount = try r.count(limit: r.remaining)
        var keyIds: [UInt64] = []
        keyIds.reserveCapacity(keyCount)
        for _ in 0..<keyCount {
            let id = try r.varint()
            guard id > (keyIds.last ?? 0) else { throw .malformed(offset: idsAt, reason: "an erasure's key ids ascend from 1") }
            keyIds.append(id)
        }
        guard !keyIds.isEmpty else { throw .malformed(offset: idsAt, reason: "an erasure destroys at least one key") }
        let recordsAt = r.absolutePosition
        let recordCount = try r.count(limit: r.remaining)
        var records: [UInt64] = []
        records.reserveCapacity(recordCount)
        for _ in 0..<recordCount {
            let (sum, overflow) = (records.last ?? 0).addingReportingOverflow(try r.varint())
            guard !overflow, sum > (records.last ?? 0) else {
                throw .malformed(offset: recordsAt, reason: "an erasure's records ascend from 1")
            }
            records.append(sum)
        }
        let sampleCount = try r.count(limit: r.remaining / 16)
        var samples: [UUID] = []
        samples.reserveCapacity(sampleCount)
        for _ in 0..<sampleCount { samples.append(try r.uuid()) }
        let liveAt = r.absolutePosition
        let live = try r.varint()
        guard live <= UInt64(sampleCount) else {
            throw .malformed(offset: liveAt, reason: "\(live) live of \(sampleCount) erased samples")
        }
        let replacementCount = try r.count(limit: r.remaining)
        var replacements: [ErasureReplacement] = []
        for _ in 0..<replacementCount {
            let seqAt = r.absolutePosition
            let sequence = try r.varint()
            guard sequence > (replacements.last?.sequence ?? 0) else {
                throw .malformed(offset: seqAt, reason: "an erasure's replacements ascend by sequence")
            }
            let kind = try r.u16(), version = try r.u16()
            guard ErasureReplacement.kinds.contains(kind) else {
                throw .malformed(offset: seqAt, reason: "a replacement of kind \(kind) (only importStarted, samplesDeleted, absentFromExport)")
            }
            let (payload, _) = try r.stringBytes()
            let event = try decode(kind: kind, version: version, payload: payload)
            replacements.append(ErasureReplacement(sequence: sequence, event: event))
        }
        let resealedAt = r.absolutePosition
        let resealedCount = try r.count(limit: r.remaining)
        var resealed: [UInt64] = []
        for _ in 0..<resealedCount {
            let sequence = try r.varint()
            guard sequence > (resealed.last ?? 0) else {
                throw .malformed(offset: resealedAt, reason: "an erasure's re-appended saves ascend by sequence")
            }
            resealed.append(sequence)
        }
        let associationCount = try r.count(limit: r.remaining / 17)
        var restored: [Erasure.RestoredAssociation] = []
        for _ in 0..<associationCount {
            let workout = try r.uuid()
            let n = try r.count(limit: r.remaining / 16)
            var uuids: [UUID] = []
            uuids.reserveCapacity(n)
            for _ in 0..<n { uuids.append(try r.uuid()) }
            restored.append(Erasure.RestoredAssociation(workout: workout, samples: uuids))
        }
        var feedSlots: [ErasedFeedSlot?]?
        if version >= 2 {
            var slots: [ErasedFeedSlot?] = []
            slots.reserveCapacity(sampleCount)
            for _ in 0..<sampleCount {
                let at = r.absolutePosition
                let code = try r.u16()
                let word = try r.varint()
                if code == 0 {
                    guard word == 0 else { throw .malformed(offset: at, reason: "an erased sample never folded names no app") }
                    slots.append(nil)
                    continue
                }
                guard let type = ObjectType(code: code), type.isSampleType else {
                    throw .malformed(offset: at, reason: "an erased sample's type code \(code) is no sample type's")
                }
                let app = word >> 1
                guard app <= UInt64(AppOrdinal.max) else { throw .malformed(offset: at, reason: "app ordinal \(app) out of range") }
                slots.append(ErasedFeedSlot(typeCode: type.code, app: AppOrdinal(app), isMember: word & 1 == 1))
            }
            feedSlots = slots
        }
        return Erasure(scope: scope, reason: reason, keyIds: keyIds, records: records, samples: samples, liveAtErasure: live,
                       replacements: replacements, resealed: resealed, restoredAssociations: restored, feedSlots: feedSlots)
    }
}
