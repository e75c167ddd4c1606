import CLedgerAccel
import LedgerCore

/// A set of 64-bit fingerprints: open addressing with linear probing, grown at 80 %
/// load (so 10 to 20 bytes per member), 0 kept out of line. The importer's exact-repeat
/// and same-record counts, and the record identity's occurrence table, hold one
/// fingerprint per record of the export.
struct FingerprintSet {
    private var slots: [UInt64]
    private(set) var count = 0
    private var hasZero = false

    /// Room for about `capacity` members before it grows (sized from what is coming,
    /// so that no doubling — old and new table both in memory — happens on the way).
    init(capacity: Int = 800) {
        var size = 1024
        while size / 10 * 8 < capacity { size <<= 1 }
        slots = Self.table(size)
    }

    /// `size` empty slots, on huge pages when large (one probe per insert lands
    /// anywhere in a table of megabytes: fewer TLB misses).
    private static func table(_ size: Int) -> [UInt64] {
        // Capacity at least 1: an empty one writes into the shared empty-array storage (a
        // race ThreadSanitizer reports).
        [UInt64](unsafeUninitializedCapacity: max(1, size)) { buffer, initialized in
            HugePages.advise(UnsafeMutableRawBufferPointer(buffer))
            buffer.initialize(repeating: 0)
            initialized = size
        }
    }

    /// Starts loading the slot where `f`'s probe begins (the table is megabytes, its
    /// slots a cache miss each): for a caller that knows `f` a little before it inserts.
    /// (`mutating` only so that a caller reaching the set through a pointer lends it
    /// in place: a copy retains the table.)
    @inline(__always)
    mutating func prefetch(_ f: UInt64) {
        let i = Self.start(f, slots.count - 1)
        slots.withUnsafeMutableBufferPointer { hl_prefetch($0.baseAddress! + i) }
    }

    /// Inserts; false when it was already there.
    mutating func insert(_ f: UInt64) -> Bool {
        if f == 0 {
            defer { hasZero = true }
            return !hasZero
        }
        if (count + 1) * 10 > slots.count * 8 { grow() }
        let mask = slots.count - 1
        var i = Self.start(f, mask)
        return slots.withUnsafeMutableBufferPointer { s in
            while true {
                let v = s[i]
                if v == 0 {
                    s[i] = f
                    count += 1
                    return true
                }
                if v == f { return false }
                i = (i + 1) & mask
            }
        }
    }

    @inline(__always)
    private static func start(_ f: UInt64, _ mask: Int) -> Int {
        var h = f &* 0x9E37_79B9_7F4A_7C15
        h ^= h >> 29
        return Int(truncatingIfNeeded: h) & mask
    }

    private mutating func grow() {
        let old = slots
        slots = Self.table(old.count * 2)
        let mask = slots.count - 1
        slots.withUnsafeMutableBufferPointer { s in
            for f in old where f != 0 {
                var i = Self.start(f, mask)
                while s[i] != 0 { i = (i + 1) & mask }
                s[i] = f
            }
        }
    }
}
