/// CRC-32 as zip and gzip use it (IEEE 802.3, reflected polynomial 0xEDB88320),
/// slicing by 8. Check value: CRC-32("123456789") = 0xCBF43926.
public struct CRC32: Sendable {
    /// The running value before the final inversion.
    private var state: UInt32 = 0xFFFF_FFFF

    public init() {}

    /// The CRC of everything given so far.
    public var value: UInt32 { ~state }

    /// One-shot.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var c = CRC32()
        let array = Array(bytes)
        array.withUnsafeBytes { c.update($0) }
        return c.value
    }

    private static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            t[i] = c
        }
        for i in 0..<256 {
            for k in 1..<8 { t[k * 256 + i] = (t[(k - 1) * 256 + i] >> 8) ^ t[Int(t[(k - 1) * 256 + i] & 0xFF)] }
        }
        return t
    }()

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var p = bytes.baseAddress else { return }
        var n = bytes.count
        var c = state
        Self.tables.withUnsafeBufferPointer { t in
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
        state = c
    }
}
