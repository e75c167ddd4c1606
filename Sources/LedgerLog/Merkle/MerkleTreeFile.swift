import Foundation
import LedgerChecksums

/// The derived Merkle tree of a ledger's log (`index/merkle.bin`, events/FORMAT.md
/// Part 3): leaf i is the (i+1)-th record, its leaf input the record's bytes as framed
/// in the log (32-byte header and payload). The file stores the hashes of every
/// complete subtree at levels ≥ `level` (2^level leaves, 256 by default) in post-order,
/// plus the compact range of the whole tree, so a proof costs O(log n) stored hashes
/// and at most a few blocks of 2^level records read from the log.
///
/// The file is derived: one that is missing, damaged, foreign or disagrees with the log
/// is rebuilt from the log, never trusted. It is brought up to date from its stored
/// size (O(log n) hashes per new record) when the ledger closes and whenever a
/// checkpoint or proof is asked for.
public final class MerkleTreeFile {
    /// The file's name inside the ledger folder.
    public static let fileName = "index/merkle.bin"
    /// The level whose complete subtrees (and those above) are stored.
    public static let defaultLevel = 8
    static let magic: [UInt8] = Array("HLMRK001".utf8)
    static let headerSpace = 4096

    /// Leaves covered per stored bottom node is 2^level.
    public let level: Int
    /// The tree's compact range: its size and root.
    public private(set) var range: CompactRange
    /// Where the tree ends in the log (after the batch holding record `size`).
    package private(set) var position: LogReader.Position
    /// Complete-subtree hashes at levels ≥ `level`, in post-order.
    private(set) var nodes: [SHA256Digest]
    private var savedNodes: Int
    private let ledgerId: UUID
    private let reader: LogReader
    private var blocks: [UInt64: [SHA256Digest]] = [:]

    /// Records in the tree.
    public var size: UInt64 { range.size }
    /// The root of the whole tree.
    public var root: SHA256Digest { range.root() }

    /// How the file was found when opened.
    public enum Found: Sendable, Equatable {
        /// Usable; extended by `added` records.
        case current(added: UInt64)
        /// Absent: built from the log.
        case missing
        /// Present but unusable (the reason): rebuilt from the log.
        case rebuilt(String)
    }

    private init(level: Int, reader: LogReader) {
        self.level = level
        self.reader = reader
        ledgerId = reader.header.ledgerId
        range = CompactRange()
        position = reader.start
        nodes = []
        savedNodes = 0
    }

    /// Loads the tree of the ledger in `fs` (rebuilding it when unusable), brings it up to
    /// the log's end and, when `save`, writes what changed. Never trusts a file that does
    /// not parse or does not match the log.
    package static func open(_ fs: any LogFileSystem, reader: LogReader, level: Int = defaultLevel,
                            save: Bool = true) throws -> (tree: MerkleTreeFile, found: Found) {
        precondition((0...24).contains(level))
        let tree = MerkleTreeFile(level: level, reader: reader)
        var found: Found = .missing
        if fs.exists(fileName) {
            switch tree.load(fs) {
            case nil: found = .current(added: 0)
            case let why?:
                found = .rebuilt(why)
                tree.range = CompactRange(); tree.nodes = []; tree.position = reader.start
            }
        }
        let before = tree.size
        try tree.catchUp()
        if case .current = found { found = .current(added: tree.size - before) }
        if save {
            if case .current(let added) = found {
                if added > 0 { try tree.extendFile(fs) }
            } else {
                try tree.writeWhole(fs)
            }
        }
        return (tree, found)
    }

    /// Builds the tree from the log alone (nothing read from or written to `index/`).
    package static func build(reader: LogReader, level: Int = defaultLevel) throws -> MerkleTreeFile {
        let tree = MerkleTreeFile(level: level, reader: reader)
        try tree.catchUp()
        return tree
    }

    /// The framed bytes of the record with `sequence` (the leaf input of leaf
    /// sequence−1: the record as framed in the log, header and payload).
    public func leafInput(sequence: UInt64) throws -> [UInt8] {
        var out: [UInt8]?
        try reader.forEachRecord(from: sequence) { record in
            if record.sequence == sequence { out = record.withFramedBytes { $0.withUnsafeBytes { Array($0) } } }
            return false
        }
        guard let out else { throw LogError.sequenceNotFound(sequence) }
        return out
    }

    private func catchUp() throws {
        let level = self.level
        var hasher = MerkleHasher()
        try reader.forEachBatch(position: position) { batch in
            batch.forEachRecord { record in
                let leaf = record.withFramedBytes { $0.withUnsafeBytes { hasher.leaf($0) } }
                range.append(leaf, hasher: &hasher) { l, h in if l >= level { nodes.append(h) } }
            }
            position = batch.endPosition
            return true
        }
    }

