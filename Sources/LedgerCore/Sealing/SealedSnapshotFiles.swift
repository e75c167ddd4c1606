import Foundation
import LedgerCrypto
import LedgerKeys
import LedgerLog

/// An encrypted ledger's snapshots, sealed (issue 32; events/FORMAT.md Part 3, "Sealed
/// snapshots", rule S10): the snapshot code writes and reads its file as ever, through
/// this file system, which seals what it writes chunk by chunk as it goes
/// (`SealingFile`: ChaCha20-Poly1305 under the ledger's snapshot key, a fresh random
/// nonce per file; layout in `SealedSnapshotLayout`), and opens a sealed file into
/// memory when it is opened for reading. Everything else in the folder passes through
/// unchanged.
///
/// Invariant: only names under `snapshots/` are sealed or opened; a sealed snapshot is
/// never mapped (`readsOnDemand` is false for its image), so memory holds it whole.
struct SealedSnapshotFileSystem: LogFileSystem {
    let base: any LogFileSystem
    let ring: LedgerKeyRing
    let ledgerId: UUID

    /// The snapshot key's scope: the owner's, a type code no record has (0xFFFF), month
    /// 0. An erasure destroys it with the keys it erases and snapshots are written anew
    /// under a fresh one.
    static let scope = KeyScope(source: .app(ordinal: 0), type: 0xFFFF, month: UTCMonth(index: 0))

    /// `fs` itself for a plain ledger; for an encrypted one (a version 2 log and the
    /// key ring given), the file system that seals its snapshots.
    /// - Throws: `LedgerError.keysRequired` for an encrypted ledger without keys.
    static func wrapping(_ fs: any LogFileSystem) throws -> any LogFileSystem {
        guard fs.exists(LogWriter.logFileName) else { return fs }
        let file = try fs.open(LogWriter.logFileName, .readOnly)
        defer { file.close() }
        let header = try LogFileHeader.read(from: file, path: fs.path)
        guard header.allowsSealedRecords else { return fs }
        guard let ring = fs.recordKeys as? LedgerKeyRing else { throw LedgerError.keysRequired(path: fs.path) }
        return SealedSnapshotFileSystem(base: fs, ring: ring, ledgerId: header.ledgerId)
    }

    static func isSnapshot(_ name: String) -> Bool { name.hasPrefix(SnapshotFile.folder + "/") }

    var path: String { base.path }
    var recordKeys: (any RecordKeys)? { base.recordKeys }
    func folderExists() -> Bool { base.folderExists() }
    func createFolder() throws { try base.createFolder() }
    func exists(_ name: String) -> Bool { base.exists(name) }
    func createSubfolder(_ name: String) throws -> Bool { try base.createSubfolder(name) }
    func syncFolder(_ name: String?) throws { try base.syncFolder(name) }
    func rename(_ from: String, to: String) throws { try base.rename(from, to: to) }
    func remove(_ name: String) throws { try base.remove(name) }
    func list(_ subfolder: String) -> [String] { base.list(subfolder) }
    func lockExclusive(timeout: Double) throws -> any LogLock { try base.lockExclusive(timeout: timeout) }

    func open(_ name: String, _ mode: LogFileOpenMode) throws -> any LogFile {
        guard Self.isSnapshot(name) else { return try base.open(name, mode) }
        switch mode {
        case .replace, .createNew:
            let keyId: UInt64
            do {
                guard let id = try ring.keyIds(for: [Self.scope])[Self.scope] else { preconditionFailure("a key per scope asked") }
                keyId = id
            } catch {
                throw LedgerError.keyStore(error)
            }
            guard case .live(let key) = ring.lookup(keyId: keyId) else { throw LedgerError.keyStore("the snapshot key \(keyId) is not live", usage: false) }
            return try SealingFile(target: try base.open(name, mode), key: key, keyId: keyId, ledgerId: ledgerId)
        case .readOnly:
            let file = try base.open(name, .readOnly)
            defer { file.close() }
            var bytes = try file.readAll(path: base.path + "/" + name)
            let image = try open(sealed: &bytes, name: name)
            return MemoryFile(bytes: bytes, range: image)
        case .readWrite:
            throw LogError.io(operation: "open for writing (a sealed snapshot is written whole)", path: name, errno: EPERM)
        }
    }

    /// The first `SnapshotFile.headerLength` bytes of a sealed snapshot's image,
    /// deciphered without checking the tag (ChaCha20 from block 1 of chunk 0, as the
    /// AEAD encrypts): enough to choose a snapshot by its header, never to use it —
    /// `load` opens the whole file and checks its tags first.
    func openHeader(_ name: String) throws -> any LogFile {
        let file = try base.open(name, .readOnly)
        defer { file.close() }
        let count = SealedSnapshotLayout.headerLength + SnapshotFile.headerLength
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        let fail = { (why: String) in SnapshotProblem.unreadable(file: name, reason: why, rule: "S10") }
        guard got == count else { throw fail("not a sealed snapshot") }
        let (key, nonce) = try keyAndFirstNonce(bytes[...], fail: fail)
        do {
            let plain = try ChaCha20.encrypt(Array(bytes[SealedSnapshotLayout.headerLength...]), key: key, nonce: nonce, counter: 1)
            return MemoryFile(bytes: plain, range: 0..<plain.count)
        } catch {
            throw fail("\(error)")
        }
    }

