import Testing
@testable import LedgerCrypto

/// AEAD_CHACHA20_POLY1305 against RFC 8439 §2.8.2 and Appendix A.5, and the
/// construction rebuilt from its parts for many lengths.
@Suite struct AEADVectorTests {
    static let exampleCiphertext = """
        d3 1a 8d 34 64 8e 60 db 7b 86 af bc 53 ef 7e c2
        a4 ad ed 51 29 6e 08 fe a9 e2 b5 a7 36 ee 62 d6
        3d be a4 5e 8c a9 67 12 82 fa fb 69 da 92 72 8b
        1a 71 de 0a 9e 06 0b 29 05 d6 a5 b6 7e cd 3b 36
        92 dd bd 7f 2d 77 8b 8c 98 03 ae e3 28 09 1b 58
        fa b3 24 e4 fa d6 75 94 55 85 80 8b 48 31 d7 bc
        3f f4 de f0 8e 4b 7a 9d e5 76 d2 65 86 ce c6 4b
        61 16
        """

    @Test func example() throws {  // §2.8.2
        let plaintext = try hex(RFC8439.sunscreen)
        let aad = try hex("50 51 52 53 c0 c1 c2 c3 c4 c5 c6 c7")
        let key = try SealKey(bytes: hex(RFC8439.highKey))
        // The nonce is the 32-bit fixed-common part ‖ the 8-byte IV.
        let nonceBytes = try hex("07 00 00 00") + hex("40 41 42 43 44 45 46 47")
        let nonce = try SealNonce(bytes: nonceBytes)
        #expect(SealNonce(prefix: 7, counter: 0x4746_4544_4342_4140) == nonce)

        let setup = ChaChaState(key: key, nonce: nonce, counter: 0)
        #expect(ChaCha20Tests.stateWords(setup) == (try words("""
            61707865  3320646e  79622d32  6b206574
            83828180  87868584  8b8a8988  8f8e8d8c
            93929190  97969594  9b9a9998  9f9e9d9c
            00000000  00000007  43424140  47464544
            """)))
        #expect(ChaCha20Tests.stateWords(setup.block()) == (try words("""
            252bac7b  af47b42d  557ab609  8455e9a4
            73d6e10a  ebd97510  7875932a  ff53d53e
            decc7ea2  b44ddbad  e49c17d1  d8430bc9
            8c94b7bc  8b7d4b4b  3927f67d  1669a432
            """)))
        let oneTimeKey = try hex("""
            7b ac 2b 25 2d b4 47 af 09 b6 7a 55 a4 e9 55 84
            0a e1 d6 73 10 75 d9 eb 2a 93 75 78 3e d5 53 ff
            """)
        #expect(Array(ChaCha20.keystreamBlock(key: key, nonce: nonce, counter: 0).prefix(32)) == oneTimeKey)
        let mac = unsafe oneTimeKey.withUnsafeBytes { unsafe Poly1305(key: $0.baseAddress!) }
        let r: UInt128 = UInt128(mac.r1) << 64 | UInt128(mac.r0)
        #expect(r == 0x455_e9a4_057a_b608_0f47_b42c_052b_ac7b)
        #expect(Array(oneTimeKey[16...]) == (try hex("ff53d53e7875932aebd9751073d6e10a")).reversed())

        #expect(try ChaCha20.encrypt([UInt8](repeating: 0, count: 114), key: key, nonce: nonce, counter: 1) == hex("""
            9f:7b:e9:5d:01:fd:40:ba:15:e2:8f:fb:36:81:0a:ae:
            c1:c0:88:3f:09:01:6e:de:dd:8a:d0:87:55:82:03:a5:
            4e:9e:cb:38:ac:8e:5e:2b:b8:da:b2:0f:fa:db:52:e8:
            75:04:b2:6e:be:69:6d:4f:60:a4:85:cf:11:b8:1b:59:
            fc:b1:c4:5f:42:19:ee:ac:ec:6a:de:c3:4e:66:69:78:
            8e:db:41:c4:9c:a3:01:e1:27:e0:ac:ab:3b:44:b9:cf:
            5c:86:bb:95:e0:6b:0d:f2:90:1a:b6:45:e4:ab:e6:22:
            15:38
            """))

        let ciphertext = try hex(Self.exampleCiphertext)
        let tag = try hex("1a:e1:0b:59:4f:09:e2:6a:7e:90:2e:cb:d0:60:06:91")
        // The buffer Poly1305 runs on, as the RFC prints it.
        let macData = try hex("""
            50 51 52 53 c0 c1 c2 c3 c4 c5 c6 c7 00 00 00 00
            d3 1a 8d 34 64 8e 60 db 7b 86 af bc 53 ef 7e c2
            a4 ad ed 51 29 6e 08 fe a9 e2 b5 a7 36 ee 62 d6
            3d be a4 5e 8c a9 67 12 82 fa fb 69 da 92 72 8b
            1a 71 de 0a 9e 06 0b 29 05 d6 a5 b6 7e cd 3b 36
            92 dd bd 7f 2d 77 8b 8c 98 03 ae e3 28 09 1b 58
            fa b3 24 e4 fa d6 75 94 55 85 80 8b 48 31 d7 bc
            3f f4 de f0 8e 4b 7a 9d e5 76 d2 65 86 ce c6 4b
            61 16 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            0c 00 00 00 00 00 00 00 72 00 00 00 00 00 00 00
            """)
        #expect(try Poly1305.authenticate(macData, oneTimeKey: oneTimeKey) == tag)

        let sealed = try ChaCha20Poly1305.seal(plaintext: plaintext, key: key, nonce: nonce, associatedData: aad)
        #expect(sealed == ciphertext + tag)
        #expect(try ChaCha20Poly1305.open(sealed: sealed, key: key, nonce: nonce, associatedData: aad) == plaintext)
    }

    @Test func appendixDecryption() throws {  // A.5
        let key = try SealKey(bytes: hex(RFC8439.appendixKey))
        let ciphertext = try hex("""
            64 a0 86 15 75 86 1a f4 60 f0 62 c7 9b e6 43 bd
            5e 80 5c fd 34 5c f3 89 f1 08 67 0a c7 6c 8c b2
            4c 6c fc 18 75 5d 43 ee a0 9e e9 4e 38 2d 26 b0
            bd b7 b7 3c 32 1b 01 00 d4 f0 3b 7f 35 58 94 cf
            33 2f 83 0e 71 0b 97 ce 98 c8 a8 4a bd 0b 94 81
            14 ad 17 6e 00 8d 33 bd 60 f9 82 b1 ff 37 c8 55
            97 97 a0 6e f4 f0 ef 61 c1 86 32 4e 2b 35 06 38
            36 06 90 7b 6a 7c 02 b0 f9 f6 15 7b 53 c8 67 e4
            b9 16 6c 76 7b 80 4d 46 a5 9b 52 16 cd e7 a4 e9
            90 40 c5 a4 04 33 22 5e e2 82 a1 b0 a0 6c 52 3e
            af 45 34 d7 f8 3f a1 15 5b 00 47 71 8c bc 54 6a
            0d 07 2b 04 b3 56 4e ea 1b 42 22 73 f5 48 27 1a
            0b b2 31 60 53 fa 76 99 19 55 eb d6 31 59 43 4e
            ce bb 4e 46 6d ae 5a 10 73 a6 72 76 27 09 7a 10
            49 e6 17 d9 1d 36 10 94 fa 68 f0 ff 77 98 71 30
            30 5b ea ba 2e da 04 df 99 7b 71 4d 6c 6f 2c 29
            a6 ad 5c b4 02 2b 02 70 9b
            """)
        let nonce = try SealNonce(bytes: hex("00 00 00 00 01 02 03 04 05 06 07 08"))
        let aad = try hex("f3 33 88 86 00 00 00 00 00 00 4e 91")
        let tag = try hex("ee ad 9d 67 89 0c bb 22 39 23 36 fe a1 85 1f 38")
        let plaintext = try hex("""
            49 6e 74 65 72 6e 65 74 2d 44 72 61 66 74 73 20
            61 72 65 20 64 72 61 66 74 20 64 6f 63 75 6d 65
            6e 74 73 20 76 61 6c 69 64 20 66 6f 72 20 61 20
            6d 61 78 69 6d 75 6d 20 6f 66 20 73 69 78 20 6d
            6f 6e 74 68 73 20 61 6e 64 20 6d 61 79 20 62 65
            20 75 70 64 61 74 65 64 2c 20 72 65 70 6c 61 63
            65 64 2c 20 6f 72 20 6f 62 73 6f 6c 65 74 65 64
            20 62 79 20 6f 74 68 65 72 20 64 6f 63 75 6d 65
            6e 74 73 20 61 74 20 61 6e 79 20 74 69 6d 65 2e
            20 49 74 20 69 73 20 69 6e 61 70 70 72 6f 70 72
            69 61 74 65 20 74 6f 20 75 73 65 20 49 6e 74 65
            72 6e 65 74 2d 44 72 61 66 74 73 20 61 73 20 72
            65 66 65 72 65 6e 63 65 20 6d 61 74 65 72 69 61
            6c 20 6f 72 20 74 6f 20 63 69 74 65 20 74 68 65
            6d 20 6f 74 68 65 72 20 74 68 61 6e 20 61 73 20
            2f e2 80 9c 77 6f 72 6b 20 69 6e 20 70 72 6f 67
            72 65 73 73 2e 2f e2 80 9d
            """)
        #expect(plaintext == Array(("Internet-Drafts are draft documents valid for a maximum of six months and may be updated, "
                                    + "replaced, or obsoleted by other documents at any time. It is inappropriate to use "
                                    + "Internet-Drafts as reference material or to cite them other than as /\u{201C}work in "
                                    + "progress./\u{201D}").utf8))

        let setup = ChaChaState(key: key, nonce: nonce, counter: 0)
        #expect(ChaCha20Tests.stateWords(setup) == (try words("""
            61707865  3320646e  79622d32  6b206574
            a540921c  8ad355eb  868833f3  f0b5f604
            c1173947  09802b40  bc5cca9d  c0757020
            00000000  00000000  04030201  08070605
            """)))
        #expect(ChaCha20Tests.stateWords(setup.block()) == (try words("""
            a94af0bd  89dee45c  b64bb195  afec8fa1
            508f4726  63f554c0  1ea2c0db  aa721526
            11b1e514  a0bacc0f  828a6015  d7825481
            e8a4a850  d9dcbbd6  4c2de33a  f8ccd912
            """)))
        let oneTimeKey = try hex("""
            bd f0 4a a9 5c e4 de 89 95 b1 4b b6 a1 8f ec af
            26 47 8f 50 c0 54 f5 63 db c0 a2 1e 26 15 72 aa
            """)
        #expect(Array(ChaCha20.keystreamBlock(key: key, nonce: nonce, counter: 0).prefix(32)) == oneTimeKey)
        #expect(oneTimeKey == (try hex("""
            bd:f0:4a:a9:5c:e4:de:89:95:b1:4b:b6:a1:8f:ec:af:
            26:47:8f:50:c0:54:f5:63:db:c0:a2:1e:26:15:72:aa
            """)))
        // The Poly1305 input: AAD, 4 zero bytes, the ciphertext, 7 zero bytes, 12 and 265.
        let macData = aad + [UInt8](repeating: 0, count: 4) + ciphertext + [UInt8](repeating: 0, count: 7)
            + (try hex("0c 00 00 00 00 00 00 00 09 01 00 00 00 00 00 00"))
        #expect(macData.count == 304)
        #expect(try Poly1305.authenticate(macData, oneTimeKey: oneTimeKey) == tag)

        #expect(try ChaCha20Poly1305.open(sealed: ciphertext + tag, key: key, nonce: nonce, associatedData: aad) == plaintext)
        #expect(try ChaCha20Poly1305.seal(plaintext: plaintext, key: key, nonce: nonce, associatedData: aad) == ciphertext + tag)
    }

    /// §2.8 rebuilt from the parts (ChaCha20 from block 1, Poly1305 keyed by block 0,
    /// over AAD ‖ pad16 ‖ ciphertext ‖ pad16 ‖ lengths) for AAD and plaintext lengths
    /// around every padding case.
    @Test func constructionFromItsParts() throws {
        var rng = SplitMix64(state: 0x8439)
        let key = try SealKey(bytes: rng.bytes(32))
        for aadLength in [0, 1, 12, 15, 16, 17, 31, 32, 33, 100] {
            for plaintextLength in Array(0...70) + [127, 128, 129, 500] {
                let nonce = SealNonce(prefix: UInt32(aadLength), counter: UInt64(plaintextLength))
                let aad = rng.bytes(aadLength), plaintext = rng.bytes(plaintextLength)
                let ciphertext = try ChaCha20.encrypt(plaintext, key: key, nonce: nonce, counter: 1)
                func pad16(_ n: Int) -> [UInt8] { [UInt8](repeating: 0, count: (16 - n % 16) % 16) }
                func le64(_ n: Int) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: UInt64(n) >> (8 * UInt64($0))) } }
                let macData = aad + pad16(aadLength) + ciphertext + pad16(plaintextLength) + le64(aadLength) + le64(plaintextLength)
                let oneTimeKey = Array(ChaCha20.keystreamBlock(key: key, nonce: nonce, counter: 0).prefix(32))
                let tag = ReferencePoly1305.mac(macData, key: oneTimeKey)
                let sealed = try ChaCha20Poly1305.seal(plaintext: plaintext, key: key, nonce: nonce, associatedData: aad)
                #expect(sealed == ciphertext + tag, "AAD \(aadLength), plaintext \(plaintextLength)")
            }
        }
    }
}
