import CLedgerAccel
import Foundation
import LedgerLog
#if canImport(Glibc)
import Glibc
#endif

/// An open-addressing hash table from UUID to sample slot, sized for millions of
/// entries: 8 bytes per bucket (32-bit fingerprint, 32-bit slot + 1), linear
/// probing, grown at 80 % load (the fingerprint keeps long probe runs cheap: a
/// probe that is not the UUID almost never touches a slot). The UUIDs themselves live in the sample index; the
/// fingerprint avoids touching them on almost every miss.
///
/// Iteration order is irrelevant to every output: the digest and snapshots walk
/// slots, not buckets.
///
/// Invariants (`UUIDTable.Invariant`, checked by `checkInvariants(slotCount:)`): the
/// bucket count is a power of two; the load is at most 80 %; `count` is the number of
/// nonempty buckets; every entry names a slot (`slot + 1` in 1...slot count) and has
/// its fingerprint's low bit set (what makes a nonempty bucket nonzero).
struct UUIDTable: Sendable, Equatable {
    private(set) var buckets: Column<UInt64>
    private(set) var count = 0

    init(capacity: Int = 1024) {
        var size = 16
        while size / 10 * 8 < capacity { size <<= 1 }
        buckets = Column(Self.zeroedBuckets(size))
    }

    /// A zeroed bucket array. Large ones ask for transparent huge pages before the
    /// memory is touched: every lookup is a random access, and on a virtual machine a
    /// TLB miss costs more than the cache miss (about 2× faster replay of 10M events).
    static func zeroedBuckets(_ count: Int) -> [UInt64] {
        // Capacity at least 1: an empty one writes into the shared empty-array storage (a
        // race ThreadSanitizer reports; see `ColumnSource.read`).
        [UInt64](unsafeUninitializedCapacity: max(1, count)) { buffer, initialized in
            HugePages.advise(UnsafeMutableRawBufferPointer(buffer))
            buffer.baseAddress!.initialize(repeating: 0, count: count)
            initialized = count
        }
    }


    init(buckets: Column<UInt64>, count: Int) {
        precondition(buckets.count.nonzeroBitCount == 1, "bucket count is a power of two")
        self.buckets = buckets
        self.count = count
    }

