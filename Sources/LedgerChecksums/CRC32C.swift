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
        software.update(crc, bytes)
    }

    static let software = SlicingBy8(reflectedPolynomial: 0x82F6_3B78)
}
