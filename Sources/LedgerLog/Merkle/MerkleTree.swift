import LedgerChecksums

/// RFC 9162 (§2.1) Merkle tree hashing over SHA-256: leaves, interior nodes, the
/// compact range that extends a tree one leaf at a time, and the generation and
/// verification of inclusion and consistency proofs. Pure code: it knows nothing of
/// files or of what the leaves mean.
public enum Merkle {
    /// The root of the empty tree: SHA-256 of no bytes.
    public static let emptyRoot = SHA256.hash([UInt8]())

    /// SHA-256(0x00 ‖ input): the hash of a leaf.
    public static func leafHash(_ input: UnsafeRawBufferPointer) -> SHA256Digest {
        var h = SHA256()
        withUnsafeBytes(of: UInt8(0)) { h.update($0) }
        h.update(input)
        return h.finalize()
    }

    /// SHA-256(0x00 ‖ input): the hash of a leaf.
    public static func leafHash(_ input: [UInt8]) -> SHA256Digest {
        input.withUnsafeBytes { leafHash($0) }
    }

    /// SHA-256(0x01 ‖ left ‖ right): the hash of an interior node.
    public static func nodeHash(_ left: SHA256Digest, _ right: SHA256Digest) -> SHA256Digest {
        var h = SHA256()
        withUnsafeBytes(of: UInt8(1)) { h.update($0) }
        h.update(left)
        h.update(right)
        return h.finalize()
    }

    /// The largest power of two strictly smaller than `n` (n ≥ 2): where RFC 9162 splits.
    @inlinable
    public static func split(_ n: UInt64) -> UInt64 {
        precondition(n >= 2)
        return UInt64(1) << UInt64(63 - (n - 1).leadingZeroBitCount)
    }

    // MARK: Proof generation

    /// The hash of a complete subtree: level `level` (2^level leaves), index `index`
    /// (covering leaves index·2^level ..< (index+1)·2^level).
    public typealias NodeSource = (_ level: Int, _ index: UInt64) throws -> SHA256Digest

    /// MTH of leaves lo..<hi, built from complete-subtree hashes (O(log n) calls).
    public static func subtreeHash(_ lo: UInt64, _ hi: UInt64, _ node: NodeSource) rethrows -> SHA256Digest {
        let n = hi - lo
        if n == 0 { return emptyRoot }
        if n & (n - 1) == 0 && lo % n == 0 { return try node(n.trailingZeroBitCount, lo >> UInt64(n.trailingZeroBitCount)) }
        let k = split(n)
        return nodeHash(try subtreeHash(lo, lo + k, node), try subtreeHash(lo + k, hi, node))
    }

    /// The inclusion proof (audit path, RFC 9162 §2.1.3.1) of leaf `index` in the tree
    /// of the first `size` leaves, nearest the leaf first.
    public static func inclusionProof(index: UInt64, size: UInt64, _ node: NodeSource) throws -> [SHA256Digest] {
        guard index < size else { throw MerkleError.indexOutOfRange(index: index, size: size) }
        var out: [SHA256Digest] = []
        var lo: UInt64 = 0, hi = size, m = index
        var stack: [SHA256Digest] = []
        while hi - lo > 1 {
            let k = split(hi - lo)
            if m < k {
                stack.append(try subtreeHash(lo + k, hi, node)); hi = lo + k
            } else {
                stack.append(try subtreeHash(lo, lo + k, node)); lo += k; m -= k
            }
        }
        out = stack.reversed()
        return out
    }

    /// The consistency proof (RFC 9162 §2.1.4.1) between the trees of `size1` and
    /// `size2` leaves; empty when size1 is 0 or equals size2.
    public static func consistencyProof(size1: UInt64, size2: UInt64, _ node: NodeSource) throws -> [SHA256Digest] {
        guard size1 <= size2 else { throw MerkleError.sizesOutOfOrder(size1: size1, size2: size2) }
        if size1 == 0 || size1 == size2 { return [] }
        var stack: [SHA256Digest] = []
        var lo: UInt64 = 0, hi = size2, m = size1, whole = true
        while true {
            let n = hi - lo
            if m == n {
                if !whole { stack.append(try subtreeHash(lo, hi, node)) }
                break
            }
            let k = split(n)
            if m <= k {
                stack.append(try subtreeHash(lo + k, hi, node)); hi = lo + k
            } else {
                stack.append(try subtreeHash(lo, lo + k, node)); lo += k; m -= k; whole = false
            }
        }
        return stack.reversed()
    }

    // MARK: Verification (the algorithm of transparency-dev/merkle's proof package)

    /// The root that an inclusion proof implies for `leaf` at `index` in a tree of `size`.
    public static func rootFromInclusionProof(index: UInt64, size: UInt64, leaf: SHA256Digest,
                                              proof: [SHA256Digest]) throws -> SHA256Digest {
        guard index < size else { throw MerkleError.indexOutOfRange(index: index, size: size) }
        let inner = 64 - (index ^ (size - 1)).leadingZeroBitCount
        let border = (index >> UInt64(inner)).nonzeroBitCount
        guard proof.count == inner + border else {
            throw MerkleError.wrongProofLength(got: proof.count, want: inner + border)
        }
        var h = leaf
        for (i, p) in proof[..<inner].enumerated() {
            h = (index >> UInt64(i)) & 1 == 0 ? nodeHash(h, p) : nodeHash(p, h)
        }
        for p in proof[inner...] { h = nodeHash(p, h) }
        return h
    }

