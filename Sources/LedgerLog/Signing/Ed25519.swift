/// Ed25519 (RFC 8032 §5.1): keys from a 32-byte seed, signing and verification, written
/// here from the RFC (field arithmetic modulo 2^255 − 19 in five 51-bit limbs, points in
/// extended twisted-Edwards coordinates, scalars modulo the group order ℓ).
/// Checkpoints are signed a few times a day, so this favours plainness over speed and
/// makes no constant-time claims beyond what plain code gives.
public enum Ed25519 {
    /// The public key (32 bytes) of a 32-byte seed (the RFC's private key).
    public static func publicKey(seed: [UInt8]) -> [UInt8] {
        precondition(seed.count == 32, "an Ed25519 seed is 32 bytes")
        let (a, _) = expand(seed)
        return Point.base.multiplied(by: a).encoded()
    }

    /// The 64-byte signature of `message` under the key of `seed`.
    public static func sign(_ message: [UInt8], seed: [UInt8]) -> [UInt8] {
        precondition(seed.count == 32, "an Ed25519 seed is 32 bytes")
        let (a, prefix) = expand(seed)
        let publicKey = Point.base.multiplied(by: a).encoded()
        let r = reduce(SHA512.hash(prefix + message))
        let rEncoded = Point.base.multiplied(by: r).encoded()
        let k = reduce(SHA512.hash(rEncoded + publicKey + message))
        return rEncoded + mulAdd(k, a, r)
    }

    /// True when `signature` is `publicKey`'s signature of `message` (cofactorless check
    /// [S]B = R + [k]A by encoding, S < ℓ required, as Go's crypto/ed25519 does).
    public static func verify(_ signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == 64, publicKey.count == 32, let a = Point(decoding: publicKey) else { return false }
        let rBytes = Array(signature[0..<32]), s = Array(signature[32..<64])
        guard isCanonicalScalar(s) else { return false }
        let k = reduce(SHA512.hash(rBytes + publicKey + message))
        let check = Point.base.multiplied(by: s).adding(a.negated().multiplied(by: k))
        return check.encoded() == rBytes
    }

    /// The clamped secret scalar and the nonce prefix (RFC 8032 §5.1.5).
    static func expand(_ seed: [UInt8]) -> (scalar: [UInt8], prefix: [UInt8]) {
        let h = SHA512.hash(seed)
        var a = Array(h[0..<32])
        a[0] &= 248
        a[31] &= 127
        a[31] |= 64
        return (a, Array(h[32..<64]))
    }

    // MARK: Scalars modulo ℓ = 2^252 + 27742317777372353535851937790883648493

    static let order: [Int64] = [0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
                                 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10]

    /// x (64 signed byte-sized limbs) modulo ℓ, as 32 little-endian bytes.
    static func modL(_ xIn: [Int64]) -> [UInt8] {
        var x = xIn
        var i = 63
        while i >= 32 {
            var carry: Int64 = 0
            var j = i - 32
            while j < i - 12 {
                x[j] = x[j] &+ carry &- 16 &* x[i] &* order[j - (i - 32)]
                carry = (x[j] &+ 128) >> 8
                x[j] = x[j] &- (carry &<< 8)
                j += 1
            }
            x[j] = x[j] &+ carry
            x[i] = 0
            i -= 1
        }
        var carry: Int64 = 0
        for j in 0..<32 {
            x[j] = x[j] &+ carry &- (x[31] >> 4) &* order[j]
            carry = x[j] >> 8
            x[j] &= 255
        }
        for j in 0..<32 { x[j] = x[j] &- carry &* order[j] }
        var r = [UInt8](repeating: 0, count: 32)
        for i in 0..<32 {
            x[i + 1] = x[i + 1] &+ (x[i] >> 8)
            r[i] = UInt8(truncatingIfNeeded: x[i] & 255)
        }
        return r
    }

    /// A 64-byte little-endian number modulo ℓ.
    static func reduce(_ bytes: [UInt8]) -> [UInt8] {
        modL(bytes.map { Int64($0) })
    }

    /// (k·a + r) mod ℓ.
    static func mulAdd(_ k: [UInt8], _ a: [UInt8], _ r: [UInt8]) -> [UInt8] {
        var x = [Int64](repeating: 0, count: 64)
        for i in 0..<32 { x[i] = Int64(r[i]) }
        for i in 0..<32 { for j in 0..<32 { x[i + j] = x[i + j] &+ Int64(k[i]) &* Int64(a[j]) } }
        return modL(x)
    }

    /// S < ℓ (RFC 8032 §5.1.7 step 1).
    static func isCanonicalScalar(_ s: [UInt8]) -> Bool {
        for i in stride(from: 31, through: 0, by: -1) {
            let l = UInt8(order[i])
            if s[i] < l { return true }
            if s[i] > l { return false }
        }
        return false
    }
}

