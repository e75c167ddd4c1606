import CLedgerAccel

/// SHA-256 (FIPS 180-4), streaming. Checked against the FIPS 180-4 examples ("",
/// "abc", the 448-bit two-block message, one million 'a').
///
/// The compression function runs on the x86 SHA extensions when the CPU has them
/// (C target `CLedgerAccel`), else in Swift; both give identical digests (tested).
public struct SHA256: Sendable {
    /// A 32-byte digest.
    public typealias Digest = SHA256Digest

    /// Whether the hardware compression function is in use on this machine.
    public static let usesHardware = hl_cpu_has_sha256() == 1

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19)
    private var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
    private var buffered = 0
    private var totalBytes: UInt64 = 0
    private let hardware: Bool

    /// A fresh hash; `forceSoftware` selects the Swift compression function.
    public init(forceSoftware: Bool = false) {
        hardware = SHA256.usesHardware && !forceSoftware
    }

    /// The digest of `bytes` in one call.
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> Digest {
        var h = SHA256()
        h.update(bytes)
        return h.finalize()
    }

    /// The digest of a byte array.
    public static func hash(_ bytes: [UInt8]) -> Digest {
        bytes.withUnsafeBytes { hash($0) }
    }

    /// Adds bytes to the message.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var input = bytes.baseAddress, bytes.count > 0 else { return }
        var remaining = bytes.count
        totalBytes &+= UInt64(remaining)
        if buffered > 0 {
            let take = min(64 - buffered, remaining)
            withUnsafeMutableBytes(of: &buffer) { b in
                (b.baseAddress! + buffered).copyMemory(from: input, byteCount: take)
            }
            buffered += take
            input += take
            remaining -= take
            if buffered == 64 {
                let block = buffer
                withUnsafeBytes(of: block) { compress($0.baseAddress!.assumingMemoryBound(to: UInt8.self), blocks: 1) }
                buffered = 0
            }
        }
        let blocks = remaining / 64
        if blocks > 0 {
            compress(input.assumingMemoryBound(to: UInt8.self), blocks: blocks)
            input += blocks * 64
            remaining -= blocks * 64
        }
        if remaining > 0 {
            withUnsafeMutableBytes(of: &buffer) { b in b.baseAddress!.copyMemory(from: input, byteCount: remaining) }
            buffered = remaining
        }
    }

    /// Adds a byte array to the message.
    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Adds a digest (32 bytes) to the message.
    public mutating func update(_ digest: Digest) {
        withUnsafeBytes(of: digest.bytes) { update($0) }
    }

    /// Pads, finishes and returns the digest.
    public mutating func finalize() -> Digest {
        let bitLength = totalBytes &* 8
        // The padding on the stack (no allocation: a digest is taken per imported record).
        var padding = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
                       UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        let count = buffered < 56 ? 64 - buffered : 128 - buffered
        let savedTotal = totalBytes
        withUnsafeMutableBytes(of: &padding) { p in
            p[0] = 0x80
            for i in 0..<8 { p[count - 1 - i] = UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(i))) }
            update(UnsafeRawBufferPointer(rebasing: p[0..<count]))
        }
        totalBytes = savedTotal
        precondition(buffered == 0, "SHA-256 padding must end on a block boundary")
        var out = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &out) { o in
            withUnsafeBytes(of: state) { s in
                for i in 0..<8 {
                    let word = s.load(fromByteOffset: 4 * i, as: UInt32.self).bigEndian
                    o.storeBytes(of: word, toByteOffset: 4 * i, as: UInt32.self)
                }
            }
        }
        return Digest(bytes: out)
    }

    private mutating func compress(_ data: UnsafePointer<UInt8>, blocks: Int) {
        let useHardware = hardware
        withUnsafeMutableBytes(of: &state) { s in
            let words = s.baseAddress!.assumingMemoryBound(to: UInt32.self)
            if useHardware {
                hl_sha256_blocks_hw(words, data, blocks)
            } else {
                SHA256.compressSoftware(words, data, blocks)
            }
        }
    }

    /// The portable compression function.
    static func compressSoftware(_ h: UnsafeMutablePointer<UInt32>, _ data: UnsafePointer<UInt8>, _ blocks: Int) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            k.withUnsafeBufferPointer { k in
                for block in 0..<blocks {
                    let p = UnsafeRawPointer(data + 64 * block)
                    for t in 0..<16 { w[t] = p.loadUnaligned(fromByteOffset: 4 * t, as: UInt32.self).bigEndian }
                    for t in 16..<64 {
                        let s0 = w[t - 15].rotateRight(7) ^ w[t - 15].rotateRight(18) ^ (w[t - 15] >> 3)
                        let s1 = w[t - 2].rotateRight(17) ^ w[t - 2].rotateRight(19) ^ (w[t - 2] >> 10)
                        w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
                    }
                    var a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7]
                    for t in 0..<64 {
                        let S1 = e.rotateRight(6) ^ e.rotateRight(11) ^ e.rotateRight(25)
                        let ch = (e & f) ^ (~e & g)
                        let t1 = hh &+ S1 &+ ch &+ k[t] &+ w[t]
                        let S0 = a.rotateRight(2) ^ a.rotateRight(13) ^ a.rotateRight(22)
                        let maj = (a & b) ^ (a & c) ^ (b & c)
                        let t2 = S0 &+ maj
                        hh = g; g = f; f = e; e = d &+ t1
                        d = c; c = b; b = a; a = t1 &+ t2
                    }
                    h[0] &+= a; h[1] &+= b; h[2] &+= c; h[3] &+= d
                    h[4] &+= e; h[5] &+= f; h[6] &+= g; h[7] &+= hh
                }
            }
        }
    }

    static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]
}

