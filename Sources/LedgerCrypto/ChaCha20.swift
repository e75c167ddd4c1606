import CLedgerAccel

/// The ChaCha20 stream cipher of RFC 8439: the block function (§2.3) and encryption
/// (§2.4), with a 256-bit key, a 96-bit nonce and a 32-bit block counter.
///
/// Invariants:
/// - Block `i` of a message is the keystream block with counter `initial + i`; the
///   counter is never wrapped. A message that would need a counter past 2^32 - 1 is
///   refused (`SealError.counterOverflow`) before any byte is written.
/// - Encryption and decryption are the same function (XOR with the keystream).
/// - Time depends on the length only, never on the key, nonce or data (additions,
///   XORs and fixed rotations on 32-bit words; no table look-ups, no data-dependent
///   branches).
public enum ChaCha20 {
    /// Bytes in a keystream block.
    public static let blockByteCount = 64

    /// Whether `xorKeystream` computes eight blocks at a time (AVX2, checked once).
    static let hasWideLanes = hl_cpu_has_avx2() == 1

    /// The 64-byte keystream block for `counter`: the block function of §2.3, its 16
    /// words serialized little-endian.
    public static func keystreamBlock(key: SealKey, nonce: SealNonce, counter: UInt32) -> [UInt8] {
        let block = ChaChaState(key: key, nonce: nonce, counter: counter).block()
        var out: [UInt8] = []
        out.reserveCapacity(blockByteCount)
        block.forEachWord { word in
            out += [UInt8(truncatingIfNeeded: word), UInt8(truncatingIfNeeded: word >> 8),
                    UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 24)]
        }
        return out
    }

    /// `bytes` XORed with the keystream from block `counter` on (§2.4): encrypts a
    /// plaintext, or decrypts a ciphertext.
    /// - Throws: `SealError.counterOverflow` when the bytes need a block past
    ///   counter 2^32 - 1.
    public static func encrypt(_ bytes: [UInt8], key: SealKey, nonce: SealNonce, counter: UInt32) throws(SealError) -> [UInt8] {
        try checkCounter(counter, byteCount: bytes.count)
        guard !bytes.isEmpty else { return [] }
        return unsafe bytes.withUnsafeBytes { input in
            unsafe [UInt8](unsafeUninitializedCapacity: input.count) { output, initialized in
                unsafe xorKeystream(input.baseAddress!, UnsafeMutableRawPointer(output.baseAddress!), count: input.count,
                                    key: key, nonce: nonce, counter: counter)
                initialized = input.count
            }
        }
    }

    /// `input` XORed with the keystream from block `counter` on, into `output` (§2.4).
    ///
    /// `output` may be `input`'s own memory (encryption in place), or apart from it;
    /// it must not overlap it at another offset.
    /// - Throws: `SealError.badOutputLength` unless `output` is exactly as long as
    ///   `input`; `SealError.counterOverflow` when the bytes need a block past counter
    ///   2^32 - 1. Nothing is written then.
    public static func encrypt(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                               key: SealKey, nonce: SealNonce, counter: UInt32) throws(SealError) {
        guard output.count == input.count else { throw .badOutputLength(expected: input.count, actual: output.count) }
        try checkCounter(counter, byteCount: input.count)
        guard input.count > 0 else { return }
        unsafe xorKeystream(input.baseAddress!, output.baseAddress!, count: input.count, key: key, nonce: nonce, counter: counter)
    }

    /// Throws unless `byteCount` bytes from block `counter` on fit below counter 2^32:
    /// blocks `counter ..< counter + ceil(byteCount / 64)` must all be 32-bit values.
    static func checkCounter(_ counter: UInt32, byteCount: Int) throws(SealError) {
        precondition(byteCount >= 0)  // a buffer's or array's count
        let blocks = UInt64(byteCount / blockByteCount) + (byteCount % blockByteCount == 0 ? 0 : 1)
        guard UInt64(counter) + blocks <= 1 << 32 else { throw .counterOverflow(initialCounter: counter, length: byteCount) }
    }

    /// The work behind `encrypt`, unchecked: `output[0..<count] = input[0..<count] ^
    /// keystream(counter...)`. The caller has checked the counter (`checkCounter`) and
    /// that both pointers address `count` bytes, the same or disjoint.
    static func xorKeystream(_ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, count: Int,
                             key: SealKey, nonce: SealNonce, counter: UInt32, wideLanes: Bool = ChaCha20.hasWideLanes) {
        var state = ChaChaState(key: key, nonce: nonce, counter: counter)
        var offset = 0
        // Eight blocks or more: eight at a time with AVX2 where the CPU has it
        // (`hl_chacha20_xor_avx2`, about twice the four-lane speed), the rest below.
        if wideLanes && count >= 8 * blockByteCount {
            let blocks = count / (8 * blockByteCount) * 8
            var words: InlineArray<16, UInt32> = [state.x0, state.x1, state.x2, state.x3, state.x4, state.x5, state.x6, state.x7,
                                                  state.x8, state.x9, state.x10, state.x11, state.x12, state.x13, state.x14, state.x15]
            unsafe withUnsafeBytes(of: &words) { words in
                unsafe hl_chacha20_xor_avx2(words.baseAddress!.assumingMemoryBound(to: UInt32.self),
                                            input.assumingMemoryBound(to: UInt8.self),
                                            output.assumingMemoryBound(to: UInt8.self), blocks)
            }
            state.x12 &+= UInt32(truncatingIfNeeded: blocks)  // within the counter check's range
            offset = blocks * blockByteCount
        }
        // Three blocks or more to go: four at a time (a fourth lane wasted at worst
        // costs less than a third block alone).
        if count > 2 * blockByteCount {
            var keystream = InlineArray<64, UInt32>(repeating: 0)
            unsafe withUnsafeMutableBytes(of: &keystream) { keystream in
                let k = keystream.baseAddress!
                while count - offset > 2 * blockByteCount {
                    unsafe ChaChaLanes.blocks(state, into: k)
                    let n = min(4 * blockByteCount, count - offset)
                    unsafe xor(input + offset, k, into: output + offset, count: n)
                    state.x12 &+= 4  // past 2^32 - 1 only after the last block the counter check allowed
                    offset += n
                }
            }
        }
        while count - offset >= blockByteCount {
            let block = state.block()
            unsafe block.xor64(input + offset, output + offset)
            state.x12 &+= 1  // wraps only after the last block of a checked message
            offset += blockByteCount
        }
        let rest = count - offset
        guard rest > 0 else { return }
        // The last, partial block: through a serialized copy.
        var serialized = state.block().littleEndianWords()
        unsafe withUnsafeBytes(of: &serialized) { keystream in
            unsafe xor(input + offset, keystream.baseAddress!, into: output + offset, count: rest)
        }
    }

    /// `output[0..<count] = input[0..<count] ^ keystream[0..<count]`, 16 bytes at a
    /// time, then byte by byte. `input` and `output` are the same or disjoint.
    @inline(__always)
    static func xor(_ input: UnsafeRawPointer, _ keystream: UnsafeRawPointer, into output: UnsafeMutableRawPointer, count: Int) {
        var i = 0
        while count - i >= 16 {
            let data = unsafe input.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
            let key = unsafe keystream.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
            unsafe output.storeBytes(of: data ^ key, toByteOffset: i, as: SIMD16<UInt8>.self)
            i += 16
        }
        while i < count {
            unsafe output.storeBytes(of: input.load(fromByteOffset: i, as: UInt8.self) ^ keystream.load(fromByteOffset: i, as: UInt8.self),
                                     toByteOffset: i, as: UInt8.self)
            i += 1
        }
    }
}