/// An element of GF(2^255 − 19) in five 51-bit limbs.
struct FieldElement: Equatable {
    var l: (UInt64, UInt64, UInt64, UInt64, UInt64)
    static let mask: UInt64 = (1 << 51) - 1

    init(_ a: UInt64, _ b: UInt64, _ c: UInt64, _ d: UInt64, _ e: UInt64) { l = (a, b, c, d, e) }
    static let zero = FieldElement(0, 0, 0, 0, 0)
    static let one = FieldElement(1, 0, 0, 0, 0)

    /// From 32 little-endian bytes, ignoring the top bit.
    init(bytes b: [UInt8]) {
        func load(_ i: Int) -> UInt64 {
            var v: UInt64 = 0
            for j in 0..<8 where i + j < 32 { v |= UInt64(b[i + j]) << UInt64(8 * j) }
            return v
        }
        l = (load(0) & Self.mask, (load(6) >> 3) & Self.mask, (load(12) >> 6) & Self.mask,
             (load(19) >> 1) & Self.mask, (load(24) >> 12) & Self.mask)
    }

    static func == (a: FieldElement, b: FieldElement) -> Bool { a.bytes() == b.bytes() }

    func carried() -> FieldElement {
        var (a, b, c, d, e) = l
        b += a >> 51; a &= Self.mask
        c += b >> 51; b &= Self.mask
        d += c >> 51; c &= Self.mask
        e += d >> 51; d &= Self.mask
        a += 19 * (e >> 51); e &= Self.mask
        b += a >> 51; a &= Self.mask
        return FieldElement(a, b, c, d, e)
    }

    static func + (x: FieldElement, y: FieldElement) -> FieldElement {
        FieldElement(x.l.0 + y.l.0, x.l.1 + y.l.1, x.l.2 + y.l.2, x.l.3 + y.l.3, x.l.4 + y.l.4).carried()
    }

    static func - (x: FieldElement, y: FieldElement) -> FieldElement {
        let y = y.carried()
        // x + 4p − y keeps every limb positive.
        return FieldElement(x.l.0 + 0x1F_FFFF_FFFF_FFB4 - y.l.0, x.l.1 + 0x1F_FFFF_FFFF_FFFC - y.l.1,
                            x.l.2 + 0x1F_FFFF_FFFF_FFFC - y.l.2, x.l.3 + 0x1F_FFFF_FFFF_FFFC - y.l.3,
                            x.l.4 + 0x1F_FFFF_FFFF_FFFC - y.l.4).carried()
    }

    static prefix func - (x: FieldElement) -> FieldElement { zero - x }

    static func * (x: FieldElement, y: FieldElement) -> FieldElement {
        let (a0, a1, a2, a3, a4) = (UInt128(x.l.0), UInt128(x.l.1), UInt128(x.l.2), UInt128(x.l.3), UInt128(x.l.4))
        let (b0, b1, b2, b3, b4) = (UInt128(y.l.0), UInt128(y.l.1), UInt128(y.l.2), UInt128(y.l.3), UInt128(y.l.4))
        var r0 = a0 * b0 + 19 * (a1 * b4 + a2 * b3 + a3 * b2 + a4 * b1)
        var r1 = a0 * b1 + a1 * b0 + 19 * (a2 * b4 + a3 * b3 + a4 * b2)
        var r2 = a0 * b2 + a1 * b1 + a2 * b0 + 19 * (a3 * b4 + a4 * b3)
        var r3 = a0 * b3 + a1 * b2 + a2 * b1 + a3 * b0 + 19 * (a4 * b4)
        var r4 = a0 * b4 + a1 * b3 + a2 * b2 + a3 * b1 + a4 * b0
        let m = UInt128(mask)
        r1 += r0 >> 51; r0 &= m
        r2 += r1 >> 51; r1 &= m
        r3 += r2 >> 51; r2 &= m
        r4 += r3 >> 51; r3 &= m
        r0 += 19 * (r4 >> 51); r4 &= m
        r1 += r0 >> 51; r0 &= m
        return FieldElement(UInt64(r0), UInt64(r1), UInt64(r2), UInt64(r3), UInt64(r4))
    }

    func squared() -> FieldElement { self * self }

    /// self^e for a little-endian exponent.
    func power(_ e: [UInt8]) -> FieldElement {
        var r = FieldElement.one
        for i in stride(from: 255, through: 0, by: -1) {
            r = r.squared()
            if (e[i / 8] >> UInt8(i % 8)) & 1 == 1 { r = r * self }
        }
        return r
    }

