import CLedgerAccel
import Foundation
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
        [UInt64](unsafeUninitializedCapacity: count) { buffer, initialized in
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
        let fingerprint = UInt64(UInt32(truncatingIfNeeded: h >> 32) | 1) << 32
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

    /// Adds `uuid` → `slot`. Precondition: `uuid` is not in the table.
    @inline(__always)
    mutating func insert(_ uuid: UUID, slot: UInt32, uuidOf: (UInt32) -> UUID) {
        if (count + 1) * 10 > buckets.count * 8 { grow(uuidOf: uuidOf) }
        place(Self.hash(uuid), slot: slot)
        count += 1
    }

    private mutating func place(_ h: UInt64, slot: UInt32) {
        let entry = UInt64(UInt32(truncatingIfNeeded: h >> 32) | 1) << 32 | UInt64(slot + 1)
        let mask = buckets.count - 1
        var i = Int(truncatingIfNeeded: h) & mask
        buckets.withUnsafeMutableBufferPointer { b in
            while b[i] != 0 { i = (i + 1) & mask }
            b[i] = entry
        }
    }

    private mutating func grow(uuidOf: (UInt32) -> UUID) {
        let old = buckets.array
        buckets = Column(Self.zeroedBuckets(old.count * 2))
        for e in old where e != 0 {
            let slot = UInt32(truncatingIfNeeded: e) - 1
            place(Self.hash(uuidOf(slot)), slot: slot)
        }
    }
}


/// Transparent huge pages for large, randomly accessed or freshly loaded buffers.
enum HugePages {
    /// Asks for 2 MiB pages over the aligned middle of `buffer` before it is touched:
    /// fewer page faults to fill it, fewer TLB misses to use it. A hint only.
    static func advise(_ buffer: UnsafeMutableRawBufferPointer) {
        #if canImport(Glibc)
        guard buffer.count >= 4 << 20, let base = buffer.baseAddress else { return }
        let huge = 2 << 20
        let start = (Int(bitPattern: base) + huge - 1) & ~(huge - 1)
        let end = (Int(bitPattern: base) + buffer.count) & ~(huge - 1)
        if end > start { _ = madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, 14 /* MADV_HUGEPAGE */) }
        #endif
    }
}
