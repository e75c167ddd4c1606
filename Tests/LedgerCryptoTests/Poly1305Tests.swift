import Testing
@testable import LedgerCrypto

/// Poly1305 against RFC 8439 §2.5.2 and Appendix A.3, and against a plain reference;
/// the one-time key from ChaCha20 against §2.6.2 and Appendix A.4.
@Suite struct Poly1305Tests {
    @Test func example() throws {  // §2.5.2
        let key = try hex("""
            85:d6:be:78:57:55:6d:33:7f:44:52:fe:42:d5:06:a8:01:0
            3:80:8a:fb:0d:b2:fd:4a:bf:f6:af:41:49:f5:1b
            """)
        #expect(key.count == 32)
        #expect(Array(key[16...]) == (try hex("01:03:80:8a:fb:0d:b2:fd:4a:bf:f6:af:41:49:f5:1b")))
        #expect(Array(key[..<16]) == (try hex("85:d6:be:78:57:55:6d:33:7f:44:52:fe:42:d5:06:a8")))
        let message = try hex("""
            43 72 79 70 74 6f 67 72 61 70 68 69 63 20 46 6f
            72 75 6d 20 52 65 73 65 61 72 63 68 20 47 72 6f
            75 70
            """)
        #expect(message == Array("Cryptographic Forum Research Group".utf8))
        // Clamped r as a number: 806d5400e52447c036d555408bed685.
        let mac = unsafe key.withUnsafeBytes { unsafe Poly1305(key: $0.baseAddress!) }
        let r: UInt128 = UInt128(mac.r1) << 64 | UInt128(mac.r0)
        #expect(r == 0x806d_5400_e524_47c0_36d5_5540_8bed_685)
        #expect(try Poly1305.authenticate(message, oneTimeKey: key) == hex("a8:06:1d:c1:30:51:36:c6:c2:2b:8b:af:0c:01:27:a9"))
        #expect(ReferencePoly1305.mac(message, key: key) == (try hex("a8:06:1d:c1:30:51:36:c6:c2:2b:8b:af:0c:01:27:a9")))
    }

    struct Vector: Sendable, CustomTestStringConvertible {
        var number: Int
        var key: String
        var text: String
        var tag: String
        var testDescription: String { "A.3 #\(number)" }
    }

    static let zeros16 = String(repeating: "00 ", count: 16)

    /// A.3: #1–#4 with the one-time key in one dump, #5–#11 (the edge cases of partial
    /// reduction and carries) with r and s given apart: the key is R ‖ S.
    static let vectors: [Vector] = [
        Vector(number: 1, key: RFC8439.zeroKey, text: String(repeating: "00 ", count: 64), tag: zeros16),
        Vector(number: 2, key: zeros16 + "36 e5 f6 b5 c5 e0 60 70 f0 ef ca 96 22 7a 86 3e",
               text: RFC8439.ietfNote, tag: "36 e5 f6 b5 c5 e0 60 70 f0 ef ca 96 22 7a 86 3e"),
        Vector(number: 3, key: "36 e5 f6 b5 c5 e0 60 70 f0 ef ca 96 22 7a 86 3e " + zeros16,
               text: RFC8439.ietfNote, tag: "f3 47 7e 7c d9 54 17 af 89 a6 b8 79 4c 31 0c f0"),
        Vector(number: 4, key: RFC8439.appendixKey, text: RFC8439.jabberwocky,
               tag: "45 41 66 9a 7e aa ee 61 e7 08 dc 7c bc c5 eb 62"),
        Vector(number: 5, key: """
            02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            """, text: """
            FF FF FF FF FF FF FF FF FF FF FF FF FF FF FF FF
            """, tag: "03 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"),
        Vector(number: 6, key: """
            02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            FF FF FF FF FF FF FF FF FF FF FF FF FF FF FF FF
            """, text: """
            02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            """, tag: "03 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"),
        Vector(number: 7, key: """
            01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            """, text: """
            FF FF FF FF FF FF FF FF FF FF FF FF FF FF FF FF
            F0 FF FF FF FF FF FF FF FF FF FF FF FF FF FF FF
            11 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            """, tag: "05 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"),
        Vector(number: 8, key: """
            01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            """, text: """
            FF FF FF FF FF FF FF FF FF FF FF FF FF FF FF FF
            FB FE FE FE FE FE FE FE FE FE FE FE FE FE FE FE
            01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01
            """, tag: "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"),
        Vector(number: 9, key: """
            02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            """, text: """
            FD FF FF FF FF FF FF FF FF FF FF FF FF FF FF FF
            """, tag: "FA FF FF FF FF FF FF FF FF FF FF FF FF FF FF FF"),
        Vector(number: 10, key: """
            01 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00
            00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            """, text: """
            E3 35 94 D7 50 5E 43 B9 00 00 00 00 00 00 00 00
            33 94 D7 50 5E 43 79 CD 01 00 00 00 00 00 00 00
            00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            """, tag: "14 00 00 00 00 00 00 00 55 00 00 00 00 00 00 00"),
        Vector(number: 11, key: """
            01 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00
            00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            """, text: """
            E3 35 94 D7 50 5E 43 B9 00 00 00 00 00 00 00 00
            33 94 D7 50 5E 43 79 CD 01 00 00 00 00 00 00 00
            00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            """, tag: "13 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"),
    ]