    /// p − 2, (p − 5)/8 and (p − 1)/4, little-endian.
    static let pMinus2: [UInt8] = [0xeb] + [UInt8](repeating: 0xff, count: 30) + [0x7f]
    static let pMinus5Over8: [UInt8] = [0xfd] + [UInt8](repeating: 0xff, count: 30) + [0x0f]
    static let pMinus1Over4: [UInt8] = [0xfb] + [UInt8](repeating: 0xff, count: 30) + [0x1f]

    func inverted() -> FieldElement { power(Self.pMinus2) }

    /// The canonical 32 little-endian bytes.
    func bytes() -> [UInt8] {
        var (a, b, c, d, e) = carried().carried().l
        var q = (a + 19) >> 51
        q = (b + q) >> 51; q = (c + q) >> 51; q = (d + q) >> 51; q = (e + q) >> 51
        a += 19 * q
        b += a >> 51; a &= Self.mask
        c += b >> 51; b &= Self.mask
        d += c >> 51; c &= Self.mask
        e += d >> 51; d &= Self.mask
        e &= Self.mask
        var out = [UInt8](repeating: 0, count: 32)
        var acc: UInt128 = UInt128(a) | UInt128(b) << 51 | UInt128(c) << 102
        for i in 0..<16 { out[i] = UInt8(truncatingIfNeeded: acc >> UInt128(8 * i)) }
        acc = (UInt128(c) >> 26) | UInt128(d) << 25 | UInt128(e) << 76
        for i in 0..<16 { out[16 + i] = UInt8(truncatingIfNeeded: acc >> UInt128(8 * i)) }
        return out
    }

    var isNegative: Bool { bytes()[0] & 1 == 1 }
}

/// A point of edwards25519 in extended coordinates (X:Y:Z:T), x = X/Z, y = Y/Z, xy = T/Z.
struct Point {
    var x, y, z, t: FieldElement

    static let d = -FieldElement(bytes: le(121665)) * FieldElement(bytes: le(121666)).inverted()
    static let d2 = d + d
    static let sqrtMinus1 = FieldElement(bytes: le(2)).power(FieldElement.pMinus1Over4)
    static let identity = Point(x: .zero, y: .one, z: .one, t: .zero)
    static let base = Point(decoding: [0x58] + [UInt8](repeating: 0x66, count: 31))!

    static func le(_ v: UInt64) -> [UInt8] { (0..<32).map { $0 < 8 ? UInt8(truncatingIfNeeded: v >> UInt64(8 * $0)) : 0 } }

    init(x: FieldElement, y: FieldElement, z: FieldElement, t: FieldElement) {
        self.x = x; self.y = y; self.z = z; self.t = t
    }

    /// RFC 8032 §5.1.3; nil for bytes that are not a point (or a non-canonical y).
    init?(decoding bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        let y = FieldElement(bytes: bytes)
        var yBytes = bytes
        yBytes[31] &= 0x7f
        guard y.bytes() == yBytes else { return nil }
        let sign = bytes[31] >> 7
        let y2 = y.squared()
        let u = y2 - .one, v = Point.d * y2 + .one
        let v3 = v.squared() * v
        var x = u * v3 * (u * v3.squared() * v).power(FieldElement.pMinus5Over8)
        let vx2 = v * x.squared()
        if vx2 == u {
        } else if vx2 == -u {
            x = x * Point.sqrtMinus1
        } else {
            return nil
        }
        if x == .zero && sign == 1 { return nil }
        if (x.isNegative ? 1 : 0) != sign { x = -x }
        self.init(x: x, y: y, z: .one, t: x * y)
    }

    func encoded() -> [UInt8] {
        let zi = z.inverted()
        let xa = x * zi, ya = y * zi
        var out = ya.bytes()
        if xa.isNegative { out[31] |= 0x80 }
        return out
    }

    /// The unified addition of Hisil–Wong–Carter–Dawson (a = −1), RFC 8032 §5.1.4.
    func adding(_ q: Point) -> Point {
        let a = (y - x) * (q.y - q.x)
        let b = (y + x) * (q.y + q.x)
        let c = t * Point.d2 * q.t
        let d = z * (q.z + q.z)
        let e = b - a, f = d - c, g = d + c, h = b + a
        return Point(x: e * f, y: g * h, z: f * g, t: e * h)
    }

    func negated() -> Point { Point(x: -x, y: y, z: z, t: -t) }

    /// [k]P for a 32-byte little-endian scalar.
    func multiplied(by k: [UInt8]) -> Point {
        var r = Point.identity
        for i in stride(from: 255, through: 0, by: -1) {
            r = r.adding(r)
            if (k[i / 8] >> UInt8(i % 8)) & 1 == 1 { r = r.adding(self) }
        }
        return r
    }
}
