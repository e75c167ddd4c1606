import Foundation
import LedgerLog

// The sample index's invariants as code (SampleIndex's documentation states them;
// DESIGN.md, "Invariants as code"). A check reads every slot, bucket and timeline:
// it is for tests (`LedgerState.checkInvariants`, and the debug builds' check after
// folds), never a production read path — on a mapped index it would check every block.

extension SampleIndex {
    /// The sample index's invariants, named as `checkInvariants()` reports them (the
    /// UUID table's own are `UUIDTable.Invariant`'s).
    package enum Invariant: String, CaseIterable, Sendable {
        /// Every slot's type code is below `typeCodeLimit` (the decoder's table), so the
        /// per-type tables' entries past it are empty.
        case typeCodesInTable = "SampleIndex.typeCodesInTable"
        /// The UUID table has one entry per slot and finds each slot's UUID at that slot:
        /// a UUID maps to exactly one slot.
        case uuidFindsItsSlot = "SampleIndex.uuidFindsItsSlot"
        /// `recordStarts` has ⌈slots / 64⌉ words, slot 0's bit set when there is a slot,
        /// and no bit past the last slot.
        case recordStartsShape = "SampleIndex.recordStartsShape"
        /// Slots are in log order, a record's slots consecutive: a slot that does not
        /// begin a record has the record offset of the slot before it; one that begins a
        /// record has a greater one.
        case recordsConsecutive = "SampleIndex.recordsConsecutive"
        /// A correlation's member is never the first slot of its record: it follows its
        /// correlation (`memberSlots(of:)` walks forward from it).
        case membersFollowTheirCorrelation = "SampleIndex.membersFollowTheirCorrelation"
        /// `appOverflows` holds exactly the slots whose app field is the overflow marker
        /// (0x7FF), each with an ordinal that does not fit the field (≥ 2047).
        case appOverflowsMatchMarkers = "SampleIndex.appOverflowsMatchMarkers"
        /// Each tombstone names a deleted slot, each deleted slot has exactly one (a slot
        /// is deleted at most once), a replacement names a slot, and tombstones are in the
        /// order of the deletions (sequence numbers never decrease).
        case tombstonesNameDeletedSlots = "SampleIndex.tombstonesNameDeletedSlots"
        /// Each type's timeline holds exactly the slots of that type, each once.
        case timelinesHoldTheirSlots = "SampleIndex.timelinesHoldTheirSlots"
        /// A timeline marked sorted is in (start, end, slot) order.
        case sortedTimelinesInOrder = "SampleIndex.sortedTimelinesInOrder"
        /// Per type, the latest slot is the live slot with the greatest (start, end,
        /// slot), or none when the type has no live slot.
        case latestIsGreatestLive = "SampleIndex.latestIsGreatestLive"
        /// `syncSlots` and `syncOfSlot` agree: every live slot with a sync identity is
        /// `syncSlots[(its app, its identifier)]`, and `syncSlots` holds nothing else; only
        /// slots that are not correlation members have a sync identity.
        case syncSlotsMatchSyncOfSlot = "SampleIndex.syncSlotsMatchSyncOfSlot"
    }

    /// Whether any column (slots, record starts, buckets, a timeline) is mapped from a
    /// snapshot: a check would read, and so check, every block of it.
    package var hasMappedColumns: Bool {
        slots.isMapped || recordStarts.isMapped || table.buckets.isMapped || timelines.contains { $0.slots.isMapped }
    }

    /// Every invariant the index breaks (empty: none), the UUID table's included.
    /// O(slots + buckets + types present): every slot, bucket and timeline entry is
    /// read once (written as plain loops: debug builds run it after folds).
    package func checkInvariants() -> [InvariantViolation] {
        var found = InvariantFindings<Invariant>()
        let tableProblems = table.checkInvariants(slotCount: slots.count)
        slots.withUnsafeBufferPointer { s in
            recordStarts.withUnsafeBufferPointer { r in
                checkSlots(s, recordStarts: r, tableSound: tableProblems.isEmpty, &found)
            }
            checkTombstones(s, &found)
            checkTimelines(s, &found)
        }
        checkSync(&found)
        return tableProblems + found.violations
    }

