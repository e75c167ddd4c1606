import Foundation
import LedgerCrypto
import LedgerKeys
import LedgerLog

/// An encrypted ledger's snapshots, sealed whole (issue 32; events/FORMAT.md Part 3,
/// "Sealed snapshots", rule S10): the snapshot code writes and reads its file as ever, through
/// this file system, which keeps the file's image in memory and seals it on its
/// `sync` (ChaCha20-Poly1305 under the ledger's snapshot key, a fresh random nonce per
/// file), and opens a sealed file into memory when it is opened for reading.
///
/// File: magic `HLSEAL01` (8) · u64 keyId · 12-byte nonce · u32 reserved (0) · the
/// ciphertext of the plain snapshot file · 16-byte tag; the associated data is bytes
/// 0..<32 and the ledger's id. Everything else in the folder passes through unchanged.
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
    static let magic = Array("HLSEAL01".utf8)
    static let headerLength = 32

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
            return SealingFile(target: try base.open(name, mode), key: key, keyId: keyId, ledgerId: ledgerId)
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
    /// deciphered without checking the tag (ChaCha20 from block 1, as the AEAD
    /// encrypts): enough to choose a snapshot by its header, never to use it — `load`
    /// opens the whole file and checks its tag first.
    func openHeader(_ name: String) throws -> any LogFile {
        let file = try base.open(name, .readOnly)
        defer { file.close() }
        let count = Self.headerLength + SnapshotFile.headerLength
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        let fail = { (why: String) in SnapshotProblem.unreadable(file: name, reason: why, rule: "S10") }
        guard got == count, Array(bytes[0..<8]) == Self.magic, bytes[28..<32].allSatisfy({ $0 == 0 }) else {
            throw fail("not a sealed snapshot")
        }
        let keyId = bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
        guard case .live(let key) = ring.lookup(keyId: keyId) else { throw fail("its key \(keyId) is not live") }
        do {
            let plain = try ChaCha20.encrypt(Array(bytes[Self.headerLength...]), key: key,
                                             nonce: SealNonce(bytes: bytes[16..<28]), counter: 1)
            return MemoryFile(bytes: plain, range: 0..<plain.count)
        } catch {
            throw fail("\(error)")
        }
    }

    /// Opens a sealed file in place: afterwards `bytes[range]` is the plain snapshot
    /// image (one copy of it in memory, however large).
    /// - Throws: `SnapshotProblem` (the file is skipped, the projections replayed).
    private func open(sealed bytes: inout [UInt8], name: String) throws -> Range<Int> {
        let fail = { (why: String) in SnapshotProblem.unreadable(file: name, reason: why, rule: "S10") }
        guard bytes.count >= Self.headerLength + ChaCha20Poly1305.tagByteCount, Array(bytes[0..<8]) == Self.magic,
              bytes[28..<32].allSatisfy({ $0 == 0 }) else { throw fail("not a sealed snapshot") }
        let keyId = bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
        guard case .live(let key) = ring.lookup(keyId: keyId) else { throw fail("its key \(keyId) is not live") }
        let nonce: SealNonce
        do { nonce = try SealNonce(bytes: bytes[16..<28]) } catch { throw fail("\(error)") }
        let aad = Self.associatedData(bytes[0..<Self.headerLength], ledgerId)
        let end = bytes.count - ChaCha20Poly1305.tagByteCount
        do {
            try bytes.withUnsafeMutableBytes { b in
                try aad.withUnsafeBytes { aad in
                    try ChaCha20Poly1305.open(sealed: UnsafeRawBufferPointer(rebasing: b[Self.headerLength...]), key: key,
                                              nonce: nonce, associatedData: aad,
                                              into: UnsafeMutableRawBufferPointer(rebasing: b[Self.headerLength..<end]))
                }
            }
        } catch {
            throw fail("its tag does not match (changed, or another ledger's)")
        }
        return Self.headerLength..<end
    }

    static func associatedData(_ header: ArraySlice<UInt8>, _ ledgerId: UUID) -> [UInt8] {
        Array(header) + withUnsafeBytes(of: ledgerId.uuid) { Array($0) }
    }
}

/// A snapshot being written: its image in memory until `sync`, which seals it into the
/// real file and syncs that.
private final class SealingFile: LogFile, @unchecked Sendable {
    // @unchecked: a snapshot file is written by one thread (the snapshot's writer).
    private let target: any LogFile
    private let key: SealKey
    private let keyId: UInt64
    private let ledgerId: UUID
    private var image: [UInt8] = []

    init(target: any LogFile, key: SealKey, keyId: UInt64, ledgerId: UUID) {
        self.target = target
        self.key = key
        self.keyId = keyId
        self.ledgerId = ledgerId
    }

    func size() throws -> UInt64 { UInt64(image.count) }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        guard offset < UInt64(image.count) else { return 0 }
        let n = min(buffer.count, image.count - Int(offset))
        image.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + Int(offset), byteCount: n) }
        return n
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        let end = Int(offset) + bytes.count
        if image.count < end { image.append(contentsOf: repeatElement(0, count: end - image.count)) }
        image.withUnsafeMutableBytes { ($0.baseAddress! + Int(offset)).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
    }

    /// Seals the image in place (its tag appended: no second copy of a snapshot that may
    /// be hundreds of megabytes), writes header and ciphertext, and syncs. The image is
    /// ciphertext afterwards: a snapshot is synced once, when written whole.
    func sync() throws {
        precondition(!sealed, "a sealed snapshot is synced once")
        var header = SealedSnapshotFileSystem.magic
        withUnsafeBytes(of: keyId.littleEndian) { header += $0 }
        var nonce = [UInt8](repeating: 0, count: 12)
        guard getentropy(&nonce, 12) == 0 else { throw LogError.io(operation: "getentropy", path: "", errno: errno) }
        header += nonce + [0, 0, 0, 0]
        let aad = SealedSnapshotFileSystem.associatedData(header[...], ledgerId)
        let count = image.count
        image.append(contentsOf: repeatElement(0, count: ChaCha20Poly1305.tagByteCount))
        try image.withUnsafeMutableBytes { b in
            try aad.withUnsafeBytes { aad in
                try ChaCha20Poly1305.seal(plaintext: UnsafeRawBufferPointer(rebasing: b[0..<count]), key: key,
                                          nonce: SealNonce(bytes: nonce), associatedData: aad, into: b)
            }
        }
        sealed = true
        try target.truncate(to: 0)
        try header.withUnsafeBytes { try target.write($0, at: 0) }
        try image.withUnsafeBytes { try target.write($0, at: UInt64(header.count)) }
        try target.sync()
    }

    /// Whether `sync` sealed the image (it then holds ciphertext).
    private var sealed = false

    func truncate(to length: UInt64) throws { image.removeSubrange(min(Int(length), image.count)...) }
    func allocate(upTo length: UInt64) throws {}
    func beginWriteback(offset: UInt64, length: UInt64) {}
    func lockExclusive() throws {}
    func unlock() {}
    func close() { target.close() }
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
