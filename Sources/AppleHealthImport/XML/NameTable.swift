import Glibc
import Foundation  // Thread (the reading-ahead thread)

/// Interned names in unsafe storage (see `XMLScanner`): an open-addressing table of
/// indexes into a byte pool.
struct NameTable {
    private var slots: UnsafeMutablePointer<Int32>
    private var mask: Int
    private var offsets: [Int] = []
    private var lengths: [Int] = []
    private var hashes: [UInt64] = []
    private var pool: UnsafeMutablePointer<UInt8>
    private var poolCapacity = 1 << 16
    private var poolCount = 0
    private(set) var count = 0
    /// Set when a name that is not well-formed UTF-8 was added (the scanner then
    /// refuses the tag that holds it; checked once per new name, not per tag).
    private(set) var hasInvalidName = false

    init() {
        mask = 1023
        slots = .allocate(capacity: 1024)
        slots.initialize(repeating: -1, count: 1024)
        pool = .allocate(capacity: poolCapacity)
    }

    func release() {
        slots.deallocate()
        pool.deallocate()
    }

    func name(_ id: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: pool + offsets[id], count: lengths[id]), as: UTF8.self)
    }

    @inline(__always)
    static func hash(_ p: UnsafePointer<UInt8>, _ n: Int) -> UInt64 {
        var h = UInt64(n) &* 0x9E37_79B9_7F4A_7C15
        if n >= 8 {
            h ^= UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)
            h = (h ^ (h >> 29)) &* 0xBF58_476D_1CE4_E5B9
            h ^= UnsafeRawPointer(p + n - 8).loadUnaligned(as: UInt64.self)
        } else {
            for i in 0..<n { h = (h ^ UInt64(p[i])) &* 0x100_0000_01B3 }
        }
        h = (h ^ (h >> 32)) &* 0x94D0_49BB_1331_11EB
        return h ^ (h >> 29)
    }

    /// The id of the `n` bytes at `p`, adding the name when new.
    @inline(__always)
    mutating func id(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int {
        id(p, n, hash: Self.hash(p, n))
    }

    /// The id of the `n` bytes at `p` whose hash the caller computed (any good
    /// 64-bit hash, used consistently for the table).
    @inline(__always)
    mutating func id(_ p: UnsafePointer<UInt8>, _ n: Int, hash h: UInt64) -> Int {
        var i = Int(truncatingIfNeeded: h) & mask
        while true {
            let k = Int(slots[i])
            if k < 0 { break }
            if hashes[k] == h && lengths[k] == n && Self.equal(pool + offsets[k], p, n) { return k }
            i = (i + 1) & mask
        }
        return add(p, n, h, slot: i)
    }

    @inline(__always)
    static func equal(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        if n >= 8 && n <= 16 {
            let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b)
            return ra.loadUnaligned(as: UInt64.self) == rb.loadUnaligned(as: UInt64.self)
                && (ra + n - 8).loadUnaligned(as: UInt64.self) == (rb + n - 8).loadUnaligned(as: UInt64.self)
        }
        return memcmp(a, b, n) == 0
    }

    private mutating func add(_ p: UnsafePointer<UInt8>, _ n: Int, _ h: UInt64, slot: Int) -> Int {
        if poolCount + n > poolCapacity {
            var newCapacity = poolCapacity * 2
            while poolCount + n > newCapacity { newCapacity *= 2 }
            let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
            bigger.update(from: pool, count: poolCount)
            pool.deallocate()
            pool = bigger
            poolCapacity = newCapacity
        }
        (pool + poolCount).update(from: p, count: n)
        if ScannerState.invalidUTF8(p, 0, n) != nil { hasInvalidName = true }
        let k = count
        offsets.append(poolCount)
        lengths.append(n)
        hashes.append(h)
        poolCount += n
        slots[slot] = Int32(k)
        count += 1
        if count * 2 > mask + 1 { rehash() }
        return k
    }

    private mutating func rehash() {
        let size = (mask + 1) * 2
        slots.deallocate()
        slots = .allocate(capacity: size)
        slots.initialize(repeating: -1, count: size)
        mask = size - 1
        for k in 0..<count {
            var i = Int(truncatingIfNeeded: hashes[k]) & mask
            while slots[i] >= 0 { i = (i + 1) & mask }
            slots[i] = Int32(k)
        }
    }
}

extension String {
    /// The text of UTF-8 bytes lent as a span (ill-formed bytes, which the scanner
    /// refuses before lending a value, would become U+FFFD).
    init(utf8 bytes: Span<UInt8>) {
        self = bytes.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
    }
}
