import CLedgerAccel
import Testing
@testable import LedgerCrypto

/// ChaCha20 against RFC 8439 §2.1–§2.4 and Appendix A.1–A.2.
@Suite struct ChaCha20Tests {
    static func state(_ key: String, _ nonce: String, counter: UInt32) throws -> ChaChaState {
        try ChaChaState(key: SealKey(bytes: hex(key)), nonce: SealNonce(bytes: hex(nonce)), counter: counter)
    }

    static func stateWords(_ state: ChaChaState) -> [UInt32] {
        var out: [UInt32] = []
        state.forEachWord { out.append($0) }
        return out
    }

    // MARK: §2.1–§2.3

    @Test func quarterRound() {  // §2.1.1
        var (a, b, c, d): (UInt32, UInt32, UInt32, UInt32) = (0x1111_1111, 0x0102_0304, 0x9b8d_6f43, 0x0123_4567)
        ChaChaState.quarterRound(&a, &b, &c, &d)
        #expect([a, b, c, d] == [0xea2a_92f4, 0xcb1c_f8ce, 0x4581_472e, 0x5881_c4bb])
    }

    @Test func quarterRoundOnTheState() throws {  // §2.2.1: QUARTERROUND(2, 7, 8, 13)
        var s = try words("""
            879531e0  c5ecf37d  516461b1  c9a62f8a
            44c20ef3  3390af7f  d9fc690b  2a5f714c
            53372767  b00a5631  974c541a  359e9963
            5c971061  3d631689  2098d9d6  91dbd320
            """)
        var (a, b, c, d) = (s[2], s[7], s[8], s[13])
        ChaChaState.quarterRound(&a, &b, &c, &d)
        (s[2], s[7], s[8], s[13]) = (a, b, c, d)
        #expect(s == (try words("""
            879531e0  c5ecf37d  bdb886dc  c9a62f8a
            44c20ef3  3390af7f  d9fc690b  cfacafd2
            e46bea80  b00a5631  974c541a  359e9963
            5c971061  ccc07c79  2098d9d6  91dbd320
            """)))
    }

    @Test func blockFunction() throws {  // §2.3.2
        let state = try Self.state(RFC8439.countingKey, "00:00:00:09:00:00:00:4a:00:00:00:00", counter: 1)
        #expect(Self.stateWords(state) == (try words("""
            61707865  3320646e  79622d32  6b206574
            03020100  07060504  0b0a0908  0f0e0d0c
            13121110  17161514  1b1a1918  1f1e1d1c
            00000001  09000000  4a000000  00000000
            """)))
        var rounds = state
        rounds.twentyRounds()
        #expect(Self.stateWords(rounds) == (try words("""
            837778ab  e238d763  a67ae21e  5950bb2f
            c4f2d0c7  fc62bb2f  8fa018fc  3f5ec7b7
            335271c2  f29489f3  eabda8fc  82e46ebd
            d19c12b4  b04e16de  9e83d0cb  4e3c50a2
            """)))
        #expect(Self.stateWords(state.block()) == (try words("""
            e4e7f110  15593bd1  1fdd0f50  c47120a3
            c7f4d1c7  0368c033  9aaa2204  4e6cd4c3
            466482d2  09aa9f07  05d7c214  a2028bd9
            d19c12b5  b94e16de  e883d0cb  4e3c50a2
            """)))
        let serialized = try ChaCha20.keystreamBlock(key: SealKey(bytes: hex(RFC8439.countingKey)),
                                                     nonce: SealNonce(bytes: hex("00:00:00:09:00:00:00:4a:00:00:00:00")), counter: 1)
        #expect(serialized == (try hex("""
            10 f1 e7 e4 d1 3b 59 15 50 0f dd 1f a3 20 71 c4
            c7 d1 f4 c7 33 c0 68 03 04 22 aa 9a c3 d4 6c 4e
            d2 82 64 46 07 9f aa 09 14 c2 d7 05 d9 8b 02 a2
            b5 12 9c d1 de 16 4e b9 cb d0 83 e8 a2 50 3c 4e
            """)))
    }

    // MARK: §2.4

    @Test func encryptionExample() throws {  // §2.4.2
        let key = try SealKey(bytes: hex(RFC8439.countingKey))
        let nonce = try SealNonce(bytes: hex("00:00:00:00:00:00:00:4a:00:00:00:00"))
        let plaintext = try hex(RFC8439.sunscreen)
        #expect(plaintext == Array(RFC8439.sunscreenText.utf8))

        let first = try Self.state(RFC8439.countingKey, "00:00:00:00:00:00:00:4a:00:00:00:00", counter: 1)
        var second = first
        second.x12 = 2
        #expect(Self.stateWords(second) == (try words("""
            61707865  3320646e  79622d32  6b206574
            03020100  07060504  0b0a0908  0f0e0d0c
            13121110  17161514  1b1a1918  1f1e1d1c
            00000002  00000000  4a000000  00000000
            """)))
        #expect(Self.stateWords(first.block()) == (try words("""
            f3514f22  e1d91b40  6f27de2f  ed1d63b8
            821f138c  e2062c3d  ecca4f7e  78cff39e
            a30a3b8a  920a6072  cd7479b5  34932bed
            40ba4c79  cd343ec6  4c2c21ea  b7417df0
            """)))
        #expect(Self.stateWords(second.block()) == (try words("""
            9f74a669  410f633f  28feca22  7ec44dec
            6d34d426  738cb970  3ac5e9f3  45590cc4
            da6e8b39  892c831a  cdea67c1  2b7e1d90
            037463f3  a11a2073  e8bcfb88  edc49139
            """)))

        let keystream = try ChaCha20.encrypt([UInt8](repeating: 0, count: plaintext.count), key: key, nonce: nonce, counter: 1)
        #expect(keystream == (try hex("""
            22:4f:51:f3:40:1b:d9:e1:2f:de:27:6f:b8:63:1d:ed:8c:13:1f:82:3d:2c:06
            e2:7e:4f:ca:ec:9e:f3:cf:78:8a:3b:0a:a3:72:60:0a:92:b5:79:74:cd:ed:2b
            93:34:79:4c:ba:40:c6:3e:34:cd:ea:21:2c:4c:f0:7d:41:b7:69:a6:74:9f:3f
            63:0f:41:22:ca:fe:28:ec:4d:c4:7e:26:d4:34:6d:70:b9:8c:73:f3:e9:c5:3a
            c4:0c:59:45:39:8b:6e:da:1a:83:2c:89:c1:67:ea:cd:90:1d:7e:2b:f3:63
            """)))

        let ciphertext = try hex("""
            6e 2e 35 9a 25 68 f9 80 41 ba 07 28 dd 0d 69 81
            e9 7e 7a ec 1d 43 60 c2 0a 27 af cc fd 9f ae 0b
            f9 1b 65 c5 52 47 33 ab 8f 59 3d ab cd 62 b3 57
            16 39 d6 24 e6 51 52 ab 8f 53 0c 35 9f 08 61 d8
            07 ca 0d bf 50 0d 6a 61 56 a3 8e 08 8a 22 b6 5e
            52 bc 51 4d 16 cc f8 06 81 8c e9 1a b7 79 37 36
            5a f9 0b bf 74 a3 5b e6 b4 0b 8e ed f2 78 5e 42
            87 4d
            """)
        #expect(try ChaCha20.encrypt(plaintext, key: key, nonce: nonce, counter: 1) == ciphertext)
        #expect(try ChaCha20.encrypt(ciphertext, key: key, nonce: nonce, counter: 1) == plaintext)
    }

    // MARK: Appendix A.1

    struct BlockVector: Sendable, CustomTestStringConvertible {
        var number: Int
        var key: String
        var nonce: String
        var counter: UInt32
        var state: String
        var keystream: String
        var testDescription: String { "A.1 #\(number)" }
    }

    static let blockVectors: [BlockVector] = [
        BlockVector(number: 1, key: RFC8439.zeroKey, nonce: RFC8439.zeroNonce, counter: 0, state: """
            ade0b876  903df1a0  e56a5d40  28bd8653
            b819d2bd  1aed8da0  ccef36a8  c70d778b
            7c5941da  8d485751  3fe02477  374ad8b8
            f4b8436a  1ca11815  69b687c3  8665eeb2
            """, keystream: """
            76 b8 e0 ad a0 f1 3d 90 40 5d 6a e5 53 86 bd 28
            bd d2 19 b8 a0 8d ed 1a a8 36 ef cc 8b 77 0d c7
            da 41 59 7c 51 57 48 8d 77 24 e0 3f b8 d8 4a 37
            6a 43 b8 f4 15 18 a1 1c c3 87 b6 69 b2 ee 65 86
            """),
        BlockVector(number: 2, key: RFC8439.zeroKey, nonce: RFC8439.zeroNonce, counter: 1, state: """
            bee7079f  7a385155  7c97ba98  0d082d73
            a0290fcb  6965e348  3e53c612  ed7aee32
            7621b729  434ee69c  b03371d5  d539d874
            281fed31  45fb0a51  1f0ae1ac  6f4d794b
            """, keystream: """
            9f 07 e7 be 55 51 38 7a 98 ba 97 7c 73 2d 08 0d
            cb 0f 29 a0 48 e3 65 69 12 c6 53 3e 32 ee 7a ed
            29 b7 21 76 9c e6 4e 43 d5 71 33 b0 74 d8 39 d5
            31 ed 1f 28 51 0a fb 45 ac e1 0a 1f 4b 79 4d 6f
            """),
        BlockVector(number: 3, key: RFC8439.oneKey, nonce: RFC8439.zeroNonce, counter: 1, state: """
            2452eb3a  9249f8ec  8d829d9b  ddd4ceb1
            e8252083  60818b01  f38422b8  5aaa49c9
            bb00ca8e  da3ba7b4  c4b592d1  fdf2732f
            4436274e  2561b3c8  ebdd4aa6  a0136c00
            """, keystream: """
            3a eb 52 24 ec f8 49 92 9b 9d 82 8d b1 ce d4 dd
            83 20 25 e8 01 8b 81 60 b8 22 84 f3 c9 49 aa 5a
            8e ca 00 bb b4 a7 3b da d1 92 b5 c4 2f 73 f2 fd
            4e 27 36 44 c8 b3 61 25 a6 4a dd eb 00 6c 13 a0
            """),
        BlockVector(number: 4, key: "00 ff" + String(repeating: " 00", count: 30), nonce: RFC8439.zeroNonce, counter: 2, state: """
            fb4dd572  4bc42ef1  df922636  327f1394
            a78dea8f  5e269039  a1bebbc1  caf09aae
            a25ab213  48a6b46c  1b9d9bcb  092c5be6
            546ca624  1bec45d5  87f47473  96f0992e
            """, keystream: """
            72 d5 4d fb f1 2e c4 4b 36 26 92 df 94 13 7f 32
            8f ea 8d a7 39 90 26 5e c1 bb be a1 ae 9a f0 ca
            13 b2 5a a2 6c b4 a6 48 cb 9b 9d 1b e6 5b 2c 09
            24 a6 6c 54 d5 45 ec 1b 73 74 f4 87 2e 99 f0 96
            """),
        BlockVector(number: 5, key: RFC8439.zeroKey, nonce: RFC8439.twoNonce, counter: 0, state: """
            374dc6c2  3736d58c  b904e24a  cd3f93ef
            88228b1a  96a4dfb3  5b76ab72  c727ee54
            0e0e978a  f3145c95  1b748ea8  f786c297
            99c28f5f  628314e8  398a19fa  6ded1b53
            """, keystream: """
            c2 c6 4d 37 8c d5 36 37 4a e2 04 b9 ef 93 3f cd
            1a 8b 22 88 b3 df a4 96 72 ab 76 5b 54 ee 27 c7
            8a 97 0e 0e 95 5c 14 f3 a8 8e 74 1b 97 c2 86 f7
            5f 8f c2 99 e8 14 83 62 fa 19 8a 39 53 1b ed 6d
            """),
    ]

    @Test(arguments: blockVectors) func appendixBlocks(_ v: BlockVector) throws {
        #expect(try hex(v.key).count == 32 && hex(v.nonce).count == 12)
        let state = try Self.state(v.key, v.nonce, counter: v.counter)
        #expect(Self.stateWords(state.block()) == (try words(v.state)))
        let block = try ChaCha20.keystreamBlock(key: SealKey(bytes: hex(v.key)), nonce: SealNonce(bytes: hex(v.nonce)), counter: v.counter)
        #expect(block == (try hex(v.keystream)))
    }

    // MARK: Appendix A.2

    @Test func appendixEncryption1() throws {
        let ciphertext = try ChaCha20.encrypt([UInt8](repeating: 0, count: 64), key: SealKey(bytes: hex(RFC8439.zeroKey)),
                                              nonce: SealNonce(bytes: hex(RFC8439.zeroNonce)), counter: 0)
        #expect(ciphertext == (try hex("""
            76 b8 e0 ad a0 f1 3d 90 40 5d 6a e5 53 86 bd 28
            bd d2 19 b8 a0 8d ed 1a a8 36 ef cc 8b 77 0d c7
            da 41 59 7c 51 57 48 8d 77 24 e0 3f b8 d8 4a 37
            6a 43 b8 f4 15 18 a1 1c c3 87 b6 69 b2 ee 65 86
            """)))
    }

    @Test func appendixEncryption2() throws {
        let plaintext = try hex(RFC8439.ietfNote)
        #expect(plaintext == Array(RFC8439.ietfNoteText.utf8))
        let key = try SealKey(bytes: hex(RFC8439.oneKey)), nonce = try SealNonce(bytes: hex(RFC8439.twoNonce))
        let ciphertext = try hex("""
            a3 fb f0 7d f3 fa 2f de 4f 37 6c a2 3e 82 73 70
            41 60 5d 9f 4f 4f 57 bd 8c ff 2c 1d 4b 79 55 ec
            2a 97 94 8b d3 72 29 15 c8 f3 d3 37 f7 d3 70 05
            0e 9e 96 d6 47 b7 c3 9f 56 e0 31 ca 5e b6 25 0d
            40 42 e0 27 85 ec ec fa 4b 4b b5 e8 ea d0 44 0e
            20 b6 e8 db 09 d8 81 a7 c6 13 2f 42 0e 52 79 50
            42 bd fa 77 73 d8 a9 05 14 47 b3 29 1c e1 41 1c
            68 04 65 55 2a a6 c4 05 b7 76 4d 5e 87 be a8 5a
            d0 0f 84 49 ed 8f 72 d0 d6 62 ab 05 26 91 ca 66
            42 4b c8 6d 2d f8 0e a4 1f 43 ab f9 37 d3 25 9d
            c4 b2 d0 df b4 8a 6c 91 39 dd d7 f7 69 66 e9 28
            e6 35 55 3b a7 6c 5c 87 9d 7b 35 d4 9e b2 e6 2b
            08 71 cd ac 63 89 39 e2 5e 8a 1e 0e f9 d5 28 0f
            a8 ca 32 8b 35 1c 3c 76 59 89 cb cf 3d aa 8b 6c
            cc 3a af 9f 39 79 c9 2b 37 20 fc 88 dc 95 ed 84
            a1 be 05 9c 64 99 b9 fd a2 36 e7 e8 18 b0 4b 0b
            c3 9c 1e 87 6b 19 3b fe 55 69 75 3f 88 12 8c c0
            8a aa 9b 63 d1 a1 6f 80 ef 25 54 d7 18 9c 41 1f
            58 69 ca 52 c5 b8 3f a3 6f f2 16 b9 c1 d3 00 62
            be bc fd 2d c5 bc e0 91 19 34 fd a7 9a 86 f6 e6
            98 ce d7 59 c3 ff 9b 64 77 33 8f 3d a4 f9 cd 85
            14 ea 99 82 cc af b3 41 b2 38 4d d9 02 f3 d1 ab
            7a c6 1d d2 9c 6f 21 ba 5b 86 2f 37 30 e3 7c fd
            c4 fd 80 6c 22 f2 21
            """)
        #expect(try ChaCha20.encrypt(plaintext, key: key, nonce: nonce, counter: 1) == ciphertext)
        #expect(try ChaCha20.encrypt(ciphertext, key: key, nonce: nonce, counter: 1) == plaintext)
    }

    @Test func appendixEncryption3() throws {
        let plaintext = try hex(RFC8439.jabberwocky)
        #expect(plaintext == Array(RFC8439.jabberwockyText.utf8))
        let key = try SealKey(bytes: hex(RFC8439.appendixKey)), nonce = try SealNonce(bytes: hex(RFC8439.twoNonce))
        let ciphertext = try hex("""
            62 e6 34 7f 95 ed 87 a4 5f fa e7 42 6f 27 a1 df
            5f b6 91 10 04 4c 0d 73 11 8e ff a9 5b 01 e5 cf
            16 6d 3d f2 d7 21 ca f9 b2 1e 5f b1 4c 61 68 71
            fd 84 c5 4f 9d 65 b2 83 19 6c 7f e4 f6 05 53 eb
            f3 9c 64 02 c4 22 34 e3 2a 35 6b 3e 76 43 12 a6
            1a 55 32 05 57 16 ea d6 96 25 68 f8 7d 3f 3f 77
            04 c6 a8 d1 bc d1 bf 4d 50 d6 15 4b 6d a7 31 b1
            87 b5 8d fd 72 8a fa 36 75 7a 79 7a c1 88 d1
            """)
        #expect(try ChaCha20.encrypt(plaintext, key: key, nonce: nonce, counter: 42) == ciphertext)
        #expect(try ChaCha20.encrypt(ciphertext, key: key, nonce: nonce, counter: 42) == plaintext)
    }

    // MARK: The stream against the block function

    /// Every length across several blocks: the fast path (whole blocks, then the tail)
    /// gives the block function's keystream, block after block.
    @Test func streamIsTheBlocksInOrder() throws {
        let key = try SealKey(bytes: hex(RFC8439.appendixKey)), nonce = try SealNonce(bytes: hex(RFC8439.twoNonce))
        var blocks: [UInt8] = []
        for counter in UInt32(7)..<UInt32(7 + 17) { blocks += ChaCha20.keystreamBlock(key: key, nonce: nonce, counter: counter) }
        for length in Array(0...300) + [1000, 1024, 1025, 17 * 64] {
            let stream = try ChaCha20.encrypt([UInt8](repeating: 0, count: length), key: key, nonce: nonce, counter: 7)
            #expect(stream == Array(blocks.prefix(length)), "length \(length)")
        }
        // XOR, not just the keystream: data in, data ^ keystream out.
        var rng = SplitMix64(state: 1)
        let data = rng.bytes(1000)
        let encrypted = try ChaCha20.encrypt(data, key: key, nonce: nonce, counter: 7)
        #expect(encrypted == zip(data, blocks).map { $0 ^ $1 })
    }

    /// Eight blocks at once (AVX2, `hl_chacha20_xor_avx2`, where the CPU has it: this
    /// machine's does) give the block function's keystream, in place and apart, at every
    /// length around multiples of eight blocks and at counters up to the last allowed.
    @Test func eightLanesAreTheBlocks() throws {
        #expect(ChaCha20.hasWideLanes == (hl_cpu_has_avx2() == 1))
        let key = try SealKey(bytes: hex(RFC8439.appendixKey)), nonce = try SealNonce(bytes: hex(RFC8439.twoNonce))
        var rng = SplitMix64(state: 8)
        let data = rng.bytes(40 * 64 + 63)
        for counter: UInt32 in [0, 1, 0x7fff_fff9, .max - 40] {
            var keystream: [UInt8] = []
            for i: UInt32 in 0..<41 { keystream += ChaCha20.keystreamBlock(key: key, nonce: nonce, counter: counter &+ i) }
            for length in [511, 512, 513, 1023, 1024, 1088, 16 * 64 + 5, 24 * 64, 40 * 64 + 63] {
                let expected = zip(data.prefix(length), keystream).map { $0 ^ $1 }
                for wide in [true, false] where !wide || ChaCha20.hasWideLanes {
                    var apart = [UInt8](repeating: 0, count: length)
                    var inPlace = Array(data.prefix(length))
                    unsafe data.withUnsafeBytes { input in
                        unsafe apart.withUnsafeMutableBytes { output in
                            unsafe ChaCha20.xorKeystream(input.baseAddress!, output.baseAddress!, count: length, key: key,
                                                         nonce: nonce, counter: counter, wideLanes: wide)
                        }
                    }
                    unsafe inPlace.withUnsafeMutableBytes { buffer in
                        unsafe ChaCha20.xorKeystream(UnsafeRawPointer(buffer.baseAddress!), buffer.baseAddress!, count: length,
                                                     key: key, nonce: nonce, counter: counter, wideLanes: wide)
                    }
                    #expect(apart == expected && inPlace == expected, "counter \(counter), length \(length), wide \(wide)")
                }
            }
        }
    }

    /// Four blocks at once (`ChaChaLanes`) are the four blocks one by one, counter
    /// wrap included (a wrapped lane is computed, though never used).
    @Test func lanesAreTheBlocks() throws {
        let key = try SealKey(bytes: hex(RFC8439.appendixKey)), nonce = try SealNonce(bytes: hex(RFC8439.twoNonce))
        for counter: UInt32 in [0, 1, 42, 0x7fff_ffff, .max - 3, .max - 1, .max] {
            var lanes = [UInt8](repeating: 0, count: 256)
            let state = ChaChaState(key: key, nonce: nonce, counter: counter)
            unsafe lanes.withUnsafeMutableBytes { unsafe ChaChaLanes.blocks(state, into: $0.baseAddress!) }
            var expected: [UInt8] = []
            for i: UInt32 in 0..<4 { expected += ChaCha20.keystreamBlock(key: key, nonce: nonce, counter: counter &+ i) }
            #expect(lanes == expected, "counter \(counter)")
        }
    }

    @Test func bufferVariantEncryptsInPlaceAndApart() throws {
        let key = try SealKey(bytes: hex(RFC8439.appendixKey)), nonce = try SealNonce(bytes: hex(RFC8439.twoNonce))
        let plaintext = try hex(RFC8439.jabberwocky)
        let expected = try ChaCha20.encrypt(plaintext, key: key, nonce: nonce, counter: 42)
        var inPlace = plaintext
        try unsafe inPlace.withUnsafeMutableBytes { buffer in
            try unsafe ChaCha20.encrypt(UnsafeRawBufferPointer(buffer), into: buffer, key: key, nonce: nonce, counter: 42)
        }
        #expect(inPlace == expected)
        var apart = [UInt8](repeating: 0, count: plaintext.count)
        try unsafe plaintext.withUnsafeBytes { input in
            try unsafe apart.withUnsafeMutableBytes { output in
                try unsafe ChaCha20.encrypt(input, into: output, key: key, nonce: nonce, counter: 42)
            }
        }
        #expect(apart == expected)
    }

    @Test func bufferVariantRefusesAnOutputOfAnotherLength() throws {
        let key = try SealKey(bytes: hex(RFC8439.appendixKey)), nonce = try SealNonce(bytes: hex(RFC8439.twoNonce))
        let input = [UInt8](repeating: 7, count: 100)
        for length in [0, 99, 101] {
            var output = [UInt8](repeating: 0xaa, count: length)
            #expect(throws: SealError.badOutputLength(expected: 100, actual: length)) {
                try unsafe input.withUnsafeBytes { input in
                    try unsafe output.withUnsafeMutableBytes { output in
                        try unsafe ChaCha20.encrypt(input, into: output, key: key, nonce: nonce, counter: 0)
                    }
                }
            }
            #expect(output == [UInt8](repeating: 0xaa, count: length), "written though refused")
        }
    }

    // MARK: The 32-bit counter

    /// The last block has counter 2^32 - 1; one byte more is refused, not wrapped to 0.
    @Test func counterOverflowIsRefused() throws {
        let key = try SealKey(bytes: hex(RFC8439.appendixKey)), nonce = try SealNonce(bytes: hex(RFC8439.twoNonce))
        let last = try ChaCha20.encrypt([UInt8](repeating: 0, count: 64), key: key, nonce: nonce, counter: .max)
        #expect(last == ChaCha20.keystreamBlock(key: key, nonce: nonce, counter: .max))
        #expect(last != ChaCha20.keystreamBlock(key: key, nonce: nonce, counter: 0))
        #expect(try ChaCha20.encrypt([], key: key, nonce: nonce, counter: .max) == [])
        #expect(try ChaCha20.encrypt([UInt8](repeating: 0, count: 128), key: key, nonce: nonce, counter: .max - 1).count == 128)

        for (counter, length) in [(UInt32.max, 65), (.max, 128), (.max - 1, 129), (.max - 3, 4 * 64 + 1)] {
            #expect(throws: SealError.counterOverflow(initialCounter: counter, length: length)) {
                try ChaCha20.encrypt([UInt8](repeating: 0, count: length), key: key, nonce: nonce, counter: counter)
            }
            var output = [UInt8](repeating: 0xaa, count: length)
            #expect(throws: SealError.counterOverflow(initialCounter: counter, length: length)) {
                try unsafe output.withUnsafeMutableBytes { buffer in
                    try unsafe ChaCha20.encrypt(UnsafeRawBufferPointer(buffer), into: buffer, key: key, nonce: nonce, counter: counter)
                }
            }
            #expect(output == [UInt8](repeating: 0xaa, count: length), "written though refused")
        }
        // The whole counter space from 0 is 2^38 bytes; one more is refused (checked by
        // length alone, so no memory is touched).
        #expect(throws: Never.self) { try ChaCha20.checkCounter(0, byteCount: 1 << 38) }
        #expect(throws: SealError.counterOverflow(initialCounter: 0, length: (1 << 38) + 1)) {
            try ChaCha20.checkCounter(0, byteCount: (1 << 38) + 1)
        }
        #expect(throws: SealError.counterOverflow(initialCounter: 1, length: 1 << 38)) {
            try ChaCha20.checkCounter(1, byteCount: 1 << 38)
        }
    }
}
