/// AEAD_CHACHA20_POLY1305 (RFC 8439 §2.8): authenticated encryption with associated
/// data. `seal` gives ciphertext ‖ 16-byte tag; `open` checks the tag and gives back
/// the plaintext, or refuses.
///
/// Invariants:
/// - The Poly1305 key is ChaCha20 block 0 of (key, nonce) (§2.6); the plaintext is
///   encrypted from block 1 on, so a message is at most `maximumPlaintextLength` bytes.
/// - The tag covers AAD ‖ pad16 ‖ ciphertext ‖ pad16 ‖ len(AAD) ‖ len(ciphertext),
///   the lengths as little-endian 64-bit integers.
/// - `open` compares the whole tag in constant time and decrypts only after it
///   matched: on any refusal no plaintext byte is handed out or written.
/// - Every length is checked before anything is read or written; a wrong one throws
///   a `SealError`, nothing traps.
///
/// Never seal two messages under one key and nonce (see `SealNonce`).
public enum ChaCha20Poly1305 {
    /// Bytes in a tag, the overhead of a sealed message.
    public static let tagByteCount = 16

    /// P_MAX (§2.8): 2^32 - 1 blocks of 64 bytes, 274,877,906,880 bytes.
    public static let maximumPlaintextLength = ((1 << 32) - 1) * ChaCha20.blockByteCount

    // MARK: Arrays

    /// `plaintext` sealed: its ciphertext, then the 16-byte tag over it and
    /// `associatedData`.
    /// - Throws: `SealError.counterOverflow` for a plaintext longer than
    ///   `maximumPlaintextLength`.
    public static func seal(plaintext: [UInt8], key: SealKey, nonce: SealNonce,
                            associatedData: [UInt8] = []) throws(SealError) -> [UInt8] {
        try checkPlaintextLength(plaintext.count)
        let count = plaintext.count + tagByteCount
        return unsafe plaintext.withUnsafeBytes { plaintext in
            unsafe associatedData.withUnsafeBytes { aad in
                unsafe [UInt8](unsafeUninitializedCapacity: count) { sealed, initialized in
                    unsafe sealUnchecked(plaintext.baseAddress, count: plaintext.count, aad: aad,
                                         into: UnsafeMutableRawPointer(sealed.baseAddress!), key: key, nonce: nonce)
                    initialized = count
                }
            }
        }
    }

    /// The plaintext of `sealed` (ciphertext ‖ tag), when its tag is right for `key`,
    /// `nonce` and `associatedData`.
    /// - Throws: `SealError.truncated` when `sealed` is shorter than a tag;
    ///   `SealError.counterOverflow` when its ciphertext is longer than any sealed one
    ///   can be; `SealError.authenticationFailed` when the tag does not match.
    public static func open(sealed: [UInt8], key: SealKey, nonce: SealNonce,
                            associatedData: [UInt8] = []) throws(SealError) -> [UInt8] {
        let count = try checkSealedLength(sealed.count)
        let authentic = unsafe sealed.withUnsafeBytes { sealed in
            unsafe associatedData.withUnsafeBytes { aad in
                unsafe tagMatches(sealed.baseAddress!, count: count, aad: aad, key: key, nonce: nonce)
            }
        }
        guard authentic else { throw .authenticationFailed }
        guard count > 0 else { return [] }
        return unsafe sealed.withUnsafeBytes { sealed in
            unsafe [UInt8](unsafeUninitializedCapacity: count) { plaintext, initialized in
                unsafe ChaCha20.xorKeystream(sealed.baseAddress!, UnsafeMutableRawPointer(plaintext.baseAddress!), count: count,
                                             key: key, nonce: nonce, counter: 1)
                initialized = count
            }
        }
    }

    // MARK: Buffers

