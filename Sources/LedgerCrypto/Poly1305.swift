/// The Poly1305 one-time authenticator of RFC 8439 §2.5: a 32-byte one-time key
/// (r ‖ s) and a message give a 16-byte tag,
/// `tag = ((Σ blockᵢ · r^(n-i+1)) mod (2^130 - 5) + s) mod 2^128`.
///
/// A key must authenticate one message only: two tags under one key give it away.
/// In the AEAD the key is ChaCha20's block 0 for the message's (key, nonce) (§2.6).
///
/// Arithmetic: the accumulator `h` is three 64-bit limbs `h0 + h1·2^64 + h2·2^128`;
/// products are 64×64→128-bit. Invariants, which the bounds below rely on:
/// - r is clamped (§2.5), so `r0, r1 < 2^60` and `r1 % 4 == 0`; then
///   `2^128·r1 ≡ 5·(r1/4)` (mod p), and `s1 = r1 + r1/4 < 2^61`.
/// - Between blocks `h < 2^130 + 2^64` (`h2 ≤ 4`, and `h2 == 4` only with `h1 == 0`),
///   a partial reduction, not necessarily `< p`; so before a multiplication, with a
///   block of at most 2^129 added, `h2 ≤ 6`.
/// - The tag is made from `h mod p`, computed in constant time by one conditional
///   subtraction of p (enough since `h < 2p`), then s added modulo 2^128.
/// - Time depends on the message length only: no branch or index depends on the key
///   or data.
public struct Poly1305: Sendable {
    /// Bytes in a one-time key, and in a tag.
    public static let keyByteCount = 32, tagByteCount = 16

    private var h0: UInt64 = 0, h1: UInt64 = 0, h2: UInt64 = 0
    /// r, clamped, as two little-endian 64-bit words (internal for the tests).
    let r0: UInt64, r1: UInt64
    /// 5·r1/4 (exact: r1 % 4 == 0).
    private let s1: UInt64
    /// s, added at the end.
    private let pad0: UInt64, pad1: UInt64

    /// A fresh accumulator for the key r ‖ s, each half given as two little-endian
    /// 64-bit words; r is clamped here.
    init(r0: UInt64, r1: UInt64, s0: UInt64, s1: UInt64) {
        self.r0 = r0 & 0x0fff_fffc_0fff_ffff
        self.r1 = r1 & 0x0fff_fffc_0fff_fffc
        self.s1 = self.r1 &+ self.r1 &>> 2
        pad0 = s0
        pad1 = s1
    }

    /// A fresh accumulator for a one-time key of 32 bytes at `key`.
    init(key: UnsafeRawPointer) {
        func word(_ i: Int) -> UInt64 { UInt64(littleEndian: unsafe key.loadUnaligned(fromByteOffset: 8 * i, as: UInt64.self)) }
        self.init(r0: word(0), r1: word(1), s0: word(2), s1: word(3))
    }

    /// The tag of `message` under `oneTimeKey` (§2.5).
    /// - Throws: `SealError.badKeyLength` unless the key is 32 bytes.
    public static func authenticate(_ message: [UInt8], oneTimeKey: [UInt8]) throws(SealError) -> [UInt8] {
        guard oneTimeKey.count == keyByteCount else { throw .badKeyLength(oneTimeKey.count) }
        var mac = unsafe oneTimeKey.withUnsafeBytes { unsafe Poly1305(key: $0.baseAddress!) }
        unsafe message.withUnsafeBytes { unsafe mac.absorbMessage($0) }
        let (t0, t1) = mac.tag()
        return LittleEndianBytes.bytes([UInt32(truncatingIfNeeded: t0), UInt32(truncatingIfNeeded: t0 >> 32),
                                        UInt32(truncatingIfNeeded: t1), UInt32(truncatingIfNeeded: t1 >> 32)])
    }

    /// A whole message as §2.5 reads it: 16-byte blocks, each with 2^128 added; a last,
    /// shorter block with a 0x01 byte after it instead, zero-padded.
    mutating func absorbMessage(_ bytes: UnsafeRawBufferPointer) {
        let whole = bytes.count / 16 * 16
        guard bytes.count > 0 else { return }
        unsafe absorbBlocks(bytes.baseAddress!, count: whole / 16, highBit: 1)
        let rest = bytes.count - whole
        guard rest > 0 else { return }
        var last: (UInt64, UInt64) = (0, 0)
        unsafe withUnsafeMutableBytes(of: &last) { block in
            for i in 0..<rest { unsafe block[i] = bytes[whole + i] }
            unsafe block[rest] = 1
        }
        unsafe withUnsafeBytes(of: &last) { unsafe absorbBlocks($0.baseAddress!, count: 1, highBit: 0) }
    }

