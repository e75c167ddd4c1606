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

    private static let software = SlicingBy8(reflectedPolynomial: 0xEDB8_8320)

    /// Continues with `bytes`.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        state = Self.software.update(state, bytes)
    }
}
