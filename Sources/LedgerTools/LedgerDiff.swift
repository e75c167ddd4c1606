import Foundation
import HealthModel
import LedgerCore
import LedgerLog

/// A point of a ledger's history to compare: after an event, after an import, or at
/// an instant.
package enum DiffPoint: Sendable, Equatable, CustomStringConvertible {
    /// The state after event N (`@N`).
    case sequence(UInt64)
    /// The state after the import with this ID finished (or was aborted) (`import:ID`).
    case importID(UUID)
    /// The state at this instant (ISO 8601).
    case instant(Date)

    package var description: String {
        switch self {
        case .sequence(let n): "@\(n)"
        case .importID(let id): "import:\(id.uuidString)"
        case .instant(let d): ISO8601.string(d)
        }
    }
}

/// How `diff` paired a removed sample with an added one.
package enum DiffMatch: String, Sendable {
    /// The same sync identifier (HKMetadataKeySyncIdentifier) from the same source: a new version.
    case syncIdentity
    /// The same type, source, start and end with another value or metadata.
    case sameTypeSourceAndDates
}

/// One difference between two points.
package enum SampleChange: Sendable {
    case added(Sample)
    /// With why, where the log says (a deletion's reason: "absent from the export dated D").
    case removed(Sample, reason: String?)
    case changed(before: Sample, after: Sample, by: DiffMatch)

    package var type: String {
        switch self {
        case .added(let s), .removed(let s, _), .changed(_, let s, _): s.type.rawValue
        }
    }
}

/// What changed from one point to another.
package struct LedgerDifference: Sendable {
    /// The points' sequences (the last event each had folded).
    package let from: UInt64
    package let to: UInt64
    /// Removed first, then changed, then added; each in the log's order.
    package let changes: [SampleChange]
}

/// An import ID that names no import of this ledger.
package struct UnknownImport: Error, Sendable, CustomStringConvertible {
    package let id: UUID
    package var description: String { "importNotFound: no import \(id.uuidString) in this ledger" }
}

extension ReadSession {
    /// Every sample added, removed and changed going from `a` to `b` (the owner's view;
    /// `types` only when given). A removed and an added sample are one change when they
    /// share a sync identity and source, or type, source, start and end.
    package func diff(_ a: DiffPoint, _ b: DiffPoint, types: Set<ObjectType>?, progress: ((ReplayProgress) -> Void)? = nil) throws -> LedgerDifference {
        var first = try view(as: .owner, limit: limit(a), progress: progress)
        var second = try view(as: .owner, limit: limit(b), progress: progress)
        let codes = types.map { Set($0.map(\.code)) }
        let forward = first.lastSequence <= second.lastSequence
        let raw: (added: [Sample], removed: [Sample])
        if forward {
            raw = try second.difference(from: &first, types: codes)
        } else {
            // Going back in time: what the later point added is removed, and the reverse.
            let later = try first.difference(from: &second, types: codes)
            raw = (later.removed, later.added)
        }
        let reasons = forward ? try deletionReasons(after: first.lastSequence, through: second.lastSequence) : [:]
        return LedgerDifference(from: first.lastSequence, to: second.lastSequence,
                                changes: Self.pair(added: raw.added, removed: raw.removed, reasons: reasons))
    }