    /// `bytes` zero-padded to a multiple of 16, as the AEAD reads the associated data
    /// and the ciphertext (§2.8): every block, the padded last one too, with 2^128 added.
    mutating func absorbPadded(_ bytes: UnsafeRawPointer?, count: Int) {
        guard count > 0, let bytes = unsafe bytes else { return }
        let whole = count / 16
        unsafe absorbBlocks(bytes, count: whole, highBit: 1)
        let rest = count - whole * 16
        guard rest > 0 else { return }
        var last: (UInt64, UInt64) = (0, 0)
        unsafe withUnsafeMutableBytes(of: &last) { block in
            unsafe block.baseAddress!.copyMemory(from: bytes + whole * 16, byteCount: rest)
        }
        unsafe withUnsafeBytes(of: &last) { unsafe absorbBlocks($0.baseAddress!, count: 1, highBit: 1) }
    }

    /// The AEAD's last block (§2.8): the two lengths as little-endian 64-bit integers.
    mutating func absorbLengths(_ a: UInt64, _ b: UInt64) {
        var block = (a.littleEndian, b.littleEndian)
        unsafe withUnsafeBytes(of: &block) { unsafe absorbBlocks($0.baseAddress!, count: 1, highBit: 1) }
    }

    /// `count` 16-byte blocks at `blocks`: for each, h = (h + block + highBit·2^128) · r,
    /// partially reduced mod 2^130 - 5.
    @inline(__always)
    mutating func absorbBlocks(_ blocks: UnsafeRawPointer, count: Int, highBit: UInt64) {
        var h0 = self.h0, h1 = self.h1, h2 = self.h2
        let r0 = self.r0, r1 = self.r1, s1 = self.s1
        for i in 0..<count {
            // a = h + block (+ 2^128): a2 ≤ 4 + 1 + 1.
            let m0 = UInt64(littleEndian: unsafe blocks.loadUnaligned(fromByteOffset: 16 * i, as: UInt64.self))
            let m1 = UInt64(littleEndian: unsafe blocks.loadUnaligned(fromByteOffset: 16 * i + 8, as: UInt64.self))
            let (sum, carry) = (UInt128(h1) << 64 | UInt128(h0)).addingReportingOverflow(UInt128(m1) << 64 | UInt128(m0))
            let a0 = UInt64(truncatingIfNeeded: sum), a1 = UInt64(truncatingIfNeeded: sum >> 64)
            let a2 = h2 &+ highBit &+ (carry ? 1 : 0)

            // d = a · r, folded with 2^128·r1 ≡ s1 (mod p):
            //   d0 = a0·r0 + a1·s1              < 2^124 + 2^125
            //   d1 = a0·r1 + a1·r0 + a2·s1      < 2^125 + 2^64, plus d0's carry
            //   d2 = a2·r0, plus d1's carry     < 2^63 + 2^62 (the coefficient of 2^128)
            let d0 = Self.product(a0, r0) &+ Self.product(a1, s1)
            let d1 = Self.product(a0, r1) &+ Self.product(a1, r0) &+ UInt128(a2 &* s1) &+ (d0 >> 64)
            let d2 = a2 &* r0 &+ UInt64(truncatingIfNeeded: d1 >> 64)

            // Partial reduction: d2·2^128 = (d2 >> 2)·2^130 + (d2 & 3)·2^128, and 2^130 ≡ 5.
            let fold = (d2 & ~3) &+ (d2 &>> 2)  // 5·(d2 >> 2) < 2^64
            let low = UInt128(UInt64(truncatingIfNeeded: d1)) << 64 | UInt128(UInt64(truncatingIfNeeded: d0))
            let (reduced, carried) = low.addingReportingOverflow(UInt128(fold))
            h0 = UInt64(truncatingIfNeeded: reduced)
            h1 = UInt64(truncatingIfNeeded: reduced >> 64)
            h2 = (d2 & 3) &+ (carried ? 1 : 0)  // ≤ 4, and 4 only when h1:h0 wrapped below fold
        }
        self.h0 = h0
        self.h1 = h1
        self.h2 = h2
    }

    /// `a · b` in full.
    @inline(__always)
    static func product(_ a: UInt64, _ b: UInt64) -> UInt128 {
        let (high, low) = a.multipliedFullWidth(by: b)
        return UInt128(high) << 64 | UInt128(low)
    }

    /// The tag, as two little-endian 64-bit words: (h mod p + s) mod 2^128.
    func tag() -> (UInt64, UInt64) {
        // h < 2^130 + 2^64 < 2p, so h mod p is h, or h - p = (h + 5) - 2^130 when h + 5
        // reaches 2^130; chosen by mask, not by branch.
        let h = UInt128(h1) << 64 | UInt128(h0)
        let (g, carry) = h.addingReportingOverflow(5)
        let g2 = h2 &+ (carry ? 1 : 0)
        let mask = UInt128(0) &- UInt128(g2 &>> 2)  // all ones when h ≥ p (g2 ≤ 5)
        let reduced = (g & mask) | (h & ~mask)
        let t = reduced &+ (UInt128(pad1) << 64 | UInt128(pad0))
        return (UInt64(truncatingIfNeeded: t), UInt64(truncatingIfNeeded: t >> 64))
    }
}
