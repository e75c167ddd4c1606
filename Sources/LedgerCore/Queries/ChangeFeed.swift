import Foundation
import HealthModel
import LedgerChecksums
import LedgerLog

/// The anchored object query (HKAnchoredObjectQuery) over the sample index.
///
/// Additions are slots in log order, deletions tombstones in log order; the two are
/// merged by the sequence number of the saving record (read from its 32-byte header,
/// once per record, only when deletions are pending). Only the samples returned (and,
/// with a predicate, the deleted samples tested) are decoded.
package enum ChangeFeed {
    /// Changes of `types` after `anchor` (nil: from the beginning) that match
    /// `predicate` and are visible to `app` (nil: the owner, everything), at most
    /// `limit` (0: all). `ledgerId` is the ledger `state` was built from: a log of another
    /// ledger at `fs` (the folder replaced since) is `ChangeFeedError.ledgerReplaced`.
    package static func changes(of types: Set<ObjectType>, predicate: SamplePredicate?, anchor: ChangeAnchor?, limit: Int,
                               app: AppOrdinal?, ledgerId: UUID, fs: any LogFileSystem,
                               in state: inout LedgerState) throws -> ChangeSet {
        let scan = try Scan(fs: fs, ledgerId: ledgerId)
        defer { scan.file.close() }
        return try scan.run(types: types, predicate: predicate, anchor: anchor, limit: limit > 0 ? limit : Int.max, app: app,
                            ledgerId: ledgerId, state: &state)
    }

    /// The anchor at the feed's end now (nothing read from the log but one record):
    /// what an observer starts from.
    package static func currentAnchor(of types: Set<ObjectType>, app: AppOrdinal?, ledgerId: UUID, fs: any LogFileSystem,
                                     in state: inout LedgerState) throws -> ChangeAnchor {
        let scan = try Scan(fs: fs, ledgerId: ledgerId)
        defer { scan.file.close() }
        let index = state.samples
        let readable = app == nil ? [] : Scan.readable(types: types, app: app, state: state)
        return ChangeAnchor(ledgerId: ledgerId, slots: UInt64(index.count), tombstones: UInt64(index.tombstones.count),
                            check: try scan.check(slots: UInt64(index.count), tombstones: UInt64(index.tombstones.count), index: index),
                            readable: readable, backfill: [], backfillSlot: 0, erasuresSeen: state.erasures.entries.last?.sequence ?? 0)
    }

    private final class Scan {
        let fs: any LogFileSystem
        let file: any LogFile
        var sequences: [UInt64: UInt64] = [:]

        /// Opens the log at the ledger's path, refusing one of another ledger than
        /// `ledgerId` (the one the state was built from): offsets from that state mean
        /// nothing there.
        init(fs: any LogFileSystem, ledgerId: UUID) throws {
            self.fs = fs
            file = try fs.open(LogWriter.logFileName, .readOnly)
            let found: UUID
            do { found = try LogFileHeader.read(from: file, path: fs.path).ledgerId } catch {
                file.close()
                throw error
            }
            guard found == ledgerId else {
                file.close()
                throw ChangeFeedError.ledgerReplaced(path: fs.path, found: found, expected: ledgerId)
            }
        }

        func read(_ count: Int, at offset: UInt64) throws -> [UInt8] {
            var b = [UInt8](repeating: 0, count: count)
            let got = try b.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
            guard got == count else { throw QueryError.indexDisagrees(slot: nil, reason: "the log ends before byte \(offset + UInt64(count))") }
            return b
        }

        /// The sequence number of the record at `offset`.
        func sequence(at offset: UInt64) throws -> UInt64 {
            if let s = sequences[offset] { return s }
            let b = try read(16, at: offset)
            let s = b[8..<16].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if sequences.count > 1 << 16 { sequences.removeAll(keepingCapacity: true) }
            sequences[offset] = s
            return s
        }

        func check(slots: UInt64, tombstones: UInt64, index: SampleIndex) throws -> [UInt8] {
            var bytes: [UInt8] = []
            if slots > 0 {
                let offset = index.slots[Int(slots - 1)].recordOffset
                let header = try read(LogFormat.recordHeaderLength, at: offset)
                let length = Int(header[4..<8].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
                guard length <= LogFormat.payloadLengthMax else {
                    throw QueryError.indexDisagrees(slot: UInt32(slots - 1), reason: "record length \(length)")
                }
                bytes = try read(LogFormat.recordHeaderLength + length, at: offset)
            }
            if tombstones > 0 {
                let t = index.tombstones[Int(tombstones - 1)]
                withUnsafeBytes(of: t.sequence.littleEndian) { bytes.append(contentsOf: $0) }
                withUnsafeBytes(of: try index.uuid(t.slot).uuid) { bytes.append(contentsOf: $0) }
            }
            let d = SHA256.hash(bytes)
            return withUnsafeBytes(of: d.bytes) { Array($0.prefix(16)) }
        }

        /// The samples erased since `a` was issued (each erasure after `a.erasuresSeen`,
        /// from `a.erasedCursor`) of the types `codes` that the caller could have been
        /// given, as deletions, at most `limit`; and where a limit stopped them (nil: all
        /// given). An erased UUID saved again since (an export imported again) is not
        /// deleted: it comes with everything current.
        /// - Throws: `historyRewritten` for an anchor naming an erasure this ledger does
        ///   not hold; `erasedSince` for an erasure written before the `erased` event said
        ///   what the feed had given (version 1: the caller fetches again from the start).
        func erasedSince(_ a: ChangeAnchor, codes: Set<UInt16>, visibility: [UInt16: QueryVisibility], limit: Int,
                         state: LedgerState) throws -> (deleted: [Change], stoppedAt: UInt64?) {
            let entries = state.erasures.entries
            guard a.erasuresSeen == 0 || entries.contains(where: { $0.sequence == a.erasuresSeen }) else {
                throw ChangeFeedError.historyRewritten(slots: a.slots, deletions: a.tombstones)
            }
            let later = entries.filter { $0.sequence > a.erasuresSeen }
            if let old = later.last(where: { $0.erasure.feedSlots == nil }) { throw ChangeFeedError.erasedSince(erasure: old.sequence) }
            // The erased samples of those erasures, in order (one erasure may span events).
            let lists = later.map { (sequence: $0.sequence, uuids: $0.erasure.samples, slots: $0.erasure.feedSlots ?? []) }
            let total = lists.reduce(0) { $0 + $1.uuids.count }
            // A rollback the erasures cannot account for: the anchor counted more samples
            // or deletions than the ledger holds now and the erasures took together.
            guard a.slots <= UInt64(state.samples.count + total), a.tombstones <= UInt64(state.samples.tombstones.count + total) else {
                throw ChangeFeedError.rolledBack(anchorSlots: a.slots, ledgerSlots: UInt64(state.samples.count),
                                                 anchorDeletions: a.tombstones, ledgerDeletions: UInt64(state.samples.tombstones.count))
            }
            /// The erased sample after sample `i` of list `k` (the next list's first at the
            /// end of one: an erasure split across events), with its place.
            func next(_ k: Int, _ i: Int) -> (k: Int, i: Int, slot: ErasedFeedSlot?)? {
                if i + 1 < lists[k].slots.count { return (k, i + 1, lists[k].slots[i + 1]) }
                guard let n = lists.indices[(k + 1)...].first(where: { !lists[$0].slots.isEmpty }) else { return nil }
                return (n, 0, lists[n].slots[0])
            }
            /// Whether the caller could have been given erased sample `i` of list `k`: as
            /// the feed gives a slot (SampleReader's `visible`), another app's correlation
            /// when one of its members (which follow it) is of a readable type.
            func given(_ s: ErasedFeedSlot, _ k: Int, _ i: Int) -> Bool {
                switch visibility[s.typeCode] {
                case nil: return false
                case .everything?: return true
                case .ownSamplesOnly(let app)?: return s.app == app
                case .correlationMembers(let app, let readable)?:
                    if s.app == app { return true }
                    var at = next(k, i)
                    while let m = at, let member = m.slot, member.isMember {
                        if readable.contains(member.typeCode) { return true }
                        at = next(m.k, m.i)
                    }
                    return false
                }
            }
            /// Whether an erased UUID saved again since is given now (then it comes with
            /// everything current, and is not deleted).
            func givenAgain(_ uuid: UUID) throws -> Bool {
                guard let again = try state.samples.slot(of: uuid), let v = visibility[state.samples.slots[Int(again)].typeCode] else { return false }
                return state.samples.visible(again, to: v)
            }
            var deleted: [Change] = []
            var position = 0
            let start = a.erasedCursor.map { Int(min($0, UInt64(total))) } ?? 0
            for (k, list) in lists.enumerated() {
                defer { position += list.uuids.count }
                guard position + list.uuids.count > start else { continue }
                for i in max(start, position) - position..<list.uuids.count {
                    guard let s = list.slots[i], codes.contains(s.typeCode), given(s, k, i),
                          try !givenAgain(list.uuids[i]) else { continue }
                    if deleted.count == limit { return (deleted, UInt64(position + i)) }
                    deleted.append(.deleted(DeletedSample(uuid: list.uuids[i], type: ObjectType(code: s.typeCode),
                                                          syncIdentifier: nil, syncVersion: nil, replacedBy: nil,
                                                          erasedAt: list.sequence)))
                }
            }
            return (deleted, nil)
        }

        func validateHistory(_ a: ChangeAnchor, index: SampleIndex) throws {
            guard a.slots <= UInt64(index.count), a.tombstones <= UInt64(index.tombstones.count) else {
                throw ChangeFeedError.rolledBack(anchorSlots: a.slots, ledgerSlots: UInt64(index.count),
                                                 anchorDeletions: a.tombstones, ledgerDeletions: UInt64(index.tombstones.count))
            }
            guard try check(slots: a.slots, tombstones: a.tombstones, index: index) == a.check else {
                throw ChangeFeedError.historyRewritten(slots: a.slots, deletions: a.tombstones)
            }
        }

        /// Types whose others' samples the caller may read now, ascending.
        static func readable(types: Set<ObjectType>, app: AppOrdinal?, state: LedgerState) -> [UInt16] {
            types.compactMap { t -> UInt16? in
                switch state.visibility(app: app, type: t) {
                case .ownSamplesOnly: nil
                case .correlationMembers(_, let r): r.isEmpty ? nil : t.code
                case .everything: t.code
                }
            }.sorted()
        }

        /// A change found from the index alone.
        enum Candidate {
            case slot(UInt32)
            case tombstone(Int)
        }

        func run(types: Set<ObjectType>, predicate: SamplePredicate?, anchor: ChangeAnchor?, limit: Int, app: AppOrdinal?,
                 ledgerId: UUID, state: inout LedgerState) throws -> ChangeSet {
            let index = state.samples
            let codes = Set(types.map(\.code))
            var visibility: [UInt16: QueryVisibility] = [:]
            for t in types { visibility[t.code] = state.visibility(app: app, type: t) }
            let erasuresSeen = state.erasures.entries.last?.sequence ?? 0
            var anchor = anchor
            var changes: [Change] = []
            if let a = anchor {
                guard a.ledgerId == ledgerId else { throw ChangeFeedError.otherLedger(anchor: a.ledgerId, ledger: ledgerId) }
                if a.erasuresSeen == erasuresSeen && a.erasedCursor == nil {
                    try validateHistory(a, index: index)
                } else {
                    // Issued before an erasure: the erased samples as deletions, then
                    // everything current, as from the start (the history it counted
                    // is not this one: erased samples were never folded).
                    let (deleted, stoppedAt) = try erasedSince(a, codes: codes, visibility: visibility, limit: limit, state: state)
                    changes = deleted
                    if let stoppedAt {
                        let newAnchor = ChangeAnchor(ledgerId: ledgerId, slots: 0, tombstones: 0,
                                                     check: try check(slots: 0, tombstones: 0, index: index),
                                                     readable: a.readable, backfill: [], backfillSlot: 0, erasuresSeen: a.erasuresSeen,
                                                     erasedCursor: stoppedAt)
                        return ChangeSet(changes: changes, newAnchor: newAnchor, hasMore: true)
                    }
                    anchor = nil
                }
            }
            let readableNow = app == nil ? [] : Self.readable(types: types, app: app, state: state)
            var readable = anchor?.readable ?? readableNow
            var backfill = anchor?.backfill ?? []
            var backfillSlot = anchor?.backfillSlot ?? 0
            if backfill.isEmpty {
                backfill = readableNow.filter { !readable.contains($0) }
                backfillSlot = 0
            }
            readable = readable.filter { readableNow.contains($0) }
            let sourceList = (0...state.registry.apps.count).map { state.registry.source(AppOrdinal($0)) }
            let source: (AppOrdinal) -> Source? = { $0 < UInt32(sourceList.count) ? sourceList[Int($0)] : nil }
            let reads = try RecordReads(fs: fs)
            var slotCursor = anchor.map { Int($0.slots) } ?? 0
            var tombCursor = anchor.map { Int($0.tombstones) } ?? 0
            let slotEnd = index.count, tombEnd = index.tombstones.count

            func visible(_ slot: UInt32) -> Bool {
                let s = index.slots[Int(slot)]
                guard let v = visibility[s.typeCode] else { return false }
                return index.visible(slot, to: v)
            }
            func adjust(_ sample: Sample, slot: UInt32) throws -> Sample {
                let s = index.slots[Int(slot)]
                if case .correlationMembers(let a, let r)? = visibility[s.typeCode], index.app(slot) != a, case .correlation(let c) = sample {
                    return .correlation(try Correlation(type: c.type, objects: c.objects.filter {
                        r.contains(ObjectType.quantity($0.type).code)
                    }, common: c.common))
                }
                return sample
            }
            func want(_ slot: UInt32) -> RecordReads.Want {
                let e = index.slots[Int(slot)]
                return RecordReads.Want(slot: slot, recordOffset: e.recordOffset, position: index.position(slot), start: e.start,
                                        end: e.end, app: index.app(slot))
            }
            /// The samples of `wants`, unless a mapped snapshot's block was found damaged
            /// (S8: the log is never read at offsets a damaged block gave).
            func samples(_ wants: [RecordReads.Want]) throws -> [Sample] {
                try state.checkIntact()
                return try reads.samples(wants, source: source)
            }
            func deleted(_ t: SampleIndex.Tombstone) throws -> DeletedSample {
                let e = index.entry(t.slot)
                return DeletedSample(uuid: try index.uuid(t.slot), type: ObjectType(code: e.typeCode), syncIdentifier: e.syncIdentifier,
                                     syncVersion: e.syncVersion, replacedBy: try t.replacedBy.map { try index.uuid($0) })
            }
            let chunk = 4096

            // 1. Backfill: older samples of types the caller may read since the anchor was issued.
            let backfillCodes = Set(backfill)
            let backfillEnd = anchor.map { Int($0.slots) } ?? 0
            var hasMore = false
            if !backfillCodes.isEmpty {
                var i = Int(backfillSlot)
                while i < backfillEnd && changes.count < limit {
                    var wants: [RecordReads.Want] = []
                    while i < backfillEnd && wants.count < chunk {
                        let s = index.slots[i]
                        if backfillCodes.contains(s.typeCode), s.state & SampleIndex.deletedBit == 0, index.app(UInt32(i)) != app,
                           visible(UInt32(i)) { wants.append(want(UInt32(i))) }
                        i += 1
                    }
                    var taken = 0
                    for (w, found) in zip(wants, try samples(wants)) {
                        if changes.count == limit { break }
                        taken += 1
                        let sample = try adjust(found, slot: w.slot)
                        if let predicate, !predicate.matches(sample) { continue }
                        changes.append(.added(sample))
                    }
                    if taken < wants.count { i = Int(wants[taken].slot) }
                }
                backfillSlot = UInt64(i)
                if i >= backfillEnd {
                    readable = (readable + backfill).sorted()
                    backfill = []
                    backfillSlot = 0
                } else {
                    hasMore = true
                }
            }

            // 2. Changes after the anchor, additions and deletions merged in log order.
            while changes.count < limit {
                var candidates: [Candidate] = []
                var si = slotCursor, ti = tombCursor
                func nextSlot() -> Int {
                    while si < slotEnd {
                        let s = index.slots[si]
                        if codes.contains(s.typeCode), s.state & SampleIndex.deletedBit == 0, visible(UInt32(si)) { return si }
                        si += 1
                    }
                    return si
                }
                func nextTomb() -> Int {
                    while ti < tombEnd {
                        let slot = index.tombstones[ti].slot
                        if codes.contains(index.slots[Int(slot)].typeCode), visible(slot) { return ti }
                        ti += 1
                    }
                    return ti
                }
                var s = nextSlot(), t = nextTomb()
                while candidates.count < chunk && (s < slotEnd || t < tombEnd) {
                    var takeSlot = t >= tombEnd
                    if !takeSlot && s < slotEnd {
                        takeSlot = try sequence(at: index.slots[s].recordOffset) <= index.tombstones[t].sequence
                    }
                    if takeSlot {
                        candidates.append(.slot(UInt32(s)))
                        si += 1
                        s = nextSlot()
                    } else {
                        candidates.append(.tombstone(t))
                        ti += 1
                        t = nextTomb()
                    }
                }
                if candidates.isEmpty {
                    slotCursor = slotEnd
                    tombCursor = tombEnd
                    break
                }
                // Decode what is returned, and the deleted samples a predicate must test.
                var wants: [RecordReads.Want] = []
                for c in candidates {
                    switch c {
                    case .slot(let slot): wants.append(want(slot))
                    case .tombstone(let k): if predicate != nil { wants.append(want(index.tombstones[k].slot)) }
                    }
                }
                let samples = try samples(wants)
                var w = 0
                var stopped = false
                for c in candidates {
                    if changes.count == limit {
                        stopped = true
                        break
                    }
                    switch c {
                    case .slot(let slot):
                        let sample = try adjust(samples[w], slot: slot)
                        w += 1
                        slotCursor = Int(slot) + 1
                        if let predicate, !predicate.matches(sample) { continue }
                        changes.append(.added(sample))
                    case .tombstone(let k):
                        tombCursor = k + 1
                        if let predicate {
                            let sample = samples[w]
                            w += 1
                            if !predicate.matches(sample) { continue }
                        }
                        changes.append(.deleted(try deleted(index.tombstones[k])))
                    }
                }
                if stopped {
                    hasMore = true
                    break
                }
                if si >= slotEnd && ti >= tombEnd {
                    slotCursor = slotEnd
                    tombCursor = tombEnd
                    break
                }
            }
            if changes.count == limit && !hasMore {
                // Is there one more? (Cheap: the index only.)
                hasMore = slotCursor < slotEnd || tombCursor < tombEnd
            }
            let newAnchor = ChangeAnchor(ledgerId: ledgerId, slots: UInt64(slotCursor), tombstones: UInt64(tombCursor),
                                         check: try check(slots: UInt64(slotCursor), tombstones: UInt64(tombCursor), index: index),
                                         readable: readable, backfill: backfill, backfillSlot: backfillSlot, erasuresSeen: erasuresSeen)
            try state.checkIntact()  // nothing answered from a damaged mapped snapshot (S8)
            return ChangeSet(changes: changes, newAnchor: newAnchor, hasMore: hasMore)
        }
    }
}
