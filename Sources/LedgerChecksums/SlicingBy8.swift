/// A reflected 32-bit CRC in software, slicing by 8 (Intel's method): eight
/// 256-entry tables, table k mapping a byte to its contribution k bytes later, so
/// that eight bytes cost eight lookups and no branch. CRC-32 (zip) and CRC-32C's
/// portable path are this with their own polynomial.
struct SlicingBy8: Sendable {
    /// The eight tables, one after the other.
    let tables: [UInt32]

    /// The tables of the reflected polynomial `polynomial` (0xEDB88320 for CRC-32,
    /// 0x82F63B78 for CRC-32C).
    init(reflectedPolynomial polynomial: UInt32) {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ polynomial : c >> 1 }
            t[i] = c
        }
        for i in 0..<256 {
            for k in 1..<8 {
                let previous = t[(k - 1) * 256 + i]
                t[k * 256 + i] = t[Int(previous & 0xFF)] ^ (previous >> 8)
            }
        }
        tables = t
    }

    /// Continues a running CRC over `bytes` (pre-inversion form: start with
    /// 0xFFFFFFFF and invert the final value).
    func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard var p = bytes.baseAddress else { return crc }
        var n = bytes.count
        var c = crc
        tables.withUnsafeBufferPointer { t in
            let t = t.baseAddress!
            while n >= 8 {
                let lo = UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)) ^ c
                let hi = UInt32(littleEndian: (p + 4).loadUnaligned(as: UInt32.self))
                c = t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                p += 8
                n -= 8
            }
            while n > 0 {
                c = t[Int((c ^ UInt32(p.load(as: UInt8.self))) & 0xFF)] ^ (c >> 8)
                p += 1
                n -= 1
            }
        }
        return c
    }
}
