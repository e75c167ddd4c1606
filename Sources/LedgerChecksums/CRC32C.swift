import CLedgerAccel

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of iSCSI
/// (RFC 3720), ext4 and LevelDB. Checked against CRC32C("123456789") = 0xE3069283
/// and the RFC 3720 B.4 vectors.
///
/// Uses the SSE4.2 CRC32 instruction when the CPU has it, else a slicing-by-8 table
/// implementation in Swift; both give identical results (tested).
public enum CRC32C {
    /// Whether the hardware path is in use on this machine.
    public static let usesHardware = hl_cpu_has_crc32c() == 1

    /// The CRC-32C of `bytes`.
    @inlinable
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        ~update(0xFFFF_FFFF, bytes)
    }

    /// The CRC-32C of a byte array.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    /// Continues a running CRC (pre-inversion form: start with 0xFFFFFFFF and
    /// invert the final value).
    @inlinable
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        if usesHardware { return hl_crc32c_update_hw(crc, base, bytes.count) }
        return updateSoftware(crc, bytes)
    }

    /// The portable implementation (slicing-by-8), always available.
    public static func updateSoftware(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var c = crc
        var i = 0
        let n = bytes.count
        tables.withUnsafeBufferPointer { t in
            while n - i >= 8 {
                let lo = c ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt32.self).littleEndian
                let hi = bytes.loadUnaligned(fromByteOffset: i + 4, as: UInt32.self).littleEndian
                c = t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                i += 8
            }
            while i < n {
                c = t[Int((c ^ UInt32(bytes[i])) & 0xFF)] ^ (c >> 8)
                i += 1
            }
        }
        return c
    }

    /// Eight 256-entry tables: table k maps a byte to its CRC contribution k bytes later.
    static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            t[i] = c
        }
        for i in 0..<256 {
            for k in 1..<8 {
                let previous = t[(k - 1) * 256 + i]
                t[k * 256 + i] = t[Int(previous & 0xFF)] ^ (previous >> 8)
            }
        }
        return t
    }()
}
