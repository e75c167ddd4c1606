import Foundation
import Testing
import LedgerChecksums
@testable import LedgerCore
import TestSupport

/// `DigestWriter` hashes what it is fed, in order, across as many of its buffers as it
/// takes: the digest is SHA-256 of exactly the canonical bytes.
struct DigestWriterTests {
    /// Feeds `count` seeded fields of every kind to `d` and appends their canonical bytes
    /// to `bytes` (little-endian integers, length-prefixed strings).
    static func feed(_ d: inout DigestWriter, _ bytes: inout [UInt8], count: Int, seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        func le<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
        for i in 0..<count {
            let r = rng.next()
            switch r % 7 {
            case 0: d.u8(UInt8(truncatingIfNeeded: r >> 8)); le(UInt8(truncatingIfNeeded: r >> 8))
            case 1: d.u16(UInt16(truncatingIfNeeded: r >> 8)); le(UInt16(truncatingIfNeeded: r >> 8))
            case 2: d.u32(UInt32(truncatingIfNeeded: r >> 8)); le(UInt32(truncatingIfNeeded: r >> 8))
            case 3: d.u64(r); le(r)
            case 4: d.f64(Double(i) / 3); le((Double(i) / 3).bitPattern)
            case 5:
                let u = UUID()
                d.uuid(u)
                withUnsafeBytes(of: u.uuid) { bytes.append(contentsOf: $0) }
            default:
                // Strings short and long: some cross a buffer's end, some are longer than a buffer.
                let length = r % 40_000 == 0 ? Int(r >> 40) % (3 << 20) : Int(r >> 8) % 40
                let s = String(repeating: "é", count: length / 2) + String(repeating: "x", count: length % 2)
                d.string(s)
                le(UInt64(s.utf8.count))
                bytes.append(contentsOf: Array(s.utf8))
            }
        }
    }

    @Test(arguments: [0, 1, 1000, 100_000, 400_000])
    func theDigestIsTheHashOfTheBytesFed(fields: Int) {
        var d = DigestWriter()
        var bytes: [UInt8] = []
        Self.feed(&d, &bytes, count: fields, seed: UInt64(fields) + 3)
        #expect(d.finalize() == SHA256.hash(bytes), "\(fields) fields, \(bytes.count) bytes")
        if fields == 400_000 { #expect(bytes.count > 3 << 20) }  // many buffers, some strings longer than one
    }

    /// Strings of a mebibyte and 8 bytes either side (each a multiple of the 64 KiB
    /// buffer, or just off one) and small fields between them, up to 4 MiB a round.
    @Test func buffersFilledToTheirEdgesHashTheBytesFed() {
        var rng = SeededGenerator(seed: 5)
        for round in 0..<30 {
            var d = DigestWriter()
            var bytes: [UInt8] = []
            let total = Int(rng.next() % UInt64(4 << 20))
            let chunk = [1 << 20, (1 << 20) - 8, (1 << 20) + 8, 16, 3][round % 5]
            var fed = 0
            while fed < total {
                let s = String(repeating: "q", count: min(chunk, total - fed))
                d.string(s)
                withUnsafeBytes(of: UInt64(s.utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
                bytes.append(contentsOf: s.utf8)
                d.u64(UInt64(fed))
                withUnsafeBytes(of: UInt64(fed).littleEndian) { bytes.append(contentsOf: $0) }
                fed += chunk
            }
            #expect(d.finalize() == SHA256.hash(bytes), "round \(round), \(bytes.count) bytes")
        }
    }
}
