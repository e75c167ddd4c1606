import Testing
import LedgerChecksums
@testable import LedgerLog

struct ChecksumTests {
    static func crcBoth(_ bytes: [UInt8]) -> (hardware: UInt32, software: UInt32) {
        let sw = bytes.withUnsafeBytes { ~CRC32C.updateSoftware(0xFFFF_FFFF, $0) }
        return (CRC32C.checksum(bytes), sw)
    }

    @Test func crc32cCheckValue() {
        let (hw, sw) = Self.crcBoth(Array("123456789".utf8))
        #expect(hw == 0xE306_9283)
        #expect(sw == 0xE306_9283)
    }

    /// RFC 3720 (iSCSI), appendix B.4.
    @Test(arguments: [([UInt8], UInt32)]([
        ([UInt8](repeating: 0, count: 32), UInt32(0x8A91_36AA)),
        ([UInt8](repeating: 0xFF, count: 32), UInt32(0x62A8_AB43)),
        ((0..<32).map { UInt8($0) }, UInt32(0x46DD_794E)),
        ((0..<32).reversed().map { UInt8($0) }, UInt32(0x113F_DB5C)),
        ([0x01, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
          0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
          0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00] as [UInt8], UInt32(0xD996_3A56)),
    ]))
    func crc32cRFC3720Vectors(bytes: [UInt8], expected: UInt32) {
        let (hw, sw) = Self.crcBoth(bytes)
        #expect(hw == expected)
        #expect(sw == expected)
    }

    @Test func crc32cHardwareAndSoftwareAgreeOnRandomInputs() {
        var rng = SeededRandom(seed: 7)
        for length in [0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 1000, 4097] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let (hw, sw) = Self.crcBoth(bytes)
            #expect(hw == sw, "length \(length)")
            // running updates over any split equal the one-shot value
            let split = length / 3
            let running = bytes.withUnsafeBytes { b in
                ~CRC32C.update(CRC32C.update(0xFFFF_FFFF, UnsafeRawBufferPointer(rebasing: b[0..<split])),
                               UnsafeRawBufferPointer(rebasing: b[split...]))
            }
            #expect(running == hw)
        }
    }

    static func sha(_ bytes: [UInt8], software: Bool) -> String {
        var h = SHA256(forceSoftware: software)
        h.update(bytes)
        return h.finalize().hex
    }

    /// FIPS 180-4 / NIST example values.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func sha256Vectors(message: String, digest: String) {
        #expect(Self.sha(Array(message.utf8), software: false) == digest)
        #expect(Self.sha(Array(message.utf8), software: true) == digest)
    }

    @Test func sha256OneMillionA() {
        let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        let million = [UInt8](repeating: 0x61, count: 1_000_000)
        #expect(Self.sha(million, software: false) == expected)
        #expect(Self.sha(million, software: true) == expected)
        // fed in uneven pieces
        var h = SHA256()
        var i = 0
        var step = 1
        while i < million.count {
            let n = min(step, million.count - i)
            million.withUnsafeBytes { h.update(UnsafeRawBufferPointer(rebasing: $0[i..<i + n])) }
            i += n
            step = step * 3 % 1000 + 1
        }
        #expect(h.finalize().hex == expected)
    }

    @Test func sha256HardwareAndSoftwareAgreeOnRandomInputs() {
        var rng = SeededRandom(seed: 11)
        for length in [55, 56, 63, 64, 65, 119, 120, 127, 128, 1000, 10_000] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(Self.sha(bytes, software: false) == Self.sha(bytes, software: true), "length \(length)")
        }
    }

    @Test func digestHexRoundTrips() {
        let d = SHA256.hash(Array("abc".utf8))
        #expect(SHA256Digest(hex: d.hex) == d)
        #expect(SHA256Digest(hex: "zz") == nil)
    }
}
