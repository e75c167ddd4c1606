/// A ChaCha20-Poly1305 nonce: 96 bits (RFC 8439 §2.8, N_MIN = N_MAX = 12 octets).
///
/// Invariant: always exactly 12 bytes, held as the three little-endian words it becomes
/// in the ChaCha20 state (§2.3, words 13–15).
///
/// A nonce must never be used twice with one key: two messages sealed under the same
/// key and nonce reveal the XOR of their plaintexts and let an attacker forge tags
/// (§4). RFC 8439 (§2.3, §2.6) advises a counter, not random bytes; `init(prefix:counter:)`
/// builds one as a 32-bit fixed part (per sender or per purpose) and a 64-bit counter.
public struct SealNonce: Sendable, Hashable {
    /// Bytes in a nonce.
    public static let byteCount = 12

    /// Bytes 4i..<4i+4 as a little-endian word.
    let words: InlineArray<3, UInt32>

    /// The nonce from its 12 bytes (as `bytes` gives them).
    /// - Throws: `SealError.badNonceLength` for any other count.
    public init(bytes: some Collection<UInt8>) throws(SealError) {
        let array = Array(bytes)  // counted once, whatever the collection
        guard array.count == Self.byteCount else { throw .badNonceLength(array.count) }
        words = InlineArray { i in LittleEndianBytes.word(array, at: 4 * i) }
    }

    /// The nonce `prefix` ‖ `counter`, each little-endian: bytes 0–3 the fixed part,
    /// bytes 4–11 the counter (RFC 8439 §2.3's partition of the nonce space; §2.8.2's
    /// example is prefix 7 and an 8-byte IV). Distinct (prefix, counter) pairs give
    /// distinct nonces.
    public init(prefix: UInt32, counter: UInt64) {
        words = [prefix, UInt32(truncatingIfNeeded: counter), UInt32(truncatingIfNeeded: counter >> 32)]
    }

    /// The nonce's 12 bytes.
    public var bytes: [UInt8] { LittleEndianBytes.bytes(words) }

    public static func == (a: SealNonce, b: SealNonce) -> Bool {
        a.words[0] == b.words[0] && a.words[1] == b.words[1] && a.words[2] == b.words[2]
    }

    public func hash(into hasher: inout Hasher) {
        for i in words.indices { hasher.combine(words[i]) }
    }
}

extension SealNonce: CustomStringConvertible {
    /// The 12 bytes in hex (a nonce is not secret).
    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        return "SealNonce(" + String(decoding: text, as: UTF8.self) + ")"
    }
}

/// Little-endian words to and from bytes, for the key and nonce (not a hot path).
enum LittleEndianBytes {
    /// Bytes `offset..<offset+4` of `bytes` as a little-endian word. The caller has
    /// checked that they exist.
    static func word(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }

    static func bytes<let count: Int>(_ words: InlineArray<count, UInt32>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4 * count)
        append(words, to: &out)
        return out
    }

    /// Appends `words` as little-endian bytes, one by one (`out += [a, b, c, d]` built
    /// an array per word).
    static func append<let count: Int>(_ words: InlineArray<count, UInt32>, to out: inout [UInt8]) {
        for i in words.indices {
            let w = words[i]
            out.append(UInt8(truncatingIfNeeded: w))
            out.append(UInt8(truncatingIfNeeded: w >> 8))
            out.append(UInt8(truncatingIfNeeded: w >> 16))
            out.append(UInt8(truncatingIfNeeded: w >> 24))
        }
    }
}