    /// A sealed file's key (live) and the nonce of its first (or only) sealed part,
    /// from its 32-byte header, either version.
    private func keyAndFirstNonce(_ bytes: ArraySlice<UInt8>, fail: (String) -> SnapshotProblem) throws -> (SealKey, SealNonce) {
        let header = Array(bytes.prefix(SealedSnapshotLayout.headerLength))
        guard header.count == SealedSnapshotLayout.headerLength else { throw fail("not a sealed snapshot") }
        let magic = Array(header[0..<8])
        let nonce: SealNonce
        if magic == SealedSnapshotLayout.magicVersion2 {
            guard SealedSnapshotLayout.chunkLength(ofHeader: header[...]) != nil else { throw fail("its chunk length is not one a writer makes") }
            nonce = SealedSnapshotLayout.nonce(header: header, chunk: 0)
        } else if magic == SealedSnapshotLayout.magicVersion1, header[28..<32].allSatisfy({ $0 == 0 }),
                  let version1 = try? SealNonce(bytes: header[16..<28]) {
            nonce = version1
        } else {
            throw fail("not a sealed snapshot")
        }
        let keyId = header.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
        guard case .live(let key) = ring.lookup(keyId: keyId) else { throw fail("its key \(keyId) is not live") }
        return (key, nonce)
    }

    /// Opens a sealed file in place: afterwards `bytes[range]` is the plain snapshot
    /// image (one copy of it in memory, however large).
    /// - Throws: `SnapshotProblem` (the file is skipped, the projections replayed).
    private func open(sealed bytes: inout [UInt8], name: String) throws -> Range<Int> {
        let fail = { (why: String) in SnapshotProblem.unreadable(file: name, reason: why, rule: "S10") }
        let (key, firstNonce) = try keyAndFirstNonce(bytes[...], fail: fail)
        let headerLength = SealedSnapshotLayout.headerLength, tagLength = SealedSnapshotLayout.tagLength
        let header = Array(bytes[0..<headerLength])
        let tagMismatch = fail("its tag does not match (changed, or another ledger's)")
        guard Array(header[0..<8]) == SealedSnapshotLayout.magicVersion2 else {
            // Version 1: the image sealed as one.
            guard bytes.count >= headerLength + tagLength else { throw fail("not a sealed snapshot") }
            let aad = Self.associatedData(header[...], ledgerId)
            let end = bytes.count - tagLength
            do {
                try bytes.withUnsafeMutableBytes { b in
                    try aad.withUnsafeBytes { aad in
                        try ChaCha20Poly1305.open(sealed: UnsafeRawBufferPointer(rebasing: b[headerLength...]), key: key,
                                                  nonce: firstNonce, associatedData: aad,
                                                  into: UnsafeMutableRawBufferPointer(rebasing: b[headerLength..<end]))
                    }
                }
            } catch {
                throw tagMismatch
            }
            return headerLength..<end
        }
        // Version 2: chunk by chunk, each opened in place and moved down to where its
        // plain bytes go (k·C: below its own sealed bytes, above every earlier chunk's).
        guard let chunkLength = SealedSnapshotLayout.chunkLength(ofHeader: header[...]),
              let (count, lastLength) = SealedSnapshotLayout.chunks(bodyLength: bytes.count - headerLength, chunkLength: chunkLength)
        else { throw fail("its length is not a whole number of sealed chunks") }
        for k in 0..<count {
            let plainLength = k == count - 1 ? lastLength : chunkLength
            let from = SealedSnapshotLayout.fileOffset(ofChunk: k, chunkLength: chunkLength)
            let aad = SealedSnapshotLayout.associatedData(header: header, ledgerId: ledgerId, last: k == count - 1)
            let nonce = k == 0 ? firstNonce : SealedSnapshotLayout.nonce(header: header, chunk: k)
            do {
                try bytes.withUnsafeMutableBytes { b in
                    try aad.withUnsafeBytes { aad in
                        try ChaCha20Poly1305.open(sealed: UnsafeRawBufferPointer(rebasing: b[from..<(from + plainLength + tagLength)]),
                                                  key: key, nonce: nonce, associatedData: aad,
                                                  into: UnsafeMutableRawBufferPointer(rebasing: b[from..<(from + plainLength)]))
                    }
                    (b.baseAddress! + k * chunkLength).copyMemory(from: b.baseAddress! + from, byteCount: plainLength)
                }
            } catch {
                throw fail("its chunk \(k) of \(count) does not match its tag (changed, moved, cut, or another ledger's)")
            }
        }
        return 0..<((count - 1) * chunkLength + lastLength)
    }

    static func associatedData(_ header: ArraySlice<UInt8>, _ ledgerId: UUID) -> [UInt8] {
        Array(header) + withUnsafeBytes(of: ledgerId.uuid) { Array($0) }
    }
}

/// A sealed snapshot opened: its plain image, read from memory.
final class MemoryFile: LogFile, Sendable {
    /// The file is `bytes[range]`.
    let bytes: [UInt8]
    let range: Range<Int>
    init(bytes: [UInt8], range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count)
        self.bytes = bytes
        self.range = range
    }
    func size() throws -> UInt64 { UInt64(range.count) }
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        guard offset < UInt64(range.count) else { return 0 }
        let n = min(buffer.count, range.count - Int(offset))
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + range.lowerBound + Int(offset), byteCount: n) }
        return n
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        throw LogError.io(operation: "write (an opened sealed snapshot is read only)", path: "", errno: EPERM)
    }
    func sync() throws {}
    func truncate(to length: UInt64) throws {}
    func allocate(upTo length: UInt64) throws {}
    func beginWriteback(offset: UInt64, length: UInt64) {}
    func lockExclusive() throws {}
    func unlock() {}
    func close() {}
}
