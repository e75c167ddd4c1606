import Foundation
import HealthModel

/// Where two states first differ: the projection and the key.
package struct StateDifference: Sendable, Equatable, CustomStringConvertible {
    package let projection: String
    package let key: String

    package var description: String { "\(projection)[\(key)]" }

    /// The first difference between `a` and `b`, in a fixed order of projections
    /// and keys; nil when they are equal. `ignoringPosition`: where each stands in the
    /// log (last sequence and time, events passed over) is left out — an aborted
    /// import moves the position and nothing else (rule E11).
    package static func first(_ a: LedgerState, _ b: LedgerState, ignoringPosition: Bool = false) -> StateDifference? {
        if !ignoringPosition {
            if a.lastSequence != b.lastSequence { return StateDifference(projection: "position", key: "lastSequence") }
            if a.lastRecordedAt != b.lastRecordedAt { return StateDifference(projection: "position", key: "lastRecordedAt") }
            if a.eventsNotApplied != b.eventsNotApplied { return StateDifference(projection: "position", key: "eventsNotApplied") }
        }
        let apps = max(a.registry.apps.count, b.registry.apps.count)
        for i in 0..<apps {
            let x = i < a.registry.apps.count ? a.registry.apps[i] : nil
            let y = i < b.registry.apps.count ? b.registry.apps[i] : nil
            if x != y { return StateDifference(projection: "apps", key: (x ?? y)!.bundleIdentifier) }
        }
        for app in Set(a.authorization.permissions.keys).union(b.authorization.permissions.keys).sorted() {
            let x = a.authorization.permissions[app] ?? [:], y = b.authorization.permissions[app] ?? [:]
            for code in Set(x.keys).union(y.keys).sorted() where x[code] != y[code] {
                return StateDifference(projection: "authorization",
                                       key: "\(a.registry.label(app)) \(ObjectType(code: code)?.identifier ?? String(code))")
            }
        }
        for type in CharacteristicType.allCases where a.characteristics[type] != b.characteristics[type] {
            return StateDifference(projection: "characteristics", key: type.identifier)
        }
        let (countsA, countsB) = (a.eventCounts, b.eventCounts)
        for kind in Set(countsA.keys).union(countsB.keys).sorted() where countsA[kind] != countsB[kind] {
            return StateDifference(projection: "eventCounts", key: EventKind(rawValue: kind)?.name ?? String(kind))
        }
        for i in 0..<max(a.imports.count, b.imports.count) {
            let x = i < a.imports.count ? a.imports[i] : nil, y = i < b.imports.count ? b.imports[i] : nil
            if x != y { return StateDifference(projection: "imports", key: (x ?? y)!.start.importId.uuidString) }
        }
        for day in Set(a.activitySummaries.keys).union(b.activitySummaries.keys).sorted()
        where a.activitySummaries[day] != b.activitySummaries[day] {
            return StateDifference(projection: "activitySummaries", key: String(day))
        }
        for workout in Set(a.workoutActivities.keys).union(b.workoutActivities.keys).sorted(by: { $0.uuidString < $1.uuidString })
        where a.workoutActivities[workout] != b.workoutActivities[workout] {
            return StateDifference(projection: "workoutActivities", key: workout.uuidString)
        }
        let x = a.samples, y = b.samples
        for slot in firstSlotToCompare(x, y, ignoringPosition: ignoringPosition)..<max(x.count, y.count) {
            let ex = slot < x.count ? x.entry(UInt32(slot)) : nil
            let ey = slot < y.count ? y.entry(UInt32(slot)) : nil
            // Ignoring positions, a slot's record offset (where in the log it was saved) is one too.
            // Ignoring positions, a slot's record offset (where in the log it was saved) is one too,
            // and its UUID is no longer told by where it is: it is compared (read from the log
            // for a restored slot; one that cannot be read differs).
            if ignoringPosition, let ex, let ey, ex.withRecordOffset(0) == ey.withRecordOffset(0),
               let ux = try? x.uuid(UInt32(slot)), ux == (try? y.uuid(UInt32(slot))) { continue }
            if ex != ey || ignoringPosition { return StateDifference(projection: "samples", key: key(slot < x.count ? x : y, slot)) }
        }
        // Ignoring positions, a tombstone's sequence (the deleting event's) is one too.
        func same(_ a: SampleIndex.Tombstone, _ b: SampleIndex.Tombstone) -> Bool {
            ignoringPosition ? a.slot == b.slot && a.actor == b.actor && a.replacedBy == b.replacedBy : a == b
        }
        if x.tombstones.count != y.tombstones.count || !zip(x.tombstones, y.tombstones).allSatisfy(same) {
            let common = min(x.tombstones.count, y.tombstones.count)
            let i = (0..<common).first { !same(x.tombstones[$0], y.tombstones[$0]) } ?? common
            let t = i < x.tombstones.count ? x.tombstones[i] : y.tombstones[i]
            return StateDifference(projection: "tombstones", key: key(x, Int(t.slot)))
        }
        for code in Set(x.typeCodesPresent).union(y.typeCodesPresent).sorted() where x.latest(typeCode: code) != y.latest(typeCode: code) {
            return StateDifference(projection: "latestSample", key: ObjectType(code: code)?.identifier ?? String(code))
        }
        // The rest of the index (its words, tables and timelines) is compared whole; what
        // it holds beyond the entries above is log positions and layout.
        if !ignoringPosition, x != y { return StateDifference(projection: "sampleIndex", key: "internal tables") }
        // The UUID table by what it says of each slot (its fingerprint), not by layout: since
        // snapshot version 3 it is the one thing a snapshot holds of the UUIDs, so a forged
        // entry would hide a sample from lookups (and let its UUID be saved again).
        if let slot = tableDifference(x, y) { return StateDifference(projection: "uuidTable", key: key(x, slot)) }
        return statisticsDifference(a, b)
    }

    /// The first slot whose UUID-table entry differs between `x` and `y` (missing, of
    /// another fingerprint, or an entry naming no slot or a slot twice: reported at slot
    /// 0 when it names none); nil when every slot has the same entry in both.
    static func tableDifference(_ x: SampleIndex, _ y: SampleIndex) -> Int? {
        let n = max(x.count, y.count)
        func bySlot(_ t: UUIDTable) -> [UInt64]? {
            var out = [UInt64](repeating: 0, count: n)
            var sound = true
            func note(_ e: UInt64) {
                let slot = Int(UInt32(truncatingIfNeeded: e)) - 1
                guard slot >= 0, slot < n, out[slot] == 0 else { sound = false; return }
                out[slot] = e
            }
            if let c = t.compact {
                c.entries.withUnsafeBufferPointer { for e in $0 { note(e) } }
            } else {
                t.buckets.withUnsafeBufferPointer { for e in $0 where e != 0 { note(e) } }
            }
            return sound ? out : nil
        }
        guard let p = bySlot(x.table), let q = bySlot(y.table) else { return 0 }
        return p.indices.first { p[$0] != q[$0] }
    }

    /// A sample's key in a difference: its UUID, or its slot when the log does not give it.
    static func key(_ index: SampleIndex, _ slot: Int) -> String {
        guard slot < index.count, let uuid = try? index.uuid(UInt32(slot)) else { return "slot \(slot)" }
        return uuid.uuidString
    }

    /// The slots from which the entries must be compared one by one: those before it
    /// have equal entries. An entry is its slot's fields plus what the index's tables
    /// say of it (its position from the record starts, its app from the overflows,
    /// its sync identity); when those tables are equal, a slot whose dates (as numbers)
    /// and word are equal has equal entries — the same record offset and position, so
    /// the same sample of the log, UUID and all — and no entry need be built. Ignoring
    /// positions, every slot is compared.
    static func firstSlotToCompare(_ x: SampleIndex, _ y: SampleIndex, ignoringPosition: Bool) -> Int {
        guard !ignoringPosition, x.recordStarts == y.recordStarts, x.appOverflows == y.appOverflows,
              x.syncOfSlot == y.syncOfSlot else { return 0 }
        return x.slots.withUnsafeBufferPointer { xs in
            y.slots.withUnsafeBufferPointer { ys in
                var i = 0
                while i < min(xs.count, ys.count) {
                    let p = xs[i], q = ys[i]
                    guard p.start == q.start, p.end == q.end, p.word == q.word else { break }
                    i += 1
                }
                return i
            }
        }
    }
}
