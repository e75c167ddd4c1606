import Glibc
import Testing
@testable import LedgerCrypto

/// Sealing and opening: every altered bit refused, truncation and wrong lengths
/// refused with their own errors, round trips at the lengths around block and tag
/// boundaries, the buffer variants, and the length limit.
@Suite struct AEADTests {
    static let key = try! SealKey(bytes: hex(RFC8439.highKey))
    static let nonce = try! SealNonce(bytes: hex("07 00 00 00 40 41 42 43 44 45 46 47"))
    static let aad = try! hex("50 51 52 53 c0 c1 c2 c3 c4 c5 c6 c7")
    static let plaintext = try! hex(RFC8439.sunscreen)

    static func sealed() throws -> [UInt8] {
        try ChaCha20Poly1305.seal(plaintext: plaintext, key: key, nonce: nonce, associatedData: aad)
    }

    static func open(_ sealed: [UInt8], key: SealKey = key, nonce: SealNonce = nonce, aad: [UInt8] = aad) throws(SealError) -> [UInt8] {
        try ChaCha20Poly1305.open(sealed: sealed, key: key, nonce: nonce, associatedData: aad)
    }

    // MARK: Refusals

    /// Every one of the 128 tag bits, every ciphertext bit and every AAD bit, flipped
    /// alone, makes `open` refuse.
    @Test func everyFlippedBitIsRefused() throws {
        let sealed = try Self.sealed()
        #expect(try Self.open(sealed) == Self.plaintext)
        var refused = 0
        for bit in 0..<(8 * sealed.count) {  // ciphertext bits, then the tag's
            var altered = sealed
            altered[bit / 8] ^= 1 << UInt8(bit % 8)
            #expect(throws: SealError.authenticationFailed, "bit \(bit)") { try Self.open(altered) }
            refused += 1
        }
        for bit in 0..<(8 * Self.aad.count) {
            var aad = Self.aad
            aad[bit / 8] ^= 1 << UInt8(bit % 8)
            #expect(throws: SealError.authenticationFailed, "AAD bit \(bit)") { try Self.open(sealed, aad: aad) }
            refused += 1
        }
        #expect(refused == 8 * (114 + 16) + 8 * 12)
    }

    @Test func alteredLengthsAreRefused() throws {
        let sealed = try Self.sealed()
        #expect(throws: SealError.authenticationFailed) { try Self.open(sealed + [0]) }
        #expect(throws: SealError.authenticationFailed) { try Self.open(Array(sealed.dropFirst())) }
        #expect(throws: SealError.authenticationFailed) { try Self.open(Array(sealed.dropLast())) }
        #expect(throws: SealError.authenticationFailed) { try Self.open(sealed, aad: []) }
        #expect(throws: SealError.authenticationFailed) { try Self.open(sealed, aad: Self.aad + [0]) }
        #expect(throws: SealError.authenticationFailed) { try Self.open(sealed, aad: Array(Self.aad.dropLast())) }
        // The AAD moved into the ciphertext's place and back: the lengths block tells.
        let empty = try ChaCha20Poly1305.seal(plaintext: [], key: Self.key, nonce: Self.nonce, associatedData: Self.aad)
        #expect(throws: SealError.authenticationFailed) { try Self.open(empty, aad: []) }
    }

    @Test func wrongKeyOrNonceIsRefused() throws {
        let sealed = try Self.sealed()
        for bit in 0..<256 {
            var bytes = Self.key.bytes
            bytes[bit / 8] ^= 1 << UInt8(bit % 8)
            let key = try SealKey(bytes: bytes)
            #expect(throws: SealError.authenticationFailed, "key bit \(bit)") { try Self.open(sealed, key: key) }
        }
        for bit in 0..<96 {
            var bytes = Self.nonce.bytes
            bytes[bit / 8] ^= 1 << UInt8(bit % 8)
            let nonce = try SealNonce(bytes: bytes)
            #expect(throws: SealError.authenticationFailed, "nonce bit \(bit)") { try Self.open(sealed, nonce: nonce) }
        }
        #expect(throws: SealError.authenticationFailed) { try Self.open(sealed, key: SealKey.random()) }
    }

