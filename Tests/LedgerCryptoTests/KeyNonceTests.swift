import Glibc
import Testing
@testable import LedgerCrypto

/// Keys and nonces: only their lengths are representable, their bytes round-trip,
/// random keys come from the system and their failures are typed.
@Suite struct KeyNonceTests {
    @Test func keyLengthIsChecked() throws {
        for length in [0, 1, 16, 31, 33, 64] {
            #expect(throws: SealError.badKeyLength(length)) { try SealKey(bytes: [UInt8](repeating: 1, count: length)) }
        }
        let bytes = try hex(RFC8439.appendixKey)
        #expect(try SealKey(bytes: bytes).bytes == bytes)
        #expect(try SealKey(bytes: bytes[...]).bytes == bytes)  // any collection
    }

    @Test func nonceLengthIsChecked() throws {
        for length in [0, 8, 11, 13, 16, 24] {
            #expect(throws: SealError.badNonceLength(length)) { try SealNonce(bytes: [UInt8](repeating: 1, count: length)) }
        }
        let bytes = try hex("00 00 00 00 01 02 03 04 05 06 07 08")
        let nonce = try SealNonce(bytes: bytes)
        #expect(nonce.bytes == bytes)
        #expect(nonce.description == "SealNonce(000000000102030405060708)")
        #expect(nonce == (try SealNonce(bytes: bytes)))
        #expect(nonce != SealNonce(prefix: 0, counter: 0))
    }

    /// prefix ‖ counter, little-endian.
    @Test func nonceFromPrefixAndCounter() throws {
        let nonce = SealNonce(prefix: 0x0403_0201, counter: 0x0c0b_0a09_0807_0605)
        #expect(nonce.bytes == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
        #expect(SealNonce(prefix: 0, counter: 1) != SealNonce(prefix: 0, counter: 1 << 32))
        #expect(SealNonce(prefix: 1, counter: 0) != SealNonce(prefix: 0, counter: 1))
    }

    @Test func keyTextShowsNoBytes() throws {
        let key = try SealKey(bytes: [UInt8](repeating: 0xab, count: 32))
        for text in [key.description, String(describing: key), String(reflecting: key), "\(key)"] {
            #expect(text == "SealKey(redacted)")
        }
        var dumped = ""
        dump(key, to: &dumped)
        #expect(!dumped.contains("171") && !dumped.lowercased().contains("ab"), "\(dumped)")
    }

    @Test func randomKeysAreFromTheSystem() throws {
        let keys = try (0..<8).map { _ in try SealKey.random().bytes }
        #expect(Set(keys).count == 8)
        #expect(keys.allSatisfy { $0.count == 32 })
        // 256 random bits with fewer than 64 or more than 192 ones: odds below 2^-60.
        let ones = keys.map { $0.reduce(0) { $0 + $1.nonzeroBitCount } }
        #expect(ones.allSatisfy { (64...192).contains($0) }, "\(ones)")
    }

    @Test func randomSourceFailureIsTyped() throws {
        var bytes = [UInt8](repeating: 0, count: 32)
        #expect(throws: SealError.randomSourceFailed(errno: EIO)) {
            try unsafe SystemRandom.fill(&bytes) { _, _ in
                errno = EIO
                return -1
            }
        }
        // A kernel without getrandom: /dev/urandom instead.
        try unsafe SystemRandom.fill(&bytes) { _, _ in
            errno = ENOSYS
            return -1
        }
        #expect(bytes != [UInt8](repeating: 0, count: 32))
        // More than getentropy's 256 bytes a call: asked for in pieces.
        var large = [UInt8](repeating: 0, count: 1000)
        var calls: [Int] = []
        try unsafe SystemRandom.fill(&large) { pointer, count in
            calls.append(count)
            return unsafe getentropy(pointer, count)
        }
        #expect(calls == [256, 256, 256, 232])
        #expect(large.filter { $0 == 0 }.count < 30)

        #expect(throws: SealError.randomSourceFailed(errno: ENOENT)) {
            try SystemRandom.readDevURandom(&bytes, path: "/nonexistent/urandom")
        }
        #expect(throws: SealError.randomSourceFailed(errno: EIO)) {  // end of file: not a random device
            try SystemRandom.readDevURandom(&bytes, path: "/dev/null")
        }
    }
}