    @Test(arguments: vectors) func appendix(_ v: Vector) throws {
        let key = try hex(v.key), text = try hex(v.text), tag = try hex(v.tag)
        #expect(key.count == 32 && tag.count == 16)
        #expect(try Poly1305.authenticate(text, oneTimeKey: key) == tag)
        #expect(ReferencePoly1305.mac(text, key: key) == tag)  // the reference, checked too
    }

    @Test func appendixTextsAreTheTexts() throws {
        #expect(try hex(RFC8439.ietfNote) == Array(RFC8439.ietfNoteText.utf8))
        #expect(try hex(RFC8439.jabberwocky) == Array(RFC8439.jabberwockyText.utf8))
    }

    /// Random keys and messages of every length up to 20 blocks, and the extremes (r
    /// and s all ones, messages all ones, which push every carry): the same tags as
    /// the reference.
    @Test func matchesTheReference() throws {
        var rng = SplitMix64(state: 0x1305)
        let ones = [UInt8](repeating: 0xff, count: 32)
        for length in 0...320 {
            for keyKind in 0..<3 {
                let key = keyKind == 0 ? ones : rng.bytes(32)
                let message = keyKind == 1 ? [UInt8](repeating: 0xff, count: length) : rng.bytes(length)
                let tag = try Poly1305.authenticate(message, oneTimeKey: key)
                let expected = ReferencePoly1305.mac(message, key: key)
                #expect(tag == expected, "length \(length), key \(hexString(key))")
            }
        }
    }

