import Foundation
import LedgerChecksums
import LedgerLog

/// Feeds a canonical serialization of projections into SHA-256: fixed-width
/// little-endian integers, length-prefixed UTF-8 strings, named sections with
/// counts. Every projection feeds itself in a defined order (slot order, sorted
/// keys), never hash-map order, so the same log gives the same digest on every run
/// and machine.
struct DigestWriter: ~Copyable {
    private var hash = SHA256()
    private let buffer: UnsafeMutableRawBufferPointer
    private var used = 0
    private static let capacity = 1 << 16

    init() { buffer = .allocate(byteCount: Self.capacity, alignment: 8) }

    deinit { buffer.deallocate() }

    @inline(__always)
    private mutating func room(_ n: Int) {
        if used + n > Self.capacity {
            hash.update(UnsafeRawBufferPointer(rebasing: buffer[0..<used]))
            used = 0
        }
    }

    @inline(__always)
    private mutating func put<T: FixedWidthInteger>(_ v: T) {
        room(MemoryLayout<T>.size)
        buffer.storeBytes(of: v.littleEndian, toByteOffset: used, as: T.self)
        used += MemoryLayout<T>.size
    }

    mutating func u8(_ v: UInt8) { put(v) }
    mutating func u16(_ v: UInt16) { put(v) }
    mutating func u32(_ v: UInt32) { put(v) }
    mutating func u64(_ v: UInt64) { put(v) }
    mutating func i64(_ v: Int64) { put(UInt64(bitPattern: v)) }
    mutating func f64(_ v: Double) { put(v.bitPattern) }
    mutating func bool(_ v: Bool) { put(UInt8(v ? 1 : 0)) }
    mutating func uuid(_ u: UUID) { uuid(u.uuid) }
    /// A UUID's 16 bytes, as `uuid(_:)` writes them.
    mutating func uuid(_ bytes: uuid_t) {
        room(16)
        withUnsafeBytes(of: bytes) { (buffer.baseAddress! + used).copyMemory(from: $0.baseAddress!, byteCount: 16) }
        used += 16
    }
    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { u in
            u64(UInt64(u.count))
            var rest = UnsafeRawBufferPointer(u)
            while !rest.isEmpty {
                room(1)
                let n = min(rest.count, Self.capacity - used)
                (buffer.baseAddress! + used).copyMemory(from: rest.baseAddress!, byteCount: n)
                used += n
                rest = UnsafeRawBufferPointer(rebasing: rest[n...])
            }
        }
    }
    /// A length-prefixed byte string.
    mutating func bytes(_ b: [UInt8]) {
        u64(UInt64(b.count))
        for byte in b { u8(byte) }
    }
    mutating func optionalString(_ s: String?) {
        if let s { u8(1); string(s) } else { u8(0) }
    }
    mutating func section(_ name: String, count: Int) {
        string(name)
        u64(UInt64(count))
    }

    consuming func finalize() -> SHA256Digest {
        hash.update(UnsafeRawBufferPointer(rebasing: buffer[0..<used]))
        used = 0
        return hash.finalize()
    }
}