    /// Fewer bytes than a tag: `.truncated`, with the length, before anything is read.
    @Test func truncatedInputIsRefused() throws {
        let sealed = try Self.sealed()
        for length in 0..<16 {
            #expect(throws: SealError.truncated(length: length)) { try Self.open(Array(sealed.prefix(length))) }
            #expect(throws: SealError.truncated(length: length)) { try Self.open(Array(sealed.suffix(length))) }
        }
        // Exactly a tag is a well-formed empty message: authenticated or refused, not truncated.
        #expect(throws: SealError.authenticationFailed) { try Self.open(Array(sealed.suffix(16))) }
        let empty = try ChaCha20Poly1305.seal(plaintext: [], key: Self.key, nonce: Self.nonce, associatedData: Self.aad)
        #expect(empty.count == 16)
        #expect(try Self.open(empty) == [])
    }

    // MARK: Round trips

    static let lengths = [0, 1, 15, 16, 17, 63, 64, 65, 1000, 65537]

    @Test(arguments: lengths) func roundTrip(_ length: Int) throws {
        var rng = SplitMix64(state: UInt64(length))
        let key = try SealKey.random()
        let plaintext = rng.bytes(length), aad = rng.bytes(length % 40)
        let nonce = SealNonce(prefix: 1, counter: UInt64(length))
        let sealed = try ChaCha20Poly1305.seal(plaintext: plaintext, key: key, nonce: nonce, associatedData: aad)
        #expect(sealed.count == length + 16)
        if length >= 16 { #expect(Array(sealed.prefix(length)) != plaintext) }
        #expect(try ChaCha20Poly1305.open(sealed: sealed, key: key, nonce: nonce, associatedData: aad) == plaintext)
        // The keystream is the nonce's: another nonce, another ciphertext and tag.
        let other = try ChaCha20Poly1305.seal(plaintext: plaintext, key: key, nonce: SealNonce(prefix: 2, counter: UInt64(length)),
                                              associatedData: aad)
        #expect(Array(other.suffix(16)) != Array(sealed.suffix(16)))
    }

    /// The buffer variants give the arrays' bytes, apart and in place.
    @Test(arguments: lengths) func bufferRoundTrip(_ length: Int) throws {
        var rng = SplitMix64(state: 0xb0f + UInt64(length))
        let key = try SealKey(bytes: rng.bytes(32)), nonce = SealNonce(prefix: 9, counter: 9)
        let plaintext = rng.bytes(length), aad = rng.bytes(length % 33)
        let expected = try ChaCha20Poly1305.seal(plaintext: plaintext, key: key, nonce: nonce, associatedData: aad)

        var sealed = [UInt8](repeating: 0, count: length + 16)
        try unsafe plaintext.withUnsafeBytes { p in
            try unsafe aad.withUnsafeBytes { a in
                try unsafe sealed.withUnsafeMutableBytes { out in
                    try unsafe ChaCha20Poly1305.seal(plaintext: p, key: key, nonce: nonce, associatedData: a, into: out)
                }
            }
        }
        #expect(sealed == expected)

        var opened = [UInt8](repeating: 0, count: length)
        try unsafe sealed.withUnsafeBytes { s in
            try unsafe aad.withUnsafeBytes { a in
                try unsafe opened.withUnsafeMutableBytes { out in
                    try unsafe ChaCha20Poly1305.open(sealed: s, key: key, nonce: nonce, associatedData: a, into: out)
                }
            }
        }
        #expect(opened == plaintext)

        // In place: the plaintext at the front of a buffer with room for the tag.
        var buffer = plaintext + [UInt8](repeating: 0, count: 16)
        try unsafe aad.withUnsafeBytes { a in
            try unsafe buffer.withUnsafeMutableBytes { whole in
                let front = unsafe UnsafeRawBufferPointer(rebasing: whole[0..<length])
                try unsafe ChaCha20Poly1305.seal(plaintext: front, key: key, nonce: nonce, associatedData: a, into: whole)
            }
        }
        #expect(buffer == expected)
        try unsafe aad.withUnsafeBytes { a in
            try unsafe buffer.withUnsafeMutableBytes { whole in
                let front = unsafe UnsafeMutableRawBufferPointer(rebasing: whole[0..<length])
                try unsafe ChaCha20Poly1305.open(sealed: UnsafeRawBufferPointer(whole), key: key, nonce: nonce, associatedData: a,
                                                 into: front)
            }
        }
        #expect(Array(buffer.prefix(length)) == plaintext)
    }

    /// A refused message leaves the caller's output as it was: no unauthenticated
    /// plaintext is ever written.
    @Test func bufferOpenWritesNothingWhenRefused() throws {
        var sealed = try Self.sealed()
        sealed[3] ^= 0x40
        var output = [UInt8](repeating: 0xaa, count: sealed.count - 16)
        #expect(throws: SealError.authenticationFailed) {
            try unsafe sealed.withUnsafeBytes { s in
                try unsafe Self.aad.withUnsafeBytes { a in
                    try unsafe output.withUnsafeMutableBytes { out in
                        try unsafe ChaCha20Poly1305.open(sealed: s, key: Self.key, nonce: Self.nonce, associatedData: a, into: out)
                    }
                }
            }
        }
        #expect(output == [UInt8](repeating: 0xaa, count: sealed.count - 16))
    }