    /// Keys with small r and messages of extreme blocks (all ones, 2^128 - 2, one,
    /// zero) drive the accumulator to the rare states random data does not reach:
    /// h1:h0 all ones when the fold is added (a carry into h2), h ≥ p before the
    /// final subtraction. For instance r = 3 and FF×16 ‖ FF×16 ‖ 01 00×15.
    @Test func matchesTheReferenceOnExtremeBlocks() throws {
        var rng = SplitMix64(state: 0x130_5ed9e)
        let blocks: [[UInt8]] = [
            [UInt8](repeating: 0xff, count: 16),
            [0xfe] + [UInt8](repeating: 0xff, count: 15),
            [0xfb] + [UInt8](repeating: 0xff, count: 15),
            [1] + [UInt8](repeating: 0, count: 15),
            [UInt8](repeating: 0, count: 16),
        ]
        var cases = 0
        for r: UInt64 in [1, 2, 3, 4, 5, 8, 16, 0xfff_ffff, 0xfff_fffc_0fff_ffff] {
            for s in [[UInt8](repeating: 0, count: 16), [UInt8](repeating: 0xff, count: 16)] {
                let rBytes = (0..<16).map { UInt8(truncatingIfNeeded: $0 < 8 ? r >> (8 * UInt64($0)) : 0) }
                let key = rBytes + s
                for _ in 0..<60 {
                    var message: [UInt8] = []
                    for _ in 0..<Int.random(in: 1...8, using: &rng) { message += blocks.randomElement(using: &rng)! }
                    if Bool.random(using: &rng) { message += [UInt8](repeating: 0xff, count: Int.random(in: 1...15, using: &rng)) }
                    #expect(try Poly1305.authenticate(message, oneTimeKey: key) == ReferencePoly1305.mac(message, key: key),
                            "key \(hexString(key)), message \(hexString(message))")
                    cases += 1
                }
            }
        }
        #expect(cases == 9 * 2 * 60)
        // The example in the comment, whose third block carries out of the fold.
        let key = [3] + [UInt8](repeating: 0, count: 31)
        let message = [UInt8](repeating: 0xff, count: 32) + [1] + [UInt8](repeating: 0, count: 15)
        #expect(try Poly1305.authenticate(message, oneTimeKey: key) == ReferencePoly1305.mac(message, key: key))
    }

    @Test func refusesAKeyOfAnotherLength() {
        for length in [0, 16, 31, 33, 64] {
            #expect(throws: SealError.badKeyLength(length)) {
                try Poly1305.authenticate([1, 2, 3], oneTimeKey: [UInt8](repeating: 1, count: length))
            }
        }
    }

    // MARK: The one-time key from ChaCha20 (§2.6)

    @Test func keyGeneration() throws {  // §2.6.2
        let key = try SealKey(bytes: hex(RFC8439.highKey))
        let nonce = try SealNonce(bytes: hex("00 00 00 00 00 01 02 03 04 05 06 07"))
        let state = ChaChaState(key: key, nonce: nonce, counter: 0)
        #expect(ChaCha20Tests.stateWords(state) == (try words("""
            61707865  3320646e  79622d32  6b206574
            83828180  87868584  8b8a8988  8f8e8d8c
            93929190  97969594  9b9a9998  9f9e9d9c
            00000000  00000000  03020100  07060504
            """)))
        // The RFC labels this "after 20 rounds"; it is the block's output, the input
        // words added (its first word is the output's first four bytes).
        #expect(ChaCha20Tests.stateWords(state.block()) == (try words("""
            8ba0d58a  cc815f90  27405081  7194b24a
            37b633a8  a50dfde3  e2b8db08  46a6d1fd
            7da03782  9183a233  148ad271  b46773d1
            3cc1875a  8607def1  ca5c3086  7085eb87
            """)))
        #expect(Array(ChaCha20.keystreamBlock(key: key, nonce: nonce, counter: 0).prefix(32)) == (try hex("""
            8a d5 a0 8b 90 5f 81 cc 81 50 40 27 4a b2 94 71
            a8 33 b6 37 e3 fd 0d a5 08 db b8 e2 fd d1 a6 46
            """)))
    }

    struct KeyVector: Sendable, CustomTestStringConvertible {
        var number: Int
        var key: String
        var nonce: String
        var oneTimeKey: String
        var testDescription: String { "A.4 #\(number)" }
    }

    static let keyVectors: [KeyVector] = [
        KeyVector(number: 1, key: RFC8439.zeroKey, nonce: RFC8439.zeroNonce, oneTimeKey: """
            76 b8 e0 ad a0 f1 3d 90 40 5d 6a e5 53 86 bd 28
            bd d2 19 b8 a0 8d ed 1a a8 36 ef cc 8b 77 0d c7
            """),
        KeyVector(number: 2, key: RFC8439.oneKey, nonce: RFC8439.twoNonce, oneTimeKey: """
            ec fa 25 4f 84 5f 64 74 73 d3 cb 14 0d a9 e8 76
            06 cb 33 06 6c 44 7b 87 bc 26 66 dd e3 fb b7 39
            """),
        KeyVector(number: 3, key: RFC8439.appendixKey, nonce: RFC8439.twoNonce, oneTimeKey: """
            96 5e 3b c6 f9 ec 7e d9 56 08 08 f4 d2 29 f9 4b
            13 7f f2 75 ca 9b 3f cb dd 59 de aa d2 33 10 ae
            """),
    ]

    /// The one-time key is the first 32 bytes of block 0; the AEAD's accumulator is
    /// keyed with exactly those (checked through a tag: same key, same tag).
    @Test(arguments: keyVectors) func appendixKeyGeneration(_ v: KeyVector) throws {
        let key = try SealKey(bytes: hex(v.key)), nonce = try SealNonce(bytes: hex(v.nonce))
        let oneTimeKey = try hex(v.oneTimeKey)
        #expect(Array(ChaCha20.keystreamBlock(key: key, nonce: nonce, counter: 0).prefix(32)) == oneTimeKey)
        let message = try hex(RFC8439.jabberwocky)
        let (t0, t1) = unsafe ChaCha20Poly1305.withFirstBlocks(key: key, nonce: nonce) { blocks in
            var mac = unsafe Poly1305(key: blocks)
            unsafe message.withUnsafeBytes { unsafe mac.absorbMessage($0) }
            return mac.tag()
        }
        let tag = (0..<16).map { UInt8(truncatingIfNeeded: ($0 < 8 ? t0 : t1) >> (8 * UInt64($0 % 8))) }
        #expect(tag == (try Poly1305.authenticate(message, oneTimeKey: oneTimeKey)))
    }
}
