/// Why sealing, opening or making a key or nonce failed. Every length that comes from
/// outside (a key's, a nonce's, a sealed message's, a caller's buffer) is checked
/// before it is used, and a wrong one is one of these cases: nothing in this module
/// traps on bad input.
public enum SealError: Error, Sendable, Equatable {
    /// The tag does not match the key, nonce, associated data and ciphertext: the
    /// sealed bytes were altered, or the key, nonce or associated data is not the one
    /// they were sealed with. Nothing of the plaintext is handed out.
    case authenticationFailed
    /// A sealed message is shorter than its 16-byte tag.
    case truncated(length: Int)
    /// A key was given as this many bytes, not 32.
    case badKeyLength(Int)
    /// A nonce was given as this many bytes, not 12.
    case badNonceLength(Int)
    /// `length` bytes from block `initialCounter` on would need a block counter past
    /// 2^32 - 1 (RFC 8439 §2.3: 32 bits, never wrapped). For sealing, whose counter
    /// starts at 1, the limit is `ChaCha20Poly1305.maximumPlaintextLength`.
    case counterOverflow(initialCounter: UInt32, length: Int)
    /// A caller's output buffer holds `actual` bytes; the operation writes exactly
    /// `expected`.
    case badOutputLength(expected: Int, actual: Int)
    /// The system's random source (`getrandom(2)`, then `/dev/urandom`) failed with
    /// this `errno`; no key was made.
    case randomSourceFailed(errno: Int32)
}
