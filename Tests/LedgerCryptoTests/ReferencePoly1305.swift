/// Poly1305 straight from RFC 8439 §2.5.1's pseudocode, on arbitrary-size numbers:
/// slow and plain, to check the 64-bit-limb implementation against on many inputs.
/// Shares no code with it: r is clamped byte by byte as §2.5's C sample does, and the
/// arithmetic is schoolbook on 32-bit limbs with a full reduction after every block.
enum ReferencePoly1305 {
    /// A non-negative integer as little-endian 32-bit limbs, without high zero limbs.
    struct Number: Equatable {
        var limbs: [UInt32]

        init(limbs: [UInt32]) {
            var l = limbs
            while l.last == 0 { l.removeLast() }
            self.limbs = l
        }

        init(littleEndian bytes: [UInt8]) {
            var l = [UInt32](repeating: 0, count: (bytes.count + 3) / 4)
            for (i, b) in bytes.enumerated() { l[i / 4] |= UInt32(b) << (8 * UInt32(i % 4)) }
            self.init(limbs: l)
        }

        static func + (a: Number, b: Number) -> Number {
            var out: [UInt32] = []
            var carry: UInt64 = 0
            for i in 0..<max(a.limbs.count, b.limbs.count) {
                let s = UInt64(i < a.limbs.count ? a.limbs[i] : 0) + UInt64(i < b.limbs.count ? b.limbs[i] : 0) + carry
                out.append(UInt32(truncatingIfNeeded: s))
                carry = s >> 32
            }
            out.append(UInt32(carry))
            return Number(limbs: out)
        }

        static func * (a: Number, b: Number) -> Number {
            var out = [UInt64](repeating: 0, count: a.limbs.count + b.limbs.count + 1)
            for (i, x) in a.limbs.enumerated() {
                var carry: UInt64 = 0
                for (j, y) in b.limbs.enumerated() {
                    let t = out[i + j] + UInt64(x) * UInt64(y) + carry
                    out[i + j] = t & 0xffff_ffff
                    carry = t >> 32
                }
                var k = i + b.limbs.count
                while carry > 0 {
                    let t = out[k] + carry
                    out[k] = t & 0xffff_ffff
                    carry = t >> 32
                    k += 1
                }
            }
            return Number(limbs: out.map { UInt32($0) })
        }

        static func < (a: Number, b: Number) -> Bool {
            if a.limbs.count != b.limbs.count { return a.limbs.count < b.limbs.count }
            for i in a.limbs.indices.reversed() where a.limbs[i] != b.limbs[i] { return a.limbs[i] < b.limbs[i] }
            return false
        }

        /// a - b, for b ≤ a.
        static func - (a: Number, b: Number) -> Number {
            var out: [UInt32] = []
            var borrow: Int64 = 0
            for i in a.limbs.indices {
                var d = Int64(a.limbs[i]) - Int64(i < b.limbs.count ? b.limbs[i] : 0) - borrow
                borrow = d < 0 ? 1 : 0
                if d < 0 { d += 1 << 32 }
                out.append(UInt32(d))
            }
            precondition(borrow == 0)
            return Number(limbs: out)
        }

        /// self mod p, for self < 2^262 (a product of two numbers below 2^131): p·2^k
        /// subtracted wherever it fits, k from high to low (long division, bit by bit).
        func moduloP() -> Number {
            precondition(limbs.count <= 8 || (limbs.count == 9 && limbs[8] < 1 << 6))
            var r = self
            for s in ReferencePoly1305.pShifted.reversed() where !(r < s) { r = r - s }
            return r
        }

        /// The low 16 bytes, little-endian.
        var low16Bytes: [UInt8] {
            (0..<16).map { i in i / 4 < limbs.count ? UInt8(truncatingIfNeeded: limbs[i / 4] >> (8 * UInt32(i % 4))) : 0 }
        }
    }

    /// 2^130 - 5.
    static let p = Number(littleEndian: [0xfb] + [UInt8](repeating: 0xff, count: 15) + [0x03])
    /// p·2^k for k in 0...132: enough to reduce anything below 2^262.
    static let pShifted: [Number] = (0..<132).reduce(into: [p]) { list, _ in list.append(list.last! + list.last!) }

    static func mac(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        precondition(key.count == 32)
        var rBytes = Array(key[0..<16])
        for i in [3, 7, 11, 15] { rBytes[i] &= 15 }
        for i in [4, 8, 12] { rBytes[i] &= 252 }
        let r = Number(littleEndian: rBytes)
        let s = Number(littleEndian: Array(key[16..<32]))
        var a = Number(limbs: [])
        var i = 0
        while i < message.count {
            let chunk = Array(message[i..<min(i + 16, message.count)])
            let n = Number(littleEndian: chunk + [1])
            a = ((a + n) * r).moduloP()
            i += 16
        }
        return (a + s).low16Bytes
    }
}