    /// `plaintext` sealed into `output`: ciphertext in its first `plaintext.count`
    /// bytes, the tag in the last 16. For hot paths: nothing is allocated.
    ///
    /// `output` may begin at `plaintext`'s own memory (sealing in place, the tag
    /// written after it), or lie apart from it; `associatedData` must not overlap it.
    /// - Throws: `SealError.counterOverflow` for a plaintext longer than
    ///   `maximumPlaintextLength`; `SealError.badOutputLength` unless `output` is
    ///   exactly `plaintext.count + 16` bytes. Nothing is written then.
    public static func seal(plaintext: UnsafeRawBufferPointer, key: SealKey, nonce: SealNonce,
                            associatedData: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(SealError) {
        try checkPlaintextLength(plaintext.count)
        let count = plaintext.count + tagByteCount
        guard output.count == count else { throw .badOutputLength(expected: count, actual: output.count) }
        unsafe sealUnchecked(plaintext.baseAddress, count: plaintext.count, aad: associatedData,
                             into: output.baseAddress!, key: key, nonce: nonce)
    }

    /// The plaintext of `sealed` (ciphertext ‖ tag) into `output`, when its tag is
    /// right for `key`, `nonce` and `associatedData`. For hot paths: nothing is
    /// allocated.
    ///
    /// `output` may begin at `sealed`'s own memory (opening in place), or lie apart
    /// from it. When the tag does not match, `output` is left as it was.
    /// - Throws: `SealError.truncated` when `sealed` is shorter than a tag;
    ///   `SealError.counterOverflow` when its ciphertext is longer than any sealed one
    ///   can be; `SealError.badOutputLength` unless `output` is exactly
    ///   `sealed.count - 16` bytes; `SealError.authenticationFailed` when the tag does
    ///   not match.
    public static func open(sealed: UnsafeRawBufferPointer, key: SealKey, nonce: SealNonce,
                            associatedData: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(SealError) {
        let count = try checkSealedLength(sealed.count)
        guard output.count == count else { throw .badOutputLength(expected: count, actual: output.count) }
        guard unsafe tagMatches(sealed.baseAddress!, count: count, aad: associatedData, key: key, nonce: nonce) else {
            throw .authenticationFailed
        }
        guard count > 0 else { return }
        unsafe ChaCha20.xorKeystream(sealed.baseAddress!, output.baseAddress!, count: count, key: key, nonce: nonce, counter: 1)
    }

    // MARK: The construction

    /// Throws unless a plaintext of `count` bytes fits the 32-bit counter from block 1.
    static func checkPlaintextLength(_ count: Int) throws(SealError) {
        guard count <= maximumPlaintextLength else { throw .counterOverflow(initialCounter: 1, length: count) }
    }

    /// The ciphertext's length in a sealed message of `count` bytes, or why there is none.
    static func checkSealedLength(_ count: Int) throws(SealError) -> Int {
        guard count >= tagByteCount else { throw .truncated(length: count) }
        let ciphertext = count - tagByteCount
        try checkPlaintextLength(ciphertext)
        return ciphertext
    }

    /// The Poly1305 accumulator for (key, nonce): keyed by the first 32 bytes of
    /// ChaCha20 block 0 (§2.6), as words: r = words 0–3, s = words 4–7.
    @inline(__always)
    static func poly1305(key: SealKey, nonce: SealNonce) -> Poly1305 {
        let b = ChaChaState(key: key, nonce: nonce, counter: 0).block()
        func join(_ lo: UInt32, _ hi: UInt32) -> UInt64 { UInt64(hi) << 32 | UInt64(lo) }
        return Poly1305(r0: join(b.x0, b.x1), r1: join(b.x2, b.x3), s0: join(b.x4, b.x5), s1: join(b.x6, b.x7))
    }

    /// The tag over `aad` and the `count` ciphertext bytes at `ciphertext` (§2.8).
    @inline(__always)
    static func tag(ciphertext: UnsafeRawPointer?, count: Int, aad: UnsafeRawBufferPointer,
                    key: SealKey, nonce: SealNonce) -> (UInt64, UInt64) {
        var mac = poly1305(key: key, nonce: nonce)
        unsafe mac.absorbPadded(aad.baseAddress, count: aad.count)
        unsafe mac.absorbPadded(ciphertext, count: count)
        mac.absorbLengths(UInt64(aad.count), UInt64(count))
        return mac.tag()
    }

    /// Seals, lengths checked by the caller: `count` plaintext bytes at `plaintext`,
    /// `count + 16` bytes of room at `output`.
    static func sealUnchecked(_ plaintext: UnsafeRawPointer?, count: Int, aad: UnsafeRawBufferPointer,
                              into output: UnsafeMutableRawPointer, key: SealKey, nonce: SealNonce) {
        if count > 0 {
            unsafe ChaCha20.xorKeystream(plaintext!, output, count: count, key: key, nonce: nonce, counter: 1)
        }
        let (t0, t1) = unsafe tag(ciphertext: UnsafeRawPointer(output), count: count, aad: aad, key: key, nonce: nonce)
        unsafe output.storeBytes(of: t0.littleEndian, toByteOffset: count, as: UInt64.self)
        unsafe output.storeBytes(of: t1.littleEndian, toByteOffset: count + 8, as: UInt64.self)
    }

    /// Whether the tag after the `count` ciphertext bytes at `sealed` is the one
    /// computed: all 16 bytes compared in constant time (XORs ORed together, one test
    /// of the result), so the time tells nothing of where a wrong tag differs (§4).
    static func tagMatches(_ sealed: UnsafeRawPointer, count: Int, aad: UnsafeRawBufferPointer,
                           key: SealKey, nonce: SealNonce) -> Bool {
        let (t0, t1) = unsafe tag(ciphertext: sealed, count: count, aad: aad, key: key, nonce: nonce)
        let r0 = UInt64(littleEndian: unsafe sealed.loadUnaligned(fromByteOffset: count, as: UInt64.self))
        let r1 = UInt64(littleEndian: unsafe sealed.loadUnaligned(fromByteOffset: count + 8, as: UInt64.self))
        return (t0 ^ r0) | (t1 ^ r1) == 0
    }
}
