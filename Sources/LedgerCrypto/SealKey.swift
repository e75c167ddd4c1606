/// A ChaCha20-Poly1305 key: 256 bits (RFC 8439 §2.8, K_LEN = 32 octets).
///
/// Invariant: always exactly 32 bytes; a wrong length cannot be represented. The key is
/// held as the eight little-endian 32-bit words it becomes in the ChaCha20 state
/// (§2.3, words 4–11). Its text forms (`description`, `dump`) never show the bytes.
///
/// One key seals many messages, each under a nonce of its own (see `SealNonce`).
/// Destroying every copy of a key makes what it sealed unreadable (crypto-shredding);
/// Swift does not promise to wipe the memory a value occupied, so this is the
/// erasure of the stored key, not of stray copies in memory.
public struct SealKey: Sendable {
    /// Bytes in a key.
    public static let byteCount = 32

    /// Bytes 4i..<4i+4 as a little-endian word.
    let words: InlineArray<8, UInt32>

    /// The key from its 32 bytes (as `bytes` gives them).
    /// - Throws: `SealError.badKeyLength` for any other count.
    public init(bytes: some Collection<UInt8>) throws(SealError) {
        let array = Array(bytes)  // counted once, whatever the collection
        guard array.count == Self.byteCount else { throw .badKeyLength(array.count) }
        words = InlineArray { i in LittleEndianBytes.word(array, at: 4 * i) }
    }

    /// A new key from the system's cryptographic random source (`getentropy(3)`,
    /// which is `getrandom(2)`; `/dev/urandom` on a kernel without it).
    /// - Throws: `SealError.randomSourceFailed` when neither gives 32 bytes.
    public static func random() throws(SealError) -> SealKey {
        var bytes = [UInt8](repeating: 0, count: byteCount)
        try unsafe SystemRandom.fill(&bytes)
        return try SealKey(bytes: bytes)
    }

    /// The key's 32 bytes, to store it (and to destroy that copy to shred what it sealed).
    public var bytes: [UInt8] { LittleEndianBytes.bytes(words) }

    /// Appends the key's 32 bytes to `out` (a key store writing thousands of keys: no
    /// array per key to make and wipe).
    public func appendBytes(to out: inout [UInt8]) { LittleEndianBytes.append(words, to: &out) }
}

extension SealKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `SealKey(redacted)`: a key never reaches a log through its text.
    public var description: String { "SealKey(redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