    @inline(__always)
    static func hash(_ uuid: UUID) -> UInt64 {
        let (a, b) = withUnsafeBytes(of: uuid.uuid) {
            ($0.loadUnaligned(fromByteOffset: 0, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
        var h = a &* 0x9E37_79B9_7F4A_7C15 ^ b
        h ^= h >> 32
        h &*= 0xD6E8_FEB8_6659_FD93
        h ^= h >> 32
        return h
    }

    /// Starts loading the bucket `uuid` hashes to, so that a lookup a few samples
    /// later finds it in cache (replay looks ahead in the batch it is folding).
    @inline(__always)
    func prefetch(_ uuid: UUID) {
        guard !buckets.isMapped else { return }  // a mapped table checks its blocks as it reads them
        let i = Int(truncatingIfNeeded: Self.hash(uuid)) & (buckets.count - 1)
        buckets.withUnsafeBufferPointer { hl_prefetch($0.baseAddress! + i) }
    }

    /// The slot holding `uuid`, if any. `uuidOf` reads a slot's UUID; a bucket naming a
    /// slot at or past `slotCount` (only a damaged or forged mapped snapshot has one)
    /// is passed over, never read.
    @inline(__always)
    func find(_ uuid: UUID, slotCount: UInt32, uuidOf: (UInt32) -> UUID) -> UInt32? {
        let h = Self.hash(uuid)
        let fingerprint = Self.fingerprint(h)
        let mask = buckets.count - 1
        var i = Int(truncatingIfNeeded: h) & mask
        if buckets.isMapped {
            // Bucket by bucket, so that only the blocks a probe reads are checked; at
            // most every bucket once (a damaged table may have no empty one).
            for _ in 0...mask {
                let e = buckets[i]
                if e == 0 { return nil }
                if e & 0xFFFF_FFFF_0000_0000 == fingerprint {
                    let slot = UInt32(truncatingIfNeeded: e) &- 1
                    if slot < slotCount, uuidOf(slot) == uuid { return slot }
                }
                i = (i + 1) & mask
            }
            return nil
        }
        return buckets.withUnsafeBufferPointer { b in
            while true {
                let e = b[i]
                if e == 0 { return nil }
                if e & 0xFFFF_FFFF_0000_0000 == fingerprint {
                    let slot = UInt32(truncatingIfNeeded: e) - 1
                    if uuidOf(slot) == uuid { return slot }
                }
                i = (i + 1) & mask
            }
        }
    }

    /// `insert(uuid, slot:uuidOf:)` reading UUIDs from the index's slot column, lent
    /// in place (the fold's path: no buffer of the column taken, retained and released).
    @inline(__always)
    mutating func insert(_ uuid: UUID, slot: UInt32, slots: Column<SampleIndex.Slot>) {
        insert(uuid, slot: slot) { slots[Int($0)].uuid }
    }

    /// Adds `uuid` → `slot`. Precondition: `uuid` is not in the table (the rules refuse
    /// a UUID already saved); `slot` fits a bucket (below `UInt32.max`, whose `slot + 1`
    /// would not).
    @inline(__always)
    mutating func insert(_ uuid: UUID, slot: UInt32, uuidOf: (UInt32) -> UUID) {
        precondition(slot < UInt32.max, "a slot fits a bucket (slot + 1 is below 2^32)")
        if (count + 1) * 10 > buckets.count * 8 { grow(uuidOf: uuidOf) }
        // The probe passes every bucket a lookup of `uuid` would: an entry with its
        // fingerprint (rare unless it is the UUID) is compared, so the check is ~free.
        place(Self.hash(uuid), slot: slot) { uuidOf($0) == uuid }
        count += 1
    }

    /// The fingerprint half of an entry for hash `h`: its high 32 bits, the low bit set
    /// (so that no entry is zero, the empty bucket).
    @inline(__always)
    private static func fingerprint(_ h: UInt64) -> UInt64 {
        UInt64(UInt32(truncatingIfNeeded: h >> 32) | 1) << 32
    }

    /// Puts an entry for `slot` (below `UInt32.max`: `insert` made sure) in the first
    /// empty bucket from `h`'s. Precondition: no entry passed on the way, of the same
    /// fingerprint, is of a slot `holdsTheUUID` (a UUID maps to exactly one slot).
    @inline(__always)
    private mutating func place(_ h: UInt64, slot: UInt32, holdsTheUUID: (UInt32) -> Bool = { _ in false }) {
        let fingerprint = Self.fingerprint(h)
        let mask = buckets.count - 1
        var i = Int(truncatingIfNeeded: h) & mask
        buckets.withUnsafeMutableBufferPointer { b in
            while b[i] != 0 {
                precondition(b[i] & 0xFFFF_FFFF_0000_0000 != fingerprint || !holdsTheUUID(UInt32(truncatingIfNeeded: b[i]) - 1),
                             "a UUID maps to exactly one slot (SampleIndex.uuidFindsItsSlot)")
                i = (i + 1) & mask
            }
            b[i] = fingerprint | UInt64(slot) + 1
        }
    }

    /// Doubles the buckets and places every entry again. The slots are taken in
    /// ascending order (marked in a bitset from the old buckets, then read out), so
    /// their UUIDs are read in the order they lie in the slot column: read in bucket
    /// order, each was a cache miss in a column of millions (a replay growing the table
    /// of 800,000 slots once spent 0.18 s here). Placed in another order, entries may
    /// sit in other buckets of a run; lookups find them the same (the table's contents
    /// are its entries, not their buckets: `==` and the digest never read buckets).
    private mutating func grow(uuidOf: (UInt32) -> UUID) {
        let old = buckets.array
        buckets = Column(Self.zeroedBuckets(old.count * 2))
        var highest: UInt32 = 0
        for e in old where e != 0 { highest = max(highest, UInt32(truncatingIfNeeded: e) - 1) }
        // Slots are dense in a sound table (0 ..< count): the bitset is count / 8 bytes.
        // A table whose slots are not (none is built so) is placed in bucket order.
        guard Int(highest) < 2 * max(count, 1) + 64 else {
            for e in old where e != 0 {
                let slot = UInt32(truncatingIfNeeded: e) - 1
                place(Self.hash(uuidOf(slot)), slot: slot)
            }
            return
        }
        var marked = [UInt64](repeating: 0, count: Int(highest) / 64 + 1)
        for e in old where e != 0 {
            let slot = Int(UInt32(truncatingIfNeeded: e) - 1)
            marked[slot >> 6] |= 1 << UInt64(slot & 63)
        }
        for (w, word) in marked.enumerated() {
            var bits = word
            while bits != 0 {
                let slot = UInt32(w << 6 + bits.trailingZeroBitCount)
                bits &= bits - 1
                place(Self.hash(uuidOf(slot)), slot: slot)
            }
        }
    }
}


extension UUIDTable {
    /// The table's invariants, named as `checkInvariants(slotCount:)` reports them.
    package enum Invariant: String, CaseIterable, Sendable {
        /// The bucket count is a power of two (the probe masks with `count − 1`).
        case bucketsPowerOfTwo = "UUIDTable.bucketsPowerOfTwo"
        /// At most 80 % of the buckets are used (`insert` grows before; a probe of a
        /// full table would never meet an empty bucket).
        case loadAtMost80Percent = "UUIDTable.loadAtMost80Percent"
        /// `count` is the number of nonempty buckets.
        case countIsNonemptyBuckets = "UUIDTable.countIsNonemptyBuckets"
        /// Every nonempty bucket names a slot: `slot + 1` in `1...slotCount`, with the
        /// fingerprint's low bit set.
        case entriesNameSlots = "UUIDTable.entriesNameSlots"
    }

    /// Every invariant the table breaks for an index of `slotCount` slots (empty:
    /// none). Reads every bucket: for a mapped table, every block (tests only).
    func checkInvariants(slotCount: Int) -> [InvariantViolation] {
        var found = InvariantFindings<Invariant>()
        if buckets.count.nonzeroBitCount != 1 { found.note(.bucketsPowerOfTwo, "\(buckets.count) buckets") }
        if count * 10 > buckets.count * 8 { found.note(.loadAtMost80Percent, "\(count) entries in \(buckets.count) buckets") }
        var nonempty = 0
        buckets.withUnsafeBufferPointer { b in
            var i = 0
            while i < b.count {
                let e = b[i]
                if e != 0 {
                    nonempty += 1
                    let slotPlusOne = UInt32(truncatingIfNeeded: e)
                    if slotPlusOne == 0 || Int(slotPlusOne) > slotCount || e >> 32 & 1 == 0 {
                        found.note(.entriesNameSlots, "bucket \(i) holds 0x\(String(e, radix: 16)) with \(slotCount) slots")
                    }
                }
                i += 1
            }
        }
        if nonempty != count { found.note(.countIsNonemptyBuckets, "count \(count), \(nonempty) nonempty buckets") }
        return found.violations
    }
}

/// Transparent huge pages for large, randomly accessed or freshly loaded buffers.
package enum HugePages {
    /// Asks for 2 MiB pages over the aligned middle of `buffer` before it is touched:
    /// fewer page faults to fill it, fewer TLB misses to use it. A hint only.
    package static func advise(_ buffer: UnsafeMutableRawBufferPointer) {
        #if canImport(Glibc)
        guard buffer.count >= 4 << 20, let base = buffer.baseAddress else { return }
        let huge = 2 << 20
        let start = (Int(bitPattern: base) + huge - 1) & ~(huge - 1)
        let end = (Int(bitPattern: base) + buffer.count) & ~(huge - 1)
        if end > start { _ = madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, 14 /* MADV_HUGEPAGE */) }
        #endif
    }
}
