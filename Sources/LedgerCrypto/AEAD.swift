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
        var authentic = false
        let plaintext = unsafe sealed.withUnsafeBytes { sealed in
            unsafe associatedData.withUnsafeBytes { aad in
                // Capacity at least 1: an empty one writes into the shared empty-array
                // storage (a race ThreadSanitizer reports).
                unsafe [UInt8](unsafeUninitializedCapacity: max(1, count)) { plaintext, initialized in
                    authentic = unsafe openUnchecked(sealed.baseAddress!, count: count, aad: aad,
                                                     into: UnsafeMutableRawPointer(plaintext.baseAddress), key: key, nonce: nonce)
                    initialized = authentic ? count : 0
                }
            }
        }
        guard authentic else { throw .authenticationFailed }
        return plaintext
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
        guard unsafe openUnchecked(sealed.baseAddress!, count: count, aad: associatedData, into: output.baseAddress,
                                   key: key, nonce: nonce) else { throw .authenticationFailed }
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

    /// Bytes of ciphertext that the first four keystream blocks cover: blocks 1–3
    /// (block 0 keys Poly1305).
    static let headByteCount = 3 * ChaCha20.blockByteCount

    /// Calls `body` with ChaCha20 blocks 0–3 of (key, nonce), computed together
    /// (`ChaChaLanes`): 256 bytes, of which the first 32 are the Poly1305 key and bytes
    /// 64..<256 the keystream of the first 192 bytes of the message. One four-block
    /// pass costs about two single blocks, so a message of up to 192 bytes takes one.
    @inline(__always)
    static func withFirstBlocks<R>(key: SealKey, nonce: SealNonce, _ body: (UnsafeRawPointer) -> R) -> R {
        var blocks = InlineArray<64, UInt32>(repeating: 0)
        return unsafe withUnsafeMutableBytes(of: &blocks) { blocks in
            unsafe ChaChaLanes.blocks(ChaChaState(key: key, nonce: nonce, counter: 0), into: blocks.baseAddress!)
            return unsafe body(UnsafeRawPointer(blocks.baseAddress!))
        }
    }

    /// The tag over `aad` and the `count` ciphertext bytes at `ciphertext` (§2.8),
    /// with the Poly1305 key at `oneTimeKey`.
    @inline(__always)
    static func tag(oneTimeKey: UnsafeRawPointer, ciphertext: UnsafeRawPointer?, count: Int,
                    aad: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        var mac = unsafe Poly1305(key: oneTimeKey)
        unsafe mac.absorbPadded(aad.baseAddress, count: aad.count)
        unsafe mac.absorbPadded(ciphertext, count: count)
        mac.absorbLengths(UInt64(aad.count), UInt64(count))
        return mac.tag()
    }

    /// `input ^ keystream` from block 1 on, `count` bytes: the first 192 from the
    /// blocks at `firstBlocks`, the rest from block 4 on.
    @inline(__always)
    static func encrypt(_ input: UnsafeRawPointer, into output: UnsafeMutableRawPointer, count: Int,
                        firstBlocks: UnsafeRawPointer, key: SealKey, nonce: SealNonce) {
        let head = min(count, headByteCount)
        unsafe ChaCha20.xor(input, firstBlocks + ChaCha20.blockByteCount, into: output, count: head)
        if count > head {
            unsafe ChaCha20.xorKeystream(input + head, output + head, count: count - head, key: key, nonce: nonce, counter: 4)
        }
    }

    /// Seals, lengths checked by the caller: `count` plaintext bytes at `plaintext`,
    /// `count + 16` bytes of room at `output`.
    static func sealUnchecked(_ plaintext: UnsafeRawPointer?, count: Int, aad: UnsafeRawBufferPointer,
                              into output: UnsafeMutableRawPointer, key: SealKey, nonce: SealNonce) {
        let (t0, t1) = unsafe withFirstBlocks(key: key, nonce: nonce) { blocks in
            if count > 0 {
                unsafe encrypt(plaintext!, into: output, count: count, firstBlocks: blocks, key: key, nonce: nonce)
            }
            return unsafe tag(oneTimeKey: blocks, ciphertext: UnsafeRawPointer(output), count: count, aad: aad)
        }
        unsafe output.storeBytes(of: t0.littleEndian, toByteOffset: count, as: UInt64.self)
        unsafe output.storeBytes(of: t1.littleEndian, toByteOffset: count + 8, as: UInt64.self)
    }

    /// Opens, lengths checked by the caller: `count` ciphertext bytes and the tag at
    /// `sealed`, room for `count` bytes at `output` (nil only when `count` is 0).
    /// Whether the tag matched; the plaintext is written only then.
    ///
    /// The tag is compared whole, in constant time (XORs ORed together, one test of
    /// the result), so the time tells nothing of where a wrong tag differs (§4).
    static func openUnchecked(_ sealed: UnsafeRawPointer, count: Int, aad: UnsafeRawBufferPointer,
                              into output: UnsafeMutableRawPointer?, key: SealKey, nonce: SealNonce) -> Bool {
        unsafe withFirstBlocks(key: key, nonce: nonce) { blocks in
            let (t0, t1) = unsafe tag(oneTimeKey: blocks, ciphertext: sealed, count: count, aad: aad)
            let r0 = UInt64(littleEndian: unsafe sealed.loadUnaligned(fromByteOffset: count, as: UInt64.self))
            let r1 = UInt64(littleEndian: unsafe sealed.loadUnaligned(fromByteOffset: count + 8, as: UInt64.self))
            guard (t0 ^ r0) | (t1 ^ r1) == 0 else { return false }
            if count > 0 {
                unsafe encrypt(sealed, into: output!, count: count, firstBlocks: blocks, key: key, nonce: nonce)
            }
            return true
        }
    }
}
