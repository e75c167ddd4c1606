import Testing
@testable import LedgerCore

/// `lengthPrefixed` writes in place; its bytes must be a varint length and the body,
/// at every length around the varint's byte boundaries.
struct ByteWriterTests {
    @Test(arguments: [0, 1, 127, 128, 129, 300, 16_383, 16_384, 70_000])
    func lengthPrefixedIsVarintThenBody(_ length: Int) {
        let body = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var w = ByteWriter()
        w.u8(0xAB)
        w.lengthPrefixed { $0.append(contentsOf: body) }
        w.u8(0xCD)
        var expected: [UInt8] = [0xAB]
        var v = UInt64(length)
        while v >= 0x80 {
            expected.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        expected.append(UInt8(v))
        expected += body
        expected.append(0xCD)
        #expect(w.bytes == expected)
    }

    /// Nested prefixes (a correlation's members inside a save) shift correctly too.
    @Test func nestedLengthPrefixes() {
        var w = ByteWriter()
        w.lengthPrefixed { outer in
            outer.lengthPrefixed { $0.append(contentsOf: [UInt8](repeating: 1, count: 130)) }
            outer.lengthPrefixed { $0.append(contentsOf: [2, 2]) }
        }
        let inner: [UInt8] = [0x82, 0x01] + [UInt8](repeating: 1, count: 130) + [0x02, 2, 2]
        #expect(w.bytes == [0x87, 0x01] + inner)  // 135 = 0x87 0x01
        #expect(inner.count == 135)
    }
}
