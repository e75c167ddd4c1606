import Testing
@testable import AppleHealthImport
import LedgerChecksums

/// CRC-32 (IEEE) against published check values.
struct CRC32Tests {
    @Test(arguments: [
        ("", 0x0000_0000 as UInt32),
        ("a", 0xE8B7_BE43),
        ("abc", 0x3524_41C2),
        ("123456789", 0xCBF4_3926),  // the catalogue check value (CRC-32/ISO-HDLC)
        ("The quick brown fox jumps over the lazy dog", 0x414F_A339),
    ])
    func checkValues(_ text: String, _ expected: UInt32) {
        #expect(CRC32.checksum(Array(text.utf8)) == expected)
    }

    @Test func incrementalEqualsOneShot() {
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        var c = CRC32()
        var i = 0
        for step in [1, 7, 8, 9, 63, 1000, 4096] where i < bytes.count {
            let end = min(bytes.count, i + step)
            bytes[i..<end].withUnsafeBytes { c.update($0) }
            i = end
        }
        bytes[i...].withUnsafeBytes { c.update($0) }
        #expect(c.value == CRC32.checksum(bytes))
    }
}