extension UInt32 {
    @inline(__always) func rotateRight(_ n: UInt32) -> UInt32 { (self >> n) | (self << (32 - n)) }
}

/// A SHA-256 digest: 32 bytes, compared and hashed by value.
public struct SHA256Digest: Hashable, Sendable, CustomStringConvertible {
    /// The digest bytes, in order, as four words of memory.
    public let bytes: (UInt64, UInt64, UInt64, UInt64)

    package init(bytes: (UInt64, UInt64, UInt64, UInt64)) { self.bytes = bytes }

    /// A digest from 32 bytes.
    public init(_ raw: UnsafeRawBufferPointer) {
        precondition(raw.count == 32, "a SHA-256 digest is 32 bytes")
        var b = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &b) { $0.copyMemory(from: raw) }
        bytes = b
    }

    /// A digest from 32 bytes in an array.
    public init(_ array: [UInt8]) {
        self = array.withUnsafeBytes { SHA256Digest($0) }
    }

    /// All zero (used for "no digest").
    public static let zero = SHA256Digest(bytes: (0, 0, 0, 0))

    /// The bytes as an array.
    public var array: [UInt8] { withUnsafeBytes(of: bytes) { Array($0) } }

    /// Lower-case hex, 64 characters.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        withUnsafeBytes(of: bytes) { raw in
            for byte in raw {
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0xF)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses 64 hex digits.
    public init?(hex: String) {
        let chars = Array(hex.utf8)
        guard chars.count == 64 else { return nil }
        var raw = [UInt8](repeating: 0, count: 32)
        for i in 0..<32 {
            guard let hi = Self.nibble(chars[2 * i]), let lo = Self.nibble(chars[2 * i + 1]) else { return nil }
            raw[i] = hi << 4 | lo
        }
        self.init(raw)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: nil
        }
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.bytes.0 == b.bytes.0 && a.bytes.1 == b.bytes.1 && a.bytes.2 == b.bytes.2 && a.bytes.3 == b.bytes.3
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.0)
        hasher.combine(bytes.1)
        hasher.combine(bytes.2)
        hasher.combine(bytes.3)
    }

    /// The hex form.
    public var description: String { hex }
}