    // MARK: Node lookup and proofs

    /// Post-order position of the complete subtree (level ≥ self.level, index).
    static func postOrder(relativeLevel h: Int, index: UInt64) -> Int {
        let m = (index + 1) << UInt64(h)
        let t = m.trailingZeroBitCount
        return Int(2 * m) - m.nonzeroBitCount - 1 - (t - h)
    }

    /// Stored nodes for a tree of `size` leaves.
    static func nodeCount(size: UInt64, level: Int) -> Int {
        let m = size >> UInt64(level)
        return Int(2 * m) - m.nonzeroBitCount
    }

    /// The hash of a complete subtree inside the current tree.
    func node(_ lvl: Int, _ index: UInt64) throws -> SHA256Digest {
        guard lvl < 64, index < (size >> UInt64(lvl)) else { throw MerkleError.indexOutOfRange(index: index, size: size) }
        if lvl >= level {
            let p = Self.postOrder(relativeLevel: lvl - level, index: index)
            guard p < nodes.count else { throw MerkleError.indexOutOfRange(index: index, size: size) }
            return nodes[p]
        }
        let first = index << UInt64(lvl)
        let block = first >> UInt64(level)
        let leaves = try blockLeaves(block)
        let lo = Int(first - (block << UInt64(level)))
        var layer = Array(leaves[lo..<lo + (1 << lvl)])
        while layer.count > 1 {
            layer = stride(from: 0, to: layer.count, by: 2).map { Merkle.nodeHash(layer[$0], layer[$0 + 1]) }
        }
        return layer[0]
    }

    private func blockLeaves(_ block: UInt64) throws -> [SHA256Digest] {
        if let cached = blocks[block] { return cached }
        let first = block << UInt64(level)
        let end = min(size, first + (1 << UInt64(level)))
        var out: [SHA256Digest] = []
        out.reserveCapacity(Int(end - first))
        try reader.forEachRecord(from: first + 1) { record in
            guard record.sequence <= end else { return false }
            out.append(record.withFramedBytes { $0.withUnsafeBytes { Merkle.leafHash($0) } })
            return record.sequence < end
        }
        guard out.count == Int(end - first) else { throw LogError.sequenceNotFound(first + UInt64(out.count) + 1) }
        blocks[block] = out
        return out
    }

    /// The root of the tree of the first `size` leaves (size ≤ the tree's).
    public func root(size s: UInt64) throws -> SHA256Digest {
        guard s <= size else { throw MerkleError.sizesOutOfOrder(size1: s, size2: size) }
        if s == size { return root }
        return try Merkle.subtreeHash(0, s, node)
    }

    /// The inclusion proof of leaf `index` in the tree of the first `size` leaves.
    public func inclusionProof(index: UInt64, size s: UInt64) throws -> [SHA256Digest] {
        guard s <= size else { throw MerkleError.sizesOutOfOrder(size1: s, size2: size) }
        return try Merkle.inclusionProof(index: index, size: s, node)
    }

    /// The consistency proof from the tree of `size1` leaves to that of `size2`.
    public func consistencyProof(size1: UInt64, size2: UInt64) throws -> [SHA256Digest] {
        guard size2 <= size else { throw MerkleError.sizesOutOfOrder(size1: size2, size2: size) }
        return try Merkle.consistencyProof(size1: size1, size2: size2, node)
    }

    // MARK: The file

