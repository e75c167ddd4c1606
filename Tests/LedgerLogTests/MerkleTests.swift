import Foundation
import Testing
import LedgerChecksums
@testable import LedgerLog

/// RFC 9162 / transparency-dev test data: the eight reference leaves and their roots.
struct MerkleVectorTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var it = hex.makeIterator()
        while let a = it.next(), let b = it.next() { out.append(UInt8(String([a, b]), radix: 16)!) }
        return out
    }
    static let leaves = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                         "606162636465666768696a6b6c6d6e6f"].map { Merkle.leafHash(bytes($0)) }
    static let roots = [
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    ]

    /// The RFC's recursive MTH over a list of leaf hashes: the reference definition.
    static func mth(_ l: ArraySlice<SHA256Digest>) -> SHA256Digest {
        if l.isEmpty { return Merkle.emptyRoot }
        if l.count == 1 { return l.first! }
        let k = Int(Merkle.split(UInt64(l.count)))
        return Merkle.nodeHash(mth(l.prefix(k)), mth(l.dropFirst(k)))
    }
    static func source(_ leaves: [SHA256Digest]) -> Merkle.NodeSource {
        { level, index in
            let lo = Int(index) << level
            return mth(leaves[lo..<lo + (1 << level)])
        }
    }

    @Test func rootsForSizes0Through8() throws {
        for n in 0...8 {
            var range = CompactRange()
            for leaf in Self.leaves.prefix(n) { range.append(leaf) }
            #expect(range.root().hex == Self.roots[n], "size \(n)")
            #expect(Self.mth(Self.leaves.prefix(n)).hex == Self.roots[n])
            #expect(try Merkle.subtreeHash(0, UInt64(n), Self.source(Self.leaves)).hex == Self.roots[n])
        }
    }

    /// The published audit paths (certificate-transparency's reference tests).
    @Test func publishedInclusionProofs() throws {
        let s = Self.source(Self.leaves)
        #expect(try Merkle.inclusionProof(index: 0, size: 1, s) == [])
        #expect(try Merkle.inclusionProof(index: 0, size: 8, s).map(\.hex) == [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"])
        #expect(try Merkle.inclusionProof(index: 5, size: 8, s).map(\.hex) == [
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"])
    }

    /// RFC 9162 §2.1.5's worked example over the first seven leaves (a…j named as there).
    @Test func rfcSevenLeafExample() throws {
        let l = Self.leaves, s = Self.source(l)
        let (a, b, c, d, e, f, j) = (l[0], l[1], l[2], l[3], l[4], l[5], l[6])
        let g = Merkle.nodeHash(a, b), h = Merkle.nodeHash(c, d), i = Merkle.nodeHash(e, f)
        let k = Merkle.nodeHash(g, h), ll = Merkle.nodeHash(i, j)
        #expect(try Merkle.inclusionProof(index: 0, size: 7, s) == [b, h, ll])
        #expect(try Merkle.inclusionProof(index: 3, size: 7, s) == [c, g, ll])
        #expect(try Merkle.inclusionProof(index: 4, size: 7, s) == [f, j, k])
        #expect(try Merkle.inclusionProof(index: 6, size: 7, s) == [i, k])
        #expect(try Merkle.consistencyProof(size1: 3, size2: 7, s) == [c, d, g, ll])
        #expect(try Merkle.consistencyProof(size1: 4, size2: 7, s) == [ll])
        #expect(try Merkle.consistencyProof(size1: 6, size2: 7, s) == [i, j, k])
    }

    @Test func everyProofOverTheVectorsVerifies() throws {
        let s = Self.source(Self.leaves)
        for n in 1...8 {
            let root = Self.mth(Self.leaves.prefix(n))
            for i in 0..<n {
                let proof = try Merkle.inclusionProof(index: UInt64(i), size: UInt64(n), s)
                try Merkle.verifyInclusion(index: UInt64(i), size: UInt64(n), leaf: Self.leaves[i], proof: proof, root: root)
            }
            for m in 0...n {
                let proof = try Merkle.consistencyProof(size1: UInt64(m), size2: UInt64(n), s)
                try Merkle.verifyConsistency(size1: UInt64(m), size2: UInt64(n), proof: proof,
                                             root1: Self.mth(Self.leaves.prefix(m)), root2: root)
            }
        }
    }

    static func flip(_ d: SHA256Digest, bit: Int) -> SHA256Digest {
        var a = d.array
        a[bit / 8] ^= 1 << UInt8(bit % 8)
        return SHA256Digest(a)
    }

    @Test func inclusionNegativesAreRejected() throws {
        let s = Self.source(Self.leaves)
        for n in 1...8 {
            let size = UInt64(n), root = Self.mth(Self.leaves.prefix(n))
            for i in 0..<n {
                let index = UInt64(i), leaf = Self.leaves[i]
                let proof = try Merkle.inclusionProof(index: index, size: size, s)
                func rejects(index: UInt64 = index, size: UInt64 = size, leaf: SHA256Digest = leaf,
                             proof: [SHA256Digest] = proof, root: SHA256Digest = root) -> Bool {
                    (try? Merkle.verifyInclusion(index: index, size: size, leaf: leaf, proof: proof, root: root)) == nil
                }
                #expect(rejects(index: index + 1), "wrong index")
                if index > 0 { #expect(rejects(index: index - 1)) }
                #expect(rejects(size: size * 2), "size doubled")
                if size > 1 { #expect(rejects(size: size / 2), "size halved") }
                #expect(rejects(leaf: Self.flip(leaf, bit: 0)))
                #expect(rejects(root: Self.flip(root, bit: 255)))
                for p in proof.indices {
                    var bad = proof; bad[p] = Self.flip(bad[p], bit: 7)
                    #expect(rejects(proof: bad), "flipped bit in element \(p)")
                }
                #expect(rejects(proof: proof + [leaf]), "extra element")
                #expect(rejects(proof: [leaf] + proof), "extra element in front")
                if !proof.isEmpty { #expect(rejects(proof: Array(proof.dropLast())), "missing element") }
            }
        }
        #expect(throws: MerkleError.indexOutOfRange(index: 8, size: 8)) {
            try Merkle.verifyInclusion(index: 8, size: 8, leaf: Self.leaves[0], proof: [], root: Self.leaves[0])
        }
    }

    @Test func consistencyNegativesAreRejected() throws {
        let s = Self.source(Self.leaves)
        for n in 1...8 {
            for m in 1..<n {
                let (s1, s2) = (UInt64(m), UInt64(n))
                let r1 = Self.mth(Self.leaves.prefix(m)), r2 = Self.mth(Self.leaves.prefix(n))
                let proof = try Merkle.consistencyProof(size1: s1, size2: s2, s)
                func rejects(_ a: UInt64 = s1, _ b: UInt64 = s2, proof: [SHA256Digest] = proof,
                             r1: SHA256Digest = r1, r2: SHA256Digest = r2) -> Bool {
                    (try? Merkle.verifyConsistency(size1: a, size2: b, proof: proof, root1: r1, root2: r2)) == nil
                }
                #expect(rejects(s1 * 2 <= 8 ? s1 * 2 : s1 + 1), "size1 doubled")
                #expect(rejects(s1, s2 * 2), "size2 doubled")
                if s1 > 1 { #expect(rejects(s1 / 2)) }
                if s2 / 2 > s1 { #expect(rejects(s1, s2 / 2)) }
                #expect(rejects(s2, s1), "size1 > size2")
                #expect(rejects(r1: Self.flip(r1, bit: 3)))
                #expect(rejects(r2: Self.flip(r2, bit: 3)))
                for p in proof.indices {
                    var bad = proof; bad[p] = Self.flip(bad[p], bit: 100)
                    #expect(rejects(proof: bad), "flipped bit in element \(p) of \(m)→\(n)")
                }
                #expect(rejects(proof: proof + [r1]))
                #expect(rejects(proof: Array(proof.dropLast())))
                #expect(rejects(proof: []))
            }
        }
        #expect(throws: MerkleError.sizesOutOfOrder(size1: 5, size2: 4)) {
            try Merkle.verifyConsistency(size1: 5, size2: 4, proof: [], root1: .zero, root2: .zero)
        }
        #expect(throws: MerkleError.sizesOutOfOrder(size1: 5, size2: 4)) {
            try Merkle.consistencyProof(size1: 5, size2: 4, s)
        }
    }

    /// Larger trees: every shape of the recursion, proofs against the reference MTH.
    @Test func proofsOverEveryShapeUpTo70Leaves() throws {
        let leaves = (0..<70).map { Merkle.leafHash([UInt8($0), UInt8(truncatingIfNeeded: $0 &* 7)]) }
        let s = Self.source(leaves)
        for n in 1...70 {
            let root = Self.mth(leaves.prefix(n))
            for i in stride(from: 0, to: n, by: 3) {
                try Merkle.verifyInclusion(index: UInt64(i), size: UInt64(n), leaf: leaves[i],
                                           proof: try Merkle.inclusionProof(index: UInt64(i), size: UInt64(n), s), root: root)
            }
            for m in stride(from: 1, through: n, by: 2) {
                try Merkle.verifyConsistency(size1: UInt64(m), size2: UInt64(n),
                                             proof: try Merkle.consistencyProof(size1: UInt64(m), size2: UInt64(n), s),
                                             root1: Self.mth(leaves.prefix(m)), root2: root)
            }
        }
    }

    // M3: the stored subtrees in post-order, at the positions the formula gives.
    @Test func postOrderPositionsAreDense() {
        var range = CompactRange()
        var seen: [Int] = []
        for i in 0..<100 {
            range.append(Self.leaves[i % 8]) { level, index, _ in
                seen.append(MerkleTreeFile.postOrder(relativeLevel: level, index: index))
            }
        }
        #expect(seen == Array(0..<seen.count))
        #expect(MerkleTreeFile.nodeCount(size: 100, level: 0) == seen.count)
    }
}

/// The derived tree file over a real log.
struct MerkleTreeFileTests {
    /// A log of `batches` batches of 1…9 records of random lengths.
    static func makeLog(_ fs: SimulatedFileSystem, batches: Int, seed: UInt64) async throws {
        let writer = fs.exists(LogWriter.logFileName) ? try LogWriter.open(fs) : try LogWriter.create(fs)
        var rng = SeededRandom(seed: seed)
        for b in 0..<batches {
            let count = Int.random(in: 1...9, using: &rng)
            let records = (0..<count).map { i in
                LogRecord(kind: 1, kindVersion: 1, payload: payload(seed: seed &* 1000 &+ UInt64(b * 10 + i), length: Int.random(in: 0...200, using: &rng)))
            }
            _ = try await writer.append(records, durability: .deferred)
        }
        try await writer.close()
    }

    /// Leaf hashes straight from the log, by the definition in FORMAT.md.
    static func leafHashes(_ fs: any LogFileSystem) throws -> [SHA256Digest] {
        var out: [SHA256Digest] = []
        try LogReader(fs).forEachRecord { r in
            var framed = [UInt8](repeating: 0, count: 0)
            // header fields re-encoded independently of the tree code
            let stored = try r.stored()
            var head = [UInt8]()
            func put<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { head.append(contentsOf: $0) } }
            put(UInt32(stored.payload.count)); put(stored.sequence); put(stored.recordedAt); put(stored.kind); put(stored.kindVersion); put(UInt32(0))
            let crc = CRC32C.checksum(head + stored.payload)
            withUnsafeBytes(of: crc.littleEndian) { framed.append(contentsOf: $0) }
            framed += head + stored.payload
            out.append(Merkle.leafHash(framed))
            return true
        }
        return out
    }

    // M1/M2: leaves are the framed records, hashed as RFC 9162 says.
    @Test func treeMatchesTheDefinitionAndProofsVerify() async throws {
        let fs = SimulatedFileSystem()
        try await Self.makeLog(fs, batches: 40, seed: 3)
        let leaves = try Self.leafHashes(fs)
        let (tree, found) = try MerkleTreeFile.open(fs, reader: try LogReader(fs), level: 2)
        #expect(found == .missing)
        #expect(tree.size == UInt64(leaves.count))
        #expect(tree.root == MerkleVectorTests.mth(leaves[...]))
        let n = tree.size
        for s in [1, n / 3, n - 1, n] where s >= 1 {
            #expect(try tree.root(size: s) == MerkleVectorTests.mth(leaves.prefix(Int(s))))
            for i in stride(from: 0, to: s, by: 5) {
                try Merkle.verifyInclusion(index: i, size: s, leaf: leaves[Int(i)], proof: try tree.inclusionProof(index: i, size: s),
                                           root: try tree.root(size: s))
            }
            try Merkle.verifyConsistency(size1: s, size2: n, proof: try tree.consistencyProof(size1: s, size2: n),
                                         root1: try tree.root(size: s), root2: tree.root)
        }
        #expect(try tree.leafInput(sequence: 7).count >= 32)
        #expect(Merkle.leafHash(try tree.leafInput(sequence: 7)) == leaves[6])
    }

    @Test func extendsFromItsStoredSize() async throws {
        let fs = SimulatedFileSystem()
        try await Self.makeLog(fs, batches: 10, seed: 4)
        let first = try MerkleTreeFile.open(fs, reader: try LogReader(fs), level: 2)
        let again = try MerkleTreeFile.open(fs, reader: try LogReader(fs), level: 2)
        #expect(again.found == .current(added: 0))
        #expect(again.tree.root == first.tree.root)
        try await Self.makeLog(fs, batches: 13, seed: 5)
        let extended = try MerkleTreeFile.open(fs, reader: try LogReader(fs), level: 2)
        let fresh = try MerkleTreeFile.build(reader: try LogReader(fs), level: 2)
        #expect(extended.found == .current(added: fresh.size - first.tree.size))
        #expect(extended.tree.root == fresh.root)
        #expect(extended.tree.nodes == fresh.nodes)
        #expect(MerkleTreeFile.check(fs, reader: try LogReader(fs), against: fresh) == nil)
    }

    @Test func deletedFileIsRebuiltAndDamageIsNamed() async throws {
        let fs = SimulatedFileSystem()
        try await Self.makeLog(fs, batches: 30, seed: 6)
        let built = try MerkleTreeFile.open(fs, reader: try LogReader(fs), level: 2).tree
        let good = fs.currentBytes(MerkleTreeFile.fileName)
        try fs.remove(MerkleTreeFile.fileName)
        let rebuilt = try MerkleTreeFile.open(fs, reader: try LogReader(fs), level: 2)
        #expect(rebuilt.found == .missing)
        #expect(fs.currentBytes(MerkleTreeFile.fileName) == good)
        let fresh = try MerkleTreeFile.build(reader: try LogReader(fs), level: 2)

        // A flipped bit in a stored node: named by check, rebuilt by open.
        var bad = good
        bad[MerkleTreeFile.headerSpace + 40] ^= 1
        fs.setBytes(MerkleTreeFile.fileName, bad)
        #expect(MerkleTreeFile.check(fs, reader: try LogReader(fs), against: fresh)
                == "index/merkle.bin is damaged: node checksum mismatch [M4]")
        let reopened = try MerkleTreeFile.open(fs, reader: try LogReader(fs), level: 2)
        #expect(reopened.found == .rebuilt("node checksum mismatch"))
        #expect(reopened.tree.root == built.root)
        #expect(fs.currentBytes(MerkleTreeFile.fileName) == good)

        // Truncated, or garbage: rebuilt, never a trap.
        fs.setBytes(MerkleTreeFile.fileName, Array(good.prefix(100)))
        #expect(try MerkleTreeFile.open(fs, reader: try LogReader(fs), level: 2).found == .rebuilt("too short for its header"))
        var rng = SeededRandom(seed: 9)
        for _ in 0..<200 {
            var junk = good
            for _ in 0..<3 { junk[Int.random(in: 0..<junk.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            fs.setBytes(MerkleTreeFile.fileName, junk)
            #expect(try MerkleTreeFile.open(fs, reader: try LogReader(fs), level: 2).tree.root == built.root)
        }
    }
}

struct MerkleHasherTests {
    /// The fast path hashes exactly as the streaming hasher, for every length around the
    /// block boundaries.
    @Test func fastPathEqualsTheStreamingHasher() {
        var hasher = MerkleHasher()
        for n in 0..<300 {
            let input = payload(seed: UInt64(n), length: n)
            let bytes = Array(input.prefix(n))
            #expect(bytes.withUnsafeBytes { hasher.leaf($0) } == Merkle.leafHash(bytes), "length \(n)")
        }
        let big = payload(seed: 99, length: 10_000)
        #expect(big.withUnsafeBytes { hasher.leaf($0) } == Merkle.leafHash(big))
        let a = Merkle.leafHash([1]), b = Merkle.leafHash([2])
        #expect(hasher.node(a, b) == Merkle.nodeHash(a, b))
    }
}