    @Test func bufferOutputOfAnotherLengthIsRefused() throws {
        let sealed = try Self.sealed()
        for delta in [-1, 1, -16, 16] {
            var output = [UInt8](repeating: 0xaa, count: Self.plaintext.count + 16 + delta)
            #expect(throws: SealError.badOutputLength(expected: 130, actual: 130 + delta)) {
                try unsafe Self.plaintext.withUnsafeBytes { p in
                    try unsafe output.withUnsafeMutableBytes { out in
                        try unsafe ChaCha20Poly1305.seal(plaintext: p, key: Self.key, nonce: Self.nonce,
                                                         associatedData: UnsafeRawBufferPointer(start: nil, count: 0), into: out)
                    }
                }
            }
            #expect(output.allSatisfy { $0 == 0xaa })
            var opened = [UInt8](repeating: 0xaa, count: 114 + delta)
            #expect(throws: SealError.badOutputLength(expected: 114, actual: 114 + delta)) {
                try unsafe sealed.withUnsafeBytes { s in
                    try unsafe Self.aad.withUnsafeBytes { a in
                        try unsafe opened.withUnsafeMutableBytes { out in
                            try unsafe ChaCha20Poly1305.open(sealed: s, key: Self.key, nonce: Self.nonce, associatedData: a, into: out)
                        }
                    }
                }
            }
            #expect(opened.allSatisfy { $0 == 0xaa })
        }
        // Truncated comes first, whatever the output.
        #expect(throws: SealError.truncated(length: 15)) {
            try unsafe sealed.withUnsafeBytes { s in
                try unsafe ChaCha20Poly1305.open(sealed: UnsafeRawBufferPointer(rebasing: s[0..<15]), key: Self.key, nonce: Self.nonce,
                                                 associatedData: UnsafeRawBufferPointer(start: nil, count: 0),
                                                 into: UnsafeMutableRawBufferPointer(start: nil, count: 0))
            }
        }
    }

    // MARK: The length limit

    @Test func maximumPlaintextIsTheRFCs() {
        #expect(ChaCha20Poly1305.maximumPlaintextLength == 274_877_906_880)  // P_MAX, §2.8
    }

    /// One byte past P_MAX is refused by sealing and opening, by its length alone:
    /// the input is 256 GiB of address space reserved, never touched (a read would
    /// find zeros, and take minutes).
    @Test func plaintextPastTheCounterIsRefused() throws {
        let length = ChaCha20Poly1305.maximumPlaintextLength + 1
        let mapped = unsafe mmap(nil, length + 16, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        guard unsafe mapped != MAP_FAILED, let region = unsafe mapped else {
            Issue.record("mmap of 256 GiB of address space (not memory) failed: errno \(errno)")
            return
        }
        defer { unsafe _ = munmap(region, length + 16) }
        let input = unsafe UnsafeRawBufferPointer(start: region, count: length)
        var output = [UInt8](repeating: 0xaa, count: 64)
        #expect(throws: SealError.counterOverflow(initialCounter: 1, length: length)) {
            try unsafe output.withUnsafeMutableBytes { out in
                try unsafe ChaCha20Poly1305.seal(plaintext: input, key: Self.key, nonce: Self.nonce,
                                                 associatedData: UnsafeRawBufferPointer(start: nil, count: 0), into: out)
            }
        }
        #expect(throws: SealError.counterOverflow(initialCounter: 1, length: length)) {
            try unsafe output.withUnsafeMutableBytes { out in
                try unsafe ChaCha20Poly1305.open(sealed: UnsafeRawBufferPointer(start: region, count: length + 16), key: Self.key,
                                                 nonce: Self.nonce, associatedData: UnsafeRawBufferPointer(start: nil, count: 0), into: out)
            }
        }
        #expect(output.allSatisfy { $0 == 0xaa })
        #expect(throws: SealError.counterOverflow(initialCounter: 1, length: length)) {
            try ChaCha20Poly1305.checkPlaintextLength(length)
        }
        #expect(throws: Never.self) { try ChaCha20Poly1305.checkPlaintextLength(length - 1) }
    }
}