    /// Type codes, the UUID table's lookups, records, members and app overflows: one
    /// pass over the slots.
    private func checkSlots(_ s: UnsafeBufferPointer<Slot>, recordStarts r: UnsafeBufferPointer<UInt64>, tableSound: Bool,
                            _ found: inout InvariantFindings<Invariant>) {
        let n = s.count
        // Only with a sound table: a probe of a broken one may run forever or name no slot.
        let lookUp = tableSound && table.count == n
        if tableSound && table.count != n { found.note(.uuidFindsItsSlot, "\(table.count) UUIDs for \(n) slots") }
        if uuidBase > n || uuids.count != n - uuidBase {
            found.note(.uuidFindsItsSlot, "\(uuids.count) UUIDs held from slot \(uuidBase) on, for \(n) slots")
        }
        let shapeSound = r.count == (n + 63) / 64
        if !shapeSound {
            found.note(.recordStartsShape, "\(r.count) words for \(n) slots")
        } else {
            if n > 0, r[0] & 1 == 0 { found.note(.recordStartsShape, "slot 0 does not begin a record") }
            if n % 64 != 0, r[r.count - 1] & (UInt64.max << UInt64(n % 64)) != 0 {
                found.note(.recordStartsShape, "bits set past slot \(n - 1)")
            }
        }
        var overflowing = 0
        var i = 0
        while i < n {
            let slot = s[i]
            if Int(slot.typeCode) >= Self.typeCodeLimit { found.note(.typeCodesInTable, "slot \(i) has type code \(slot.typeCode)") }
            // A restored slot's UUID is read from the log when there is one to read.
            if lookUp, let uuid = try? uuid(UInt32(i)) {
                let at = try? table.find(uuid, slotCount: UInt32(n)) { (x) throws(UUIDUnreadable) -> UUID in try self.uuid(x) }
                if at != UInt32(i) {
                    found.note(.uuidFindsItsSlot, "slot \(i)'s UUID \(uuid) finds " + (at.map { "slot \($0)" } ?? "nothing"))
                }
            }
            if shapeSound {
                let begins = r[i >> 6] >> UInt64(i & 63) & 1 == 1
                if i > 0 {
                    let previous = s[i - 1].recordOffset, offset = slot.recordOffset
                    if begins ? offset <= previous : offset != previous {
                        found.note(.recordsConsecutive, "slot \(i) at record offset \(offset) "
                                   + (begins ? "begins a record" : "continues the record") + " of slot \(i - 1) at \(previous)")
                    }
                }
                if begins, slot.state & Self.memberBit != 0 {
                    found.note(.membersFollowTheirCorrelation, "member slot \(i) begins its record")
                }
            }
            if slot.appField == Slot.appOverflow {
                overflowing += 1
                if appOverflows[UInt32(i)] == nil {
                    found.note(.appOverflowsMatchMarkers, "slot \(i) says its app overflows but has no entry")
                }
            }
            i += 1
        }
        if overflowing != appOverflows.count {
            found.note(.appOverflowsMatchMarkers, "\(appOverflows.count) entries for \(overflowing) overflowing slots")
        }
        for (slot, app) in appOverflows where Int(slot) >= n || app < Slot.appOverflow {
            found.note(.appOverflowsMatchMarkers, "the entry of slot \(slot) of \(n) holds app \(app)")
        }
    }

    /// Tombstones against the deleted bits.
    private func checkTombstones(_ s: UnsafeBufferPointer<Slot>, _ found: inout InvariantFindings<Invariant>) {
        let n = s.count
        var tombstoned = [Bool](repeating: false, count: n)
        var lastSequence: UInt64 = 0
        for t in tombstones {
            let slot = Int(t.slot)
            if slot >= n {
                found.note(.tombstonesNameDeletedSlots, "a tombstone names slot \(slot) of \(n)")
                continue
            }
            if tombstoned[slot] { found.note(.tombstonesNameDeletedSlots, "slot \(slot) has two tombstones") }
            if s[slot].state & Self.deletedBit == 0 { found.note(.tombstonesNameDeletedSlots, "slot \(slot) has a tombstone but is live") }
            if let r = t.replacedBy, Int(r) >= n { found.note(.tombstonesNameDeletedSlots, "slot \(slot) replaced by slot \(r) of \(n)") }
            if t.sequence < lastSequence {
                found.note(.tombstonesNameDeletedSlots, "slot \(slot)'s deletion at \(t.sequence) follows one at \(lastSequence)")
            }
            tombstoned[slot] = true
            lastSequence = max(lastSequence, t.sequence)
        }
        var i = 0
        while i < n {
            if s[i].state & Self.deletedBit != 0 && !tombstoned[i] {
                found.note(.tombstonesNameDeletedSlots, "deleted slot \(i) has no tombstone")
            }
            i += 1
        }
    }

