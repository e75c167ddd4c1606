import Foundation
import LedgerLog

/// A deterministic pseudo-random generator (SplitMix64) that prints nothing but can
/// be reproduced from its seed: every failing test names the seed.
package struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    package init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// An in-memory ledger folder that models what a power loss does to writes that
/// were not yet synced, like SQLite's crash-test VFS: at a chosen sync the machine
/// "loses power", and each unsynced write is independently kept, dropped, garbled
/// or torn (a prefix of 512-byte sectors kept). I/O errors can be injected on a
/// chosen write or sync. After a crash every call fails until `rebooted()`.
///
/// Folder entries are modelled too, like a journaling file system without
/// ordered metadata: creating, renaming or removing a file and creating a
/// subfolder are not durable until that folder is synced (`syncFolder` of the
/// file's own folder; a subfolder's entry lives in the ledger folder). At a crash
/// each folder keeps a random prefix of its unsynced entry changes. `syncFolder`
/// makes entries durable, never file data (that takes `LogFile.sync`).
package final class SimulatedFileSystem: LogFileSystem, @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `mutex`.
    package let path: String
    private let mutex = NSLock()

    struct PendingWrite {
        let offset: UInt64
        let bytes: [UInt8]
    }

    /// How to take back one change made since the last sync: what `durable` is
    /// rebuilt from (the bytes a write overwrote and the length before it; the bytes
    /// a truncation cut, or the length before it grew the file).
    enum Undo {
        case write(offset: Int, overwritten: [UInt8], previousCount: Int)
        case truncate(removed: [UInt8], previousCount: Int)
    }

    /// A file's data, named by zero or more entries. A class, so that a write changes
    /// `current` in place: its cost is the write's, not the file's (a value type held
    /// in the dictionary beside a durable copy was copied whole on the first write
    /// after every sync, which made long runs quadratic).
    ///
    /// The durable image is not kept as a copy: it is `current` with the changes
    /// since the last sync taken back (`undo`, newest first), rebuilt only when a
    /// crash, a reboot or a test asks for it. A sync forgets the undo log.
    final class Inode {
        var current: [UInt8]
        var undo: [Undo] = []
        var pending: [PendingWrite] = []
        var truncatedSinceSync = false

        init(current: [UInt8] = []) { self.current = current }

        /// The bytes as of the last sync (what a power loss keeps for sure).
        var durable: [UInt8] {
            var image = current
            for change in undo.reversed() {
                switch change {
                case .write(let offset, let overwritten, let previousCount):
                    image.replaceSubrange(offset..<offset + overwritten.count, with: overwritten)
                    if image.count > previousCount { image.removeSubrange(previousCount...) }
                case .truncate(let removed, let previousCount):
                    if image.count > previousCount { image.removeSubrange(previousCount...) }
                    image.append(contentsOf: removed)
                }
            }
            return image
        }

        /// Sets the length (cutting or zero-filling), remembering how to take it back.
        func setCount(_ count: Int) {
            let previous = current.count
            if count < previous {
                undo.append(.truncate(removed: Array(current[count...]), previousCount: previous))
                current.removeSubrange(count...)
            } else if count > previous {
                undo.append(.truncate(removed: [], previousCount: previous))
                current.append(contentsOf: zeros(count - previous))
            }
        }

        /// Writes in place, remembering the bytes overwritten; returns how many bytes it
        /// copied (the write's, the overwritten ones kept for the undo log, zero fill).
        @discardableResult
        func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int {
            let previous = current.count
            let end = offset + bytes.count
            let overlap = max(0, min(end, previous) - offset)
            undo.append(.write(offset: offset, overwritten: overlap > 0 ? Array(current[offset..<offset + overlap]) : [],
                               previousCount: previous))
            if previous < offset {
                // the gap before the write reads as zeros; taking the write back cuts it too
                current.append(contentsOf: zeros(offset - previous))
            }
            if current.count < end { current.append(contentsOf: zeros(end - current.count)) }
            current.withUnsafeMutableBytes {
                ($0.baseAddress! + offset).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            }
            return bytes.count + overlap + max(0, offset - previous)
        }

        /// The last sync: what is current is durable.
        func synced() {
            undo = []
            pending = []
            truncatedSinceSync = false
        }
    }

    /// A change to a folder's entries, durable once the folder is synced.
    enum EntryChange {
        case link(String, Int)
        case unlink(String)
        case rename(String, String, Int)
        case mkdir(String)
    }

    package enum Fault: Equatable {
        case none
        /// The n-th (1-based) sync of any file fails with `errno`.
        case failSync(number: Int, errno: Int32)
        /// The n-th write fails with `errno`, having written nothing.
        case failWrite(number: Int, errno: Int32)
    }

    private var inodes: [Int: Inode] = [:]
    private var nextInode = 1
    /// Entries as the running system sees them (relative path → inode).
    private var names: [String: Int] = [:]
    private var folders: Set<String> = []
    /// Entries a power loss keeps for sure.
    private var durableNames: [String: Int] = [:]
    private var durableFolders: Set<String> = []
    /// Entry changes not yet synced, per folder ("" is the ledger folder).
    private var unsyncedChanges: [String: [EntryChange]] = [:]
    private var folderExistsFlag = false
    private var lockHeld = false
    private var lockedInodes: Set<Int> = []
    package private(set) var syncCount = 0
    package private(set) var folderSyncCount = 0
    package private(set) var writeCount = 0
    /// Bytes the simulated disk copied to carry out writes (the written bytes, the
    /// bytes they overwrote kept for a crash, zero fill): a write's cost, which must
    /// not grow with the file (`SimulatedDiskTests`).
    package private(set) var bytesCopiedByWrites = 0
    package private(set) var crashed = false
    /// Sync number (1-based) at which power is lost; nil: never.
    package var crashAtSync: Int?
    /// Folder sync number (1-based) at which power is lost (before that sync takes effect); nil: never.
    package var crashAtFolderSync: Int?
    package var fault: Fault = .none
    /// When set, reserving space (`allocate`) fails with this errno (ENOSPC: a nearly full disk).
    package var allocateFails: Int32?
    /// When set, every write from now on fails with this errno (ENOSPC: a full disk).
    package var writesFail: Int32?
    /// Microseconds each sync takes (a real disk's latency lets appends group).
    package var syncDelay: UInt32 = 0
    private var rng: SeededRandom

    package init(path: String = "/sim/ledger", seed: UInt64 = 1) {
        self.path = path
        rng = SeededRandom(seed: seed)
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        mutex.lock()
        defer { mutex.unlock() }
        return try body()
    }

    private func checkAlive() throws {
        if crashed { throw LogError.io(operation: "simulated", path: path, errno: EIO) }
    }

    /// The folder an entry lives in: "" for the ledger folder.
    private static func folder(of name: String) -> String {
        guard let slash = name.lastIndex(of: "/") else { return "" }
        return String(name[..<slash])
    }

    private func record(_ change: EntryChange, in folder: String) {
        unsyncedChanges[folder, default: []].append(change)
    }

    private func applyDurably(_ change: EntryChange) {
        switch change {
        case .link(let name, let inode): durableNames[name] = inode
        case .unlink(let name): durableNames[name] = nil
        case .rename(let from, let to, let inode):
            durableNames[to] = inode
            durableNames[from] = nil
        case .mkdir(let name): durableFolders.insert(name)
        }
    }

    /// The folder as a fresh process sees it after the crash: durable bytes and entries only.
    package func rebooted(seed: UInt64? = nil) -> SimulatedFileSystem {
        locked {
            if !crashed { loseUnsyncedWrites() }
            let next = SimulatedFileSystem(path: path, seed: seed ?? rng.next())
            let kept = durableNames.filter { name, _ in
                let folder = Self.folder(of: name)
                return folder.isEmpty || durableFolders.contains(folder)
            }
            next.names = kept
            next.durableNames = kept
            next.folders = durableFolders
            next.durableFolders = durableFolders
            for id in Set(kept.values) {
                next.inodes[id] = Inode(current: inodes[id]!.durable)
            }
            next.nextInode = nextInode
            next.folderExistsFlag = folderExistsFlag
            return next
        }
    }

    /// Applies the power loss: each unsynced write kept, dropped, garbled or torn;
    /// each folder keeps a random prefix of its unsynced entry changes.
    private func loseUnsyncedWrites() {
        for id in inodes.keys.sorted() {
            let f = inodes[id]!
            var image = f.durable
            if f.truncatedSinceSync && rng.next() % 2 == 0 {
                image = f.current.count < image.count ? Array(image[0..<f.current.count]) : image
            }
            for write in f.pending {
                var bytes = write.bytes
                switch rng.next() % 4 {
                case 0: continue  // dropped
                case 1: break  // kept
                case 2:  // garbled
                    for i in bytes.indices where rng.next() % 3 == 0 { bytes[i] = UInt8(truncatingIfNeeded: rng.next()) }
                default:  // torn: a prefix of whole sectors
                    let sectors = (bytes.count + 511) / 512
                    let keep = Int(rng.next() % UInt64(sectors + 1)) * 512
                    bytes = Array(bytes[0..<min(keep, bytes.count)])
                }
                let end = Int(write.offset) + bytes.count
                if image.count < end { image.append(contentsOf: zeros(end - image.count)) }
                image.replaceSubrange(Int(write.offset)..<end, with: bytes)
            }
            f.current = image
            f.synced()
        }
        for folder in unsyncedChanges.keys.sorted() {
            let changes = unsyncedChanges[folder]!
            let keep = Int(rng.next() % UInt64(changes.count + 1))
            for change in changes.prefix(keep) { applyDurably(change) }
        }
        unsyncedChanges = [:]
        crashed = true
    }

    /// Total bytes durable in a file.
    package func durableBytes(_ name: String) -> [UInt8] { locked { names[name].flatMap { inodes[$0]?.durable } ?? [] } }
    /// Current bytes of a file (what reads see).
    package func currentBytes(_ name: String) -> [UInt8] { locked { names[name].flatMap { inodes[$0]?.current } ?? [] } }
    /// Whether a crash now could lose the file's entry (its folder was not synced since it changed).
    package func entryIsDurable(_ name: String) -> Bool {
        locked {
            let folder = Self.folder(of: name)
            return durableNames[name] != nil && durableNames[name] == names[name]
                && (folder.isEmpty || durableFolders.contains(folder))
        }
    }
    /// Replaces a file's bytes, durably, entry included (for tests that damage or truncate a log).
    package func setBytes(_ name: String, _ bytes: [UInt8]) {
        locked {
            let id: Int
            if let existing = names[name] { id = existing } else {
                id = nextInode
                nextInode += 1
            }
            inodes[id] = Inode(current: bytes)
            names[name] = id
            durableNames[name] = id
            let folder = Self.folder(of: name)
            if !folder.isEmpty {
                folders.insert(folder)
                durableFolders.insert(folder)
            }
        }
    }

    // MARK: LogFileSystem

    package func folderExists() -> Bool { locked { folderExistsFlag } }
    package func createFolder() throws { try locked { try checkAlive(); folderExistsFlag = true } }
    package func exists(_ name: String) -> Bool { locked { names[name] != nil || folders.contains(name) } }

    package func open(_ name: String, _ mode: LogFileOpenMode) throws -> any LogFile {
        try locked {
            try checkAlive()
            let folder = Self.folder(of: name)
            func create() throws -> Int {
                guard folder.isEmpty || folders.contains(folder) else {
                    throw LogError.io(operation: "open", path: path + "/" + name, errno: ENOENT)
                }
                let id = nextInode
                nextInode += 1
                inodes[id] = Inode()
                names[name] = id
                record(.link(name, id), in: folder)
                return id
            }
            let id: Int
            switch mode {
            case .readOnly, .readWrite:
                guard let existing = names[name] else { throw LogError.ledgerNotFound(path: path + "/" + name) }
                id = existing
            case .createNew:
                guard names[name] == nil else { throw LogError.io(operation: "open", path: name, errno: EEXIST) }
                id = try create()
            case .replace:
                if let existing = names[name] {
                    id = existing
                    inodes[id]!.setCount(0)
                    inodes[id]!.truncatedSinceSync = true
                } else {
                    id = try create()
                }
            }
            return SimulatedFile(fs: self, inode: id, name: name, readOnly: mode == .readOnly)
        }
    }

    @discardableResult
    package func createSubfolder(_ name: String) throws -> Bool {
        try locked {
            try checkAlive()
            guard !folders.contains(name) else { return false }
            folders.insert(name)
            record(.mkdir(name), in: "")
            return true
        }
    }

    package func syncFolder(_ name: String?) throws {
        try locked {
            try checkAlive()
            folderSyncCount += 1
            if let crashAtFolderSync, folderSyncCount == crashAtFolderSync {
                loseUnsyncedWrites()
                throw LogError.io(operation: "fsync directory (power lost)", path: name ?? path, errno: EIO)
            }
            let folder = name ?? ""
            for change in unsyncedChanges[folder] ?? [] { applyDurably(change) }
            unsyncedChanges[folder] = nil
        }
    }

    package func rename(_ from: String, to: String) throws {
        try locked {
            try checkAlive()
            guard let id = names[from] else { throw LogError.io(operation: "rename", path: from, errno: ENOENT) }
            names[to] = id
            names[from] = nil
            let (a, b) = (Self.folder(of: from), Self.folder(of: to))
            if a == b {
                record(.rename(from, to, id), in: b)
            } else {
                record(.unlink(from), in: a)
                record(.link(to, id), in: b)
            }
        }
    }

    package func remove(_ name: String) throws {
        try locked {
            try checkAlive()
            guard names[name] != nil else { return }
            names[name] = nil
            record(.unlink(name), in: Self.folder(of: name))
        }
    }

    package func list(_ subfolder: String) -> [String] {
        locked {
            names.keys.filter { $0.hasPrefix(subfolder + "/") }.map { String($0.dropFirst(subfolder.count + 1)) }.sorted()
        }
    }

    package func lockExclusive(timeout: Double) throws -> any LogLock {
        try locked {
            try checkAlive()
            guard !lockHeld else { throw LogError.ledgerLocked(path: path) }
            lockHeld = true
            return SimulatedLock(fs: self)
        }
    }

    fileprivate func releaseLock() { locked { lockHeld = false } }

    fileprivate func lockInode(_ id: Int) throws {
        try locked {
            try checkAlive()
            guard !lockedInodes.contains(id) else { throw LogError.ledgerLocked(path: path) }
            lockedInodes.insert(id)
        }
    }

    fileprivate func unlockInode(_ id: Int) { locked { _ = lockedInodes.remove(id) } }

    // MARK: File operations

    fileprivate func size(_ id: Int) throws -> UInt64 {
        try locked {
            try checkAlive()
            return UInt64(inodes[id]?.current.count ?? 0)
        }
    }

    fileprivate func read(_ id: Int, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try locked {
            try checkAlive()
            let bytes = inodes[id]?.current ?? []
            guard offset < UInt64(bytes.count) else { return 0 }
            let n = min(buffer.count, bytes.count - Int(offset))
            bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + Int(offset), byteCount: n) }
            return n
        }
    }

    /// The error a real file system gives for `code`: a full disk is `noSpace`.
    private static func failure(_ operation: String, _ name: String, _ code: Int32) -> LogError {
        code == ENOSPC ? .noSpace(operation: operation, path: name) : .io(operation: operation, path: name, errno: code)
    }

    fileprivate func write(_ id: Int, _ name: String, _ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        try locked {
            try checkAlive()
            writeCount += 1
            if case .failWrite(let number, let code) = fault, number == writeCount {
                throw Self.failure("pwrite", name, code)
            }
            if let code = writesFail { throw Self.failure("pwrite", name, code) }
            let f = inodes[id]!
            bytesCopiedByWrites += f.write(bytes, at: Int(offset))
            f.pending.append(PendingWrite(offset: offset, bytes: Array(bytes)))
        }
    }

    fileprivate func allocate(_ id: Int, _ name: String, upTo length: UInt64) throws {
        let current = try size(id)
        guard length > current else { return }
        if let code = locked({ allocateFails }) { throw Self.failure("fallocate", name, code) }
        // Space that reads as zeros: like a write of zeros that a crash may lose or garble.
        try zeros(Int(length - current)).withUnsafeBytes { try write(id, name, $0, at: current) }
    }

    fileprivate func sync(_ id: Int, _ name: String) throws {
        if syncDelay > 0 { usleep(syncDelay) }
        try locked {
            try checkAlive()
            syncCount += 1
            if let crashAtSync, syncCount == crashAtSync {
                loseUnsyncedWrites()
                throw LogError.io(operation: "fdatasync (power lost)", path: name, errno: EIO)
            }
            if case .failSync(let number, let code) = fault, number == syncCount {
                // Like Linux after a failed writeback: the kernel may have dropped the
                // dirty pages; the writes stay undecided until the next crash or reboot.
                throw Self.failure("fdatasync", name, code)
            }
            inodes[id]!.synced()
        }
    }

    fileprivate func truncate(_ id: Int, to length: UInt64) throws {
        try locked {
            try checkAlive()
            let f = inodes[id]!
            f.setCount(Int(length))
            f.truncatedSinceSync = true
        }
    }
}