    private func headerBytes() -> [UInt8] {
        var b = Self.magic
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { b.append(contentsOf: $0) } }
        func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { b.append(contentsOf: $0) } }
        u32(1); u32(UInt32(level))
        withUnsafeBytes(of: ledgerId.uuid) { b.append(contentsOf: $0) }
        u64(range.size); u64(position.offset); b.append(contentsOf: position.link.array)
        u64(UInt64(nodes.count))
        u32(nodes.withUnsafeBytes { CRC32C.checksum($0) })
        u32(UInt32(range.hashes.count))
        for h in range.hashes { b.append(contentsOf: h.array) }
        u32(CRC32C.checksum(b))
        return b
    }

    /// nil when loaded; otherwise why the file is unusable.
    private func load(_ fs: any LogFileSystem) -> String? {
        guard let file = try? fs.open(Self.fileName, .readOnly) else { return "cannot be opened" }
        defer { file.close() }
        guard let fileSize = try? file.size(), fileSize >= UInt64(Self.headerSpace) else { return "too short for its header" }
        var head = [UInt8](repeating: 0, count: Self.headerSpace)
        guard (try? head.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }) == Self.headerSpace else { return "unreadable" }
        func u32(_ o: Int) -> UInt32 { head.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: o, as: UInt32.self)) } }
        func u64(_ o: Int) -> UInt64 { head.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: o, as: UInt64.self)) } }
        guard Array(head[0..<8]) == Self.magic else { return "bad magic" }
        guard u32(8) == 1 else { return "unknown version \(u32(8))" }
        guard u32(12) == UInt32(level) else { return "stores level \(u32(12)), not \(level)" }
        let count = Int(u32(92))
        guard count <= 64 else { return "bad header" }
        let end = 96 + 32 * count
        guard u32(end) == head.withUnsafeBytes({ CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<end])) }) else {
            return "header checksum mismatch"
        }
        let id = head.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(fromByteOffset: 16, as: uuid_t.self)) }
        guard id == ledgerId else { return "belongs to another ledger" }
        let treeSize = u64(32), offset = u64(40)
        // Bounds before any arithmetic on them: a crafted file must not overflow a count.
        guard treeSize <= 1 << 40, offset <= 1 << 56 else { return "implausible size" }
        let link = SHA256Digest(Array(head[48..<80]))
        let nodeCount = u64(80)
        guard nodeCount == UInt64(Self.nodeCount(size: treeSize, level: level)) else { return "node count disagrees with its size" }
        guard let r = CompactRange(size: treeSize, hashes: (0..<count).map { SHA256Digest(Array(head[96 + 32 * $0..<128 + 32 * $0])) })
        else { return "compact range disagrees with its size" }
        guard fileSize >= UInt64(Self.headerSpace) + 32 * nodeCount else { return "shorter than its nodes" }
        var stored = [SHA256Digest](repeating: .zero, count: Int(nodeCount))
        let want = Int(nodeCount) * 32
        guard (try? stored.withUnsafeMutableBytes { try file.read(into: $0, at: UInt64(Self.headerSpace)) }) == want else { return "unreadable" }
        guard stored.withUnsafeBytes({ CRC32C.checksum($0) }) == u32(88) else { return "node checksum mismatch" }
        // I1's rule: it must end where the log has a batch with the same link.
        guard let size = try? reader.size(), offset <= size, let logLink = try? reader.link(endingAt: offset), logLink == link else {
            return "does not match the log (the log was cut or replaced?)"
        }
        guard let nextSequence = treeSize.addingReportingOverflow(1) as (partialValue: UInt64, overflow: Bool)?, !nextSequence.overflow
        else { return "bad size" }
        range = r
        nodes = stored
        savedNodes = stored.count
        position = LogReader.Position(offset: offset, nextSequence: nextSequence.partialValue, link: link)
        return nil
    }

    private func writeWhole(_ fs: any LogFileSystem) throws {
        try fs.createSubfolder("index")
        let temporary = Self.fileName + ".tmp"
        let file = try fs.open(temporary, .replace)
        var head = headerBytes()
        head += [UInt8](repeating: 0, count: Self.headerSpace - head.count)
        try head.withUnsafeBytes { try file.write($0, at: 0) }
        try nodes.withUnsafeBytes { try file.write($0, at: UInt64(Self.headerSpace)) }
        try file.sync()
        file.close()
        try fs.rename(temporary, to: Self.fileName)
        savedNodes = nodes.count
    }

    /// Appends the new nodes, then rewrites the header: a crash between leaves the old
    /// header (still right) or a torn one (rebuilt next time).
    private func extendFile(_ fs: any LogFileSystem) throws {
        let file = try fs.open(Self.fileName, .readWrite)
        defer { file.close() }
        try nodes[savedNodes...].withUnsafeBytes {
            try file.write($0, at: UInt64(Self.headerSpace + 32 * savedNodes))
        }
        try file.sync()
        let head = headerBytes()
        try head.withUnsafeBytes { try file.write($0, at: 0) }
        try file.sync()
        savedNodes = nodes.count
    }

    /// For `verify`: nil when the file is absent or agrees with `fresh` (a tree built from
    /// the log) for everything it covers; otherwise what is wrong with it, ending with
    /// the rule it breaks (M4: a file that is not used).
    package static func check(_ fs: any LogFileSystem, reader: LogReader, against fresh: MerkleTreeFile) -> String? {
        guard fs.exists(fileName) else { return nil }
        let stored = MerkleTreeFile(level: fresh.level, reader: reader)
        if let why = stored.load(fs) { return "\(fileName) is damaged: \(why) [M4]" }
        guard stored.size <= fresh.size else { return "\(fileName) covers \(stored.size) records, the log has \(fresh.size) [M4]" }
        guard Array(fresh.nodes.prefix(stored.nodes.count)) == stored.nodes,
              (try? fresh.root(size: stored.size)) == stored.root else {
            return "\(fileName) is damaged: its hashes disagree with the log [M4]"
        }
        return nil
    }
}