    /// Throws unless `proof` shows `leaf` at `index` in the tree of `size` with `root`.
    public static func verifyInclusion(index: UInt64, size: UInt64, leaf: SHA256Digest,
                                       proof: [SHA256Digest], root: SHA256Digest) throws {
        let got = try rootFromInclusionProof(index: index, size: size, leaf: leaf, proof: proof)
        guard got == root else { throw MerkleError.rootMismatch(computed: got, expected: root) }
    }

    /// Throws unless `proof` shows the tree (`size1`, `root1`) is a prefix of (`size2`, `root2`).
    public static func verifyConsistency(size1: UInt64, size2: UInt64, proof: [SHA256Digest],
                                         root1: SHA256Digest, root2: SHA256Digest) throws {
        guard size1 <= size2 else { throw MerkleError.sizesOutOfOrder(size1: size1, size2: size2) }
        if size1 == size2 {
            guard proof.isEmpty else { throw MerkleError.wrongProofLength(got: proof.count, want: 0) }
            guard root1 == root2 else { throw MerkleError.rootMismatch(computed: root1, expected: root2) }
            return
        }
        if size1 == 0 {
            guard proof.isEmpty else { throw MerkleError.wrongProofLength(got: proof.count, want: 0) }
            return
        }
        guard !proof.isEmpty else { throw MerkleError.wrongProofLength(got: 0, want: 1) }
        let index = size1 - 1
        var inner = 64 - (index ^ (size2 - 1)).leadingZeroBitCount
        let border = (index >> UInt64(inner)).nonzeroBitCount
        let shift = size1.trailingZeroBitCount
        inner -= shift
        var seed = proof[0], start = 1
        if size1 == UInt64(1) << UInt64(shift) { seed = root1; start = 0 }
        guard proof.count == start + inner + border else {
            throw MerkleError.wrongProofLength(got: proof.count, want: start + inner + border)
        }
        let rest = Array(proof[start...])
        let mask = index >> UInt64(shift)
        var h1 = seed, h2 = seed
        for i in 0..<inner {
            if (mask >> UInt64(i)) & 1 == 1 {
                h1 = nodeHash(rest[i], h1); h2 = nodeHash(rest[i], h2)
            } else {
                h2 = nodeHash(h2, rest[i])
            }
        }
        for p in rest[inner...] { h1 = nodeHash(p, h1); h2 = nodeHash(p, h2) }
        guard h1 == root1 else { throw MerkleError.rootMismatch(computed: h1, expected: root1) }
        guard h2 == root2 else { throw MerkleError.rootMismatch(computed: h2, expected: root2) }
    }
}

/// Why a Merkle proof was refused or could not be made.
public enum MerkleError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A leaf index at or beyond the tree size.
    case indexOutOfRange(index: UInt64, size: UInt64)
    /// A consistency proof asked from a larger tree to a smaller one.
    case sizesOutOfOrder(size1: UInt64, size2: UInt64)
    /// A proof with the wrong number of hashes for its index and sizes.
    case wrongProofLength(got: Int, want: Int)
    /// The proof leads to a different root than the one claimed.
    case rootMismatch(computed: SHA256Digest, expected: SHA256Digest)

    public var description: String {
        switch self {
        case .indexOutOfRange(let i, let s): "leaf index \(i) is not in a tree of size \(s)"
        case .sizesOutOfOrder(let a, let b): "tree size \(a) is larger than \(b)"
        case .wrongProofLength(let g, let w): "the proof has \(g) hashes, \(w) expected"
        case .rootMismatch(let c, let e): "the proof leads to root \(c.hex), not \(e.hex)"
        }
    }
}

/// The compact range [0, size): the roots of the perfect subtrees that make up a tree
/// of `size` leaves, largest (leftmost) first — one per set bit of `size`. Appending a
/// leaf merges equal-sized neighbours: O(log n) hashes, amortised O(1).
public struct CompactRange: Sendable, Equatable {
    /// Leaves covered.
    public private(set) var size: UInt64 = 0
    /// The perfect-subtree roots, left to right.
    public private(set) var hashes: [SHA256Digest] = []

    /// The empty range.
    public init() {}

    /// A range from stored parts; nil unless `hashes` has one hash per set bit of `size`.
    public init?(size: UInt64, hashes: [SHA256Digest]) {
        guard hashes.count == size.nonzeroBitCount else { return nil }
        self.size = size
        self.hashes = hashes
    }

    /// Appends one leaf hash; `completed` sees every perfect subtree the leaf
    /// completes (level, index, hash), the leaf itself (level 0) first.
    public mutating func append(_ leaf: SHA256Digest,
                                completed: (_ level: Int, _ index: UInt64, _ hash: SHA256Digest) -> Void = { _, _, _ in }) {
        var h = leaf
        var level = 0
        completed(0, size, h)
        while (size >> UInt64(level)) & 1 == 1 {
            h = Merkle.nodeHash(hashes.removeLast(), h)
            level += 1
            completed(level, ((size + 1) >> UInt64(level)) - 1, h)
        }
        hashes.append(h)
        size += 1
    }

    /// `append`, hashing with `hasher` (the fast path used when building the tree file).
    mutating func append(_ leaf: SHA256Digest, hasher: inout MerkleHasher,
                         completed: (_ level: Int, _ hash: SHA256Digest) -> Void) {
        var h = leaf
        var level = 0
        completed(0, h)
        while (size >> UInt64(level)) & 1 == 1 {
            h = hasher.node(hashes.removeLast(), h)
            level += 1
            completed(level, h)
        }
        hashes.append(h)
        size += 1
    }

    /// The tree's root hash (RFC 9162 MTH); the empty root for size 0.
    public func root() -> SHA256Digest {
        guard var h = hashes.last else { return Merkle.emptyRoot }
        for left in hashes.dropLast().reversed() { h = Merkle.nodeHash(left, h) }
        return h
    }
}