    /// Pairs removed and added samples into changes: by sync identity first, then by
    /// type, source and dates; the rest stay added or removed.
    static func pair(added: [Sample], removed: [Sample], reasons: [UUID: String]) -> [SampleChange] {
        struct DatesKey: Hashable { let type: TypeIdentifier; let source: String?; let start: Date; let end: Date }
        struct SyncKey: Hashable { let source: String?; let identifier: String }
        func sync(_ s: Sample) -> SyncKey? {
            guard let identity = try? s.common.metadata.syncIdentity() else { return nil }
            return SyncKey(source: s.common.source?.bundleIdentifier, identifier: identity.identifier)
        }
        func dates(_ s: Sample) -> DatesKey {
            DatesKey(type: s.type, source: s.common.source?.bundleIdentifier, start: s.startDate, end: s.endDate)
        }
        var bySync: [SyncKey: [Int]] = [:], byDates: [DatesKey: [Int]] = [:]
        for (i, s) in added.enumerated() {
            if let k = sync(s) { bySync[k, default: []].append(i) }
            byDates[dates(s), default: []].append(i)
        }
        var taken = Set<Int>()
        var changed: [SampleChange] = [], gone: [SampleChange] = []
        for r in removed {
            let candidates = (sync(r).flatMap { bySync[$0] } ?? []).map { ($0, DiffMatch.syncIdentity) }
                + (byDates[dates(r)] ?? []).map { ($0, DiffMatch.sameTypeSourceAndDates) }
            if let (i, match) = candidates.first(where: { !taken.contains($0.0) }) {
                taken.insert(i)
                changed.append(.changed(before: r, after: added[i], by: match))
            } else {
                gone.append(.removed(r, reason: reasons[r.uuid]))
            }
        }
        let new = added.indices.filter { !taken.contains($0) }.map { SampleChange.added(added[$0]) }
        return gone + changed + new
    }

    func limit(_ point: DiffPoint) throws -> ReplayLimit {
        switch point {
        case .sequence(let n): return .sequence(n)
        case .instant(let d): return .instant(try ReplayLimit.nanoseconds(d, field: "diff"))
        case .importID(let id): return .sequence(try importEnd(id))
        }
    }

    /// The sequence of the event that ended import `id` (finished or aborted).
    func importEnd(_ id: UUID) throws -> UInt64 {
        let (_, reader) = try reader()
        let erasures = try ErasureIndex.read(reader)
        var end: UInt64?
        var batchStart = reader.start
        try reader.forEachBatch { batch in
            defer { batchStart = batch.endPosition }
            batch.forEachRecord { record in
                guard end == nil, record.kind == EventKind.importStarted.rawValue, record.kindVersion == 2 else { return }
                // An erased start is read from its replacement (its id is kept).
                guard let event = try? erasures.event(of: record), case .importStarted(let start) = event,
                      start.importId == id else { return }
                switch ImportBrackets.close(of: id, startedAt: record.sequence, scanningFrom: batchStart, reader: reader) {
                case .finished(let sequence, _)?, .aborted(let sequence, _)?: end = sequence
                case nil: end = UInt64.max  // still open: nothing of it applies yet
                }
            }
            return end == nil
        }
        guard let end else { throw UnknownImport(id: id) }
        return end == UInt64.max ? 0 : end
    }

    /// The reason each sample deleted in events `(after, through]` was deleted for: a
    /// deletion's own reason, or the export an import found it absent from.
    func deletionReasons(after: UInt64, through: UInt64) throws -> [UUID: String] {
        guard after < through else { return [:] }
        let (_, reader) = try reader()
        let erasures = try ErasureIndex.read(reader)
        var reasons: [UUID: String] = [:]
        var registry = AppRegistry()
        var failure: (any Error)?
        try reader.forEachBatch { batch in
            batch.forEachRecord { record in
                guard failure == nil, record.sequence <= through else { return }
                let kind = record.kind
                let deletes = kind == EventKind.samplesDeleted.rawValue || kind == EventKind.absentFromExport.rawValue
                guard kind == EventKind.appRegistered.rawValue || (deletes && record.sequence > after) else { return }
                do {
                    switch try erasures.event(of: record, source: registry.source) {
                    case .appRegistered(let ordinal, let r): registry.register(ordinal, r)
                    case .samplesDeleted(_, let objects, let reason?): for o in objects { reasons[o.uuid] = reason }
                    case .absentFromExport(let absence): for o in absence.objects { reasons[o.uuid] = absence.reason }
                    default: break
                    }
                } catch { failure = error }
            }
            return failure == nil
        }
        if let failure { throw failure }
        return reasons
    }
}
