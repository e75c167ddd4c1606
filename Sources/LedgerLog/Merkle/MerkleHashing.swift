import CLedgerAccel
import LedgerChecksums

/// Leaf and node hashes without the streaming hasher's per-call costs: the message is
/// padded in place and handed to the SHA-NI block function in one call. Used when the
/// tree is built or extended (millions of small leaves); the result is the same
/// SHA-256 as `Merkle.leafHash`/`nodeHash` (the tests compare them).
struct MerkleHasher {
    private var scratch: [UInt8] = [UInt8](repeating: 0, count: 4096)
    private let hardware = SHA256.usesHardware

    private static let initial: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19)

    /// SHA-256(0x00 ‖ input).
    mutating func leaf(_ input: UnsafeRawBufferPointer) -> SHA256Digest {
        guard hardware else { return Merkle.leafHash(input) }
        let total = input.count + 1
        let padded = (total + 9 + 63) & ~63
        if scratch.count < padded { scratch = [UInt8](repeating: 0, count: padded) }
        return scratch.withUnsafeMutableBytes { b in
            b[0] = 0
            if let base = input.baseAddress, input.count > 0 { (b.baseAddress! + 1).copyMemory(from: base, byteCount: input.count) }
            return Self.finish(b, total: total, padded: padded)
        }
    }

    /// SHA-256(0x01 ‖ left ‖ right).
    mutating func node(_ left: SHA256Digest, _ right: SHA256Digest) -> SHA256Digest {
        guard hardware else { return Merkle.nodeHash(left, right) }
        return scratch.withUnsafeMutableBytes { b in
            b[0] = 1
            withUnsafeBytes(of: left.bytes) { (b.baseAddress! + 1).copyMemory(from: $0.baseAddress!, byteCount: 32) }
            withUnsafeBytes(of: right.bytes) { (b.baseAddress! + 33).copyMemory(from: $0.baseAddress!, byteCount: 32) }
            return Self.finish(b, total: 65, padded: 128)
        }
    }

    private static func finish(_ b: UnsafeMutableRawBufferPointer, total: Int, padded: Int) -> SHA256Digest {
        b[total] = 0x80
        (b.baseAddress! + total + 1).initializeMemory(as: UInt8.self, repeating: 0, count: padded - 8 - total - 1)
        b.storeBytes(of: (UInt64(total) &* 8).bigEndian, toByteOffset: padded - 8, as: UInt64.self)
        var state = initial
        withUnsafeMutableBytes(of: &state) { s in
            hl_sha256_blocks_hw(s.baseAddress!.assumingMemoryBound(to: UInt32.self),
                                b.baseAddress!.assumingMemoryBound(to: UInt8.self), padded / 64)
        }
        var out = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &out) { o in
            withUnsafeBytes(of: state) { s in
                for i in 0..<8 { o.storeBytes(of: s.load(fromByteOffset: 4 * i, as: UInt32.self).bigEndian, toByteOffset: 4 * i, as: UInt32.self) }
            }
        }
        return SHA256Digest(bytes: out)
    }
}