/// `n` zero bytes, without the per-element cost of `repeatElement` in debug builds.
package func zeros(_ n: Int) -> [UInt8] {
    guard n > 0 else { return [] }
    return [UInt8](unsafeUninitializedCapacity: n) { buffer, count in
        buffer.baseAddress!.initialize(repeating: 0, count: n)
        count = n
    }
}

package final class SimulatedFile: LogFile, @unchecked Sendable {
    // @unchecked: `holdsLock` is guarded by `mutex`; the rest is immutable and all
    // file state lives in the (locked) file system.
    let fs: SimulatedFileSystem
    let inode: Int
    let name: String
    let readOnly: Bool
    private let mutex = NSLock()
    private var holdsLock = false

    init(fs: SimulatedFileSystem, inode: Int, name: String, readOnly: Bool) {
        self.fs = fs
        self.inode = inode
        self.name = name
        self.readOnly = readOnly
    }

    deinit { unlock() }

    package func size() throws -> UInt64 { try fs.size(inode) }
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int { try fs.read(inode, into: buffer, at: offset) }
    package func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        precondition(!readOnly, "write to a read-only file")
        try fs.write(inode, name, bytes, at: offset)
    }
    package func sync() throws { try fs.sync(inode, name) }
    package func truncate(to length: UInt64) throws { try fs.truncate(inode, to: length) }
    package func allocate(upTo length: UInt64) throws { try fs.allocate(inode, name, upTo: length) }
    package func beginWriteback(offset: UInt64, length: UInt64) {}
    package func lockExclusive() throws {
        mutex.lock()
        defer { mutex.unlock() }
        guard !holdsLock else { return }
        try fs.lockInode(inode)
        holdsLock = true
    }
    package func unlock() {
        mutex.lock()
        defer { mutex.unlock() }
        if holdsLock {
            holdsLock = false
            fs.unlockInode(inode)
        }
    }
    package func close() {}
}

package final class SimulatedLock: LogLock, @unchecked Sendable {
    // @unchecked: `released` is only touched under the file system's lock semantics.
    private let fs: SimulatedFileSystem
    private var released = false
    init(fs: SimulatedFileSystem) { self.fs = fs }
    package func release() {
        if !released {
            released = true
            fs.releaseLock()
        }
    }
    deinit { release() }
}