    /// Each timeline against the slots of its type, sorted ones' order, and the latest
    /// per type: work per type present, plus one pass over the per-type tables.
    private func checkTimelines(_ s: UnsafeBufferPointer<Slot>, _ found: inout InvariantFindings<Invariant>) {
        let n = s.count
        // Per type code: the greatest live slot, and how many slots the type has.
        var greatest = [UInt32](repeating: Self.none, count: Self.typeCodeFieldLimit)
        var perType = [Int](repeating: 0, count: Self.typeCodeFieldLimit)
        var i = 0
        while i < n {
            let code = Int(s[i].typeCode)
            perType[code] += 1
            if s[i].state & Self.deletedBit == 0, greatest[code] == Self.none || Self.before(greatest[code], UInt32(i), s) {
                greatest[code] = UInt32(i)
            }
            i += 1
        }
        func name(_ slot: UInt32) -> String { slot == Self.none ? "none" : "slot \(slot)" }
        var inTimeline = [Bool](repeating: false, count: n)
        var held = 0
        timelines.withUnsafeBufferPointer { t in
            latestSlots.withUnsafeBufferPointer { latest in
                var code = 0
                while code < t.count {
                    let count = t[code].slots.count
                    let expected = perType[code]
                    if count != expected {
                        found.note(.timelinesHoldTheirSlots, "type \(code)'s timeline holds \(count) slots of \(expected)")
                    }
                    let latestSlot = latest[code]
                    if latestSlot != greatest[code] {
                        found.note(.latestIsGreatestLive, "type \(code)'s latest is \(name(latestSlot)), the greatest live \(name(greatest[code]))")
                    }
                    if count > 0 {
                        let sorted = t[code].sorted
                        t[code].slots.withUnsafeBufferPointer { ofType in
                            var k = 0
                            while k < ofType.count {
                                let slot = Int(ofType[k])
                                if slot >= n {
                                    found.note(.timelinesHoldTheirSlots, "type \(code)'s timeline holds slot \(slot) of \(n)")
                                } else if Int(s[slot].typeCode) != code {
                                    found.note(.timelinesHoldTheirSlots, "slot \(slot) of type \(s[slot].typeCode) is in type \(code)'s timeline")
                                } else if inTimeline[slot] {
                                    found.note(.timelinesHoldTheirSlots, "slot \(slot) is in its timeline twice")
                                } else {
                                    inTimeline[slot] = true
                                    held += 1
                                    if sorted, k > 0, Int(ofType[k - 1]) < n, !Self.before(ofType[k - 1], ofType[k], s) {
                                        found.note(.sortedTimelinesInOrder, "type \(code)'s sorted timeline has slot \(ofType[k - 1]) before slot \(slot)")
                                    }
                                }
                                k += 1
                            }
                        }
                    }
                    code += 1
                }
            }
        }
        if held != n { found.note(.timelinesHoldTheirSlots, "timelines hold \(held) of \(n) slots") }
    }

    /// Sync identities both ways (reads slots element by element).
    private func checkSync(_ found: inout InvariantFindings<Invariant>) {
        let n = slots.count
        for (slot, value) in syncOfSlot {
            if Int(slot) >= n {
                found.note(.syncSlotsMatchSyncOfSlot, "slot \(slot) of \(n) has a sync identity")
            } else if slots[Int(slot)].state & Self.memberBit != 0 {
                found.note(.syncSlotsMatchSyncOfSlot, "member slot \(slot) has a sync identity")
            } else if isLive(slot), syncSlots[SyncKey(app: app(slot), identifier: value.identifier)] != slot {
                found.note(.syncSlotsMatchSyncOfSlot, "live slot \(slot)'s sync identifier \(value.identifier) is not indexed at it")
            }
        }
        for (key, slot) in syncSlots {
            if Int(slot) >= n || !isLive(slot) || app(slot) != key.app || syncOfSlot[slot]?.identifier != key.identifier {
                found.note(.syncSlotsMatchSyncOfSlot, "sync identifier \(key.identifier) of app \(key.app) names slot \(slot), "
                           + "which does not hold it live")
            }
        }
    }
}
