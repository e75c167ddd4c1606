import Foundation
import LedgerChecksums
import LedgerCore
import LedgerLog

/// The ledger as a transparency log (RFC 9162's Merkle tree over its records): its
/// origin line, checkpoints of any size, inclusion and consistency proofs. What
/// `checkpoint`, `prove` and `verify --checkpoint` ask of the log.
package struct TransparencyLog {
    package let tree: MerkleTreeFile
    /// `healthledger/<ledger id>`: the first line of every checkpoint of this ledger.
    package let origin: String

    /// The tree, brought up to the log's end; its file is written when it can be (a
    /// read-only folder still gets proofs, computed in memory). A tree file rebuilt
    /// (damaged or stale) is told to `note`.
    package init(_ fs: any LogFileSystem, reader: LogReader, note: (String) -> Void) throws {
        let opened: (tree: MerkleTreeFile, found: MerkleTreeFile.Found)
        do { opened = try MerkleTreeFile.open(fs, reader: reader) } catch let e as LogError where e.isIO {
            opened = try MerkleTreeFile.open(fs, reader: reader, save: false)
        }
        if case .rebuilt(let why) = opened.found { note("warning: \(MerkleTreeFile.fileName) rebuilt (\(why))") }
        tree = opened.tree
        origin = TreeCheckpoint.origin(of: reader)
    }

    /// Events in the tree (the log's records).
    package var size: UInt64 { tree.size }

    /// The checkpoint note of the first `size` records, signed when there is a signer.
    package func note(size: UInt64, signer: SignedNote.Signer?) throws -> String {
        let text = TreeCheckpoint(origin: origin, size: size, root: try tree.root(size: size)).text
        return signer.map { $0.sign(text) } ?? text
    }

    /// The proof that event `sequence` is the leaf at index `sequence - 1` of the tree
    /// of `size` events.
    package func inclusion(sequence: UInt64, size: UInt64) throws -> InclusionProof {
        guard sequence >= 1, sequence <= size, size <= tree.size else {
            throw ToolError.sequenceNotFound(sequence, treeSize: tree.size)
        }
        return InclusionProof(sequence: sequence, size: size, leafInput: try tree.leafInput(sequence: sequence),
                              path: try tree.inclusionProof(index: sequence - 1, size: size), root: try tree.root(size: size))
    }

    /// The proof that this ledger extends the one `old` is a checkpoint of: same origin,
    /// at least as many events, the same root over the first `old.size`.
    package func consistency(from old: TreeCheckpoint) throws -> ConsistencyProof {
        guard old.origin == origin else { throw ToolError.wrongLedger(checkpointOrigin: old.origin, ledgerOrigin: origin) }
        guard old.size <= tree.size else { throw ToolError.fewerEventsThanCheckpoint(checkpoint: old.size, ledger: tree.size) }
        let root1 = try tree.root(size: old.size)
        guard root1 == old.root else {
            throw ToolError.rootDiffers(size: old.size, ledgerRoot: Self.base64(root1), checkpointRoot: Self.base64(old.root))
        }
        return ConsistencyProof(size1: old.size, size2: tree.size, root1: root1, root2: tree.root,
                                path: try tree.consistencyProof(size1: old.size, size2: tree.size))
    }

    /// A checkpoint note read from a file: its text and what it says.
    package static func readCheckpoint(_ path: String) throws(ToolError) -> (note: String, checkpoint: TreeCheckpoint) {
        guard let note = try? String(contentsOfFile: path, encoding: .utf8) else { throw .checkpointNotFound(path: path) }
        do { return (note, try TreeCheckpoint.parse(note).checkpoint) } catch {
            throw .malformedCheckpoint(path: path, reason: "\(error)")
        }
    }

    /// A hash as checkpoints and proofs print it.
    package static func base64(_ digest: SHA256Digest) -> String { Data(digest.array).base64EncodedString() }
}

/// Event `sequence` is in the tree of `size` events whose root is `root`.
package struct InclusionProof: Sendable {
    package let sequence: UInt64
    package let size: UInt64
    /// The record's bytes as hashed into its leaf.
    package let leafInput: [UInt8]
    package let path: [SHA256Digest]
    package let root: SHA256Digest
    /// The leaf's index (`sequence - 1`).
    package var index: UInt64 { sequence - 1 }
    /// The leaf's hash (RFC 9162: SHA-256 of 0x00 ‖ the leaf input).
    package var leafHash: SHA256Digest { Merkle.leafHash(leafInput) }
}

/// The tree of `size2` events extends the tree of `size1`.
package struct ConsistencyProof: Sendable {
    package let size1: UInt64
    package let size2: UInt64
    package let root1: SHA256Digest
    package let root2: SHA256Digest
    package let path: [SHA256Digest]
}

extension LogError {
    /// An I/O error (a read-only folder, a full disk), not damage.
    fileprivate var isIO: Bool {
        if case .io = self { return true }
        return false
    }
}