/// The 16 words of a ChaCha20 state (§2.3), as one value the optimizer keeps in
/// registers: `x0...x3` the constants, `x4...x11` the key, `x12` the block counter,
/// `x13...x15` the nonce.
struct ChaChaState {
    var x0: UInt32 = 0x6170_7865, x1: UInt32 = 0x3320_646e, x2: UInt32 = 0x7962_2d32, x3: UInt32 = 0x6b20_6574  // "expand 32-byte k"
    var x4, x5, x6, x7, x8, x9, x10, x11: UInt32
    var x12: UInt32
    var x13, x14, x15: UInt32

    @inline(__always)
    init(key: SealKey, nonce: SealNonce, counter: UInt32) {
        let k = key.words, n = nonce.words
        (x4, x5, x6, x7, x8, x9, x10, x11) = (k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7])
        x12 = counter
        (x13, x14, x15) = (n[0], n[1], n[2])
    }

    /// The quarter round (§2.1): `a += b; d ^= a; d <<<= 16; c += d; b ^= c; b <<<= 12;
    /// a += b; d ^= a; d <<<= 8; c += d; b ^= c; b <<<= 7`, additions modulo 2^32.
    @inline(__always)
    static func quarterRound(_ a: inout UInt32, _ b: inout UInt32, _ c: inout UInt32, _ d: inout UInt32) {
        a &+= b; d ^= a; d = d &<< 16 | d &>> 16
        c &+= d; b ^= c; b = b &<< 12 | b &>> 20
        a &+= b; d ^= a; d = d &<< 8 | d &>> 24
        c &+= d; b ^= c; b = b &<< 7 | b &>> 25
    }

    /// Ten double rounds: a column round, then a diagonal round (§2.3).
    @inline(__always)
    mutating func twentyRounds() {
        for _ in 0..<10 {
            Self.quarterRound(&x0, &x4, &x8, &x12)
            Self.quarterRound(&x1, &x5, &x9, &x13)
            Self.quarterRound(&x2, &x6, &x10, &x14)
            Self.quarterRound(&x3, &x7, &x11, &x15)
            Self.quarterRound(&x0, &x5, &x10, &x15)
            Self.quarterRound(&x1, &x6, &x11, &x12)
            Self.quarterRound(&x2, &x7, &x8, &x13)
            Self.quarterRound(&x3, &x4, &x9, &x14)
        }
    }

    /// The block function (§2.3): twenty rounds on a copy, then the input added word by
    /// word. The result's words are the keystream block's, before serializing.
    @inline(__always)
    func block() -> ChaChaState {
        var s = self
        s.twentyRounds()
        s.x0 &+= x0; s.x1 &+= x1; s.x2 &+= x2; s.x3 &+= x3
        s.x4 &+= x4; s.x5 &+= x5; s.x6 &+= x6; s.x7 &+= x7
        s.x8 &+= x8; s.x9 &+= x9; s.x10 &+= x10; s.x11 &+= x11
        s.x12 &+= x12; s.x13 &+= x13; s.x14 &+= x14; s.x15 &+= x15
        return s
    }

    /// The 16 words in order.
    func forEachWord(_ body: (UInt32) -> Void) {
        for w in [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15] { body(w) }
    }

    /// The words stored little-endian, so that the value's bytes are the serialized block.
    @inline(__always)
    func littleEndianWords() -> InlineArray<16, UInt32> {
        [x0.littleEndian, x1.littleEndian, x2.littleEndian, x3.littleEndian,
         x4.littleEndian, x5.littleEndian, x6.littleEndian, x7.littleEndian,
         x8.littleEndian, x9.littleEndian, x10.littleEndian, x11.littleEndian,
         x12.littleEndian, x13.littleEndian, x14.littleEndian, x15.littleEndian]
    }

    /// `output[0..<64] = input[0..<64] ^ self` serialized, eight bytes at a time.
    /// Both pointers address 64 bytes, the same or disjoint.
    @inline(__always)
    func xor64(_ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer) {
        @inline(__always)
        func lane(_ lo: UInt32, _ hi: UInt32, _ at: Int) {
            let data = UInt64(littleEndian: unsafe input.loadUnaligned(fromByteOffset: at, as: UInt64.self))
            unsafe output.storeBytes(of: (data ^ (UInt64(hi) << 32 | UInt64(lo))).littleEndian, toByteOffset: at, as: UInt64.self)
        }
        lane(x0, x1, 0); lane(x2, x3, 8); lane(x4, x5, 16); lane(x6, x7, 24)
        lane(x8, x9, 32); lane(x10, x11, 40); lane(x12, x13, 48); lane(x14, x15, 56)
    }
}
