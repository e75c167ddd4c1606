import CLedgerAccel
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The real file system: POSIX calls on a folder. Files are created 0600 and
/// folders 0700 (health data). The writer lock is `flock(LOCK_EX)` on `LOCK`: it
/// belongs to the open file description, so a second handle in the same process
/// conflicts exactly like another process.
public struct PosixFileSystem: LogFileSystem {
    public let path: String
    /// The keys of the ledger's sealed records (nil: none given).
    public let recordKeys: (any RecordKeys)?

    /// The folder at `path`; `recordKeys` open its sealed records.
    public init(path: String, recordKeys: (any RecordKeys)? = nil) {
        self.path = path
        self.recordKeys = recordKeys
    }

    private func full(_ name: String) -> String { path + "/" + name }

    public func folderExists() -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    public func createFolder() throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw LogError.io(operation: "mkdir", path: prefix, errno: errno)
            }
        }
        // An existing folder keeps whatever mode it had (0755, 0777): health data is
        // the owner's alone, so the ledger folder is made 0700 either way.
        guard chmod(path, 0o700) == 0 else { throw LogError.io(operation: "chmod 0700", path: path, errno: errno) }
        // The parent must record the new folder durably.
        try Self.syncDirectory(Self.parentFolder(of: path))
    }

    /// The folder holding `path`: `a/b` → `a`, `/a` → `/`, `L` → `.`. Computed by
    /// hand: Foundation's `deletingLastPathComponent` traps on a one-component
    /// relative path in Swift 6.3 on Linux.
    static func parentFolder(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        if slash == trimmed.startIndex { return "/" }
        return String(trimmed[..<slash])
    }

    public func exists(_ name: String) -> Bool {
        var st = stat()
        return lstat(full(name), &st) == 0
    }

    /// The error for a failed call: a full disk is named as such (`noSpace`).
    static func failure(_ operation: String, _ path: String, _ code: Int32) -> LogError {
        code == ENOSPC || code == EDQUOT ? .noSpace(operation: operation, path: path) : .io(operation: operation, path: path, errno: code)
    }

    /// Refuses a subfolder of the ledger (`snapshots`, `quarantine`, `index`) that is
    /// a symbolic link or not a folder: following it would read or write outside the
    /// ledger. An absent one passes (creating or opening in it then fails on its own).
    private func checkSubfolder(_ name: String) throws {
        guard let slash = name.firstIndex(of: "/") else { return }
        try checkFolder(String(name[..<slash]))
    }

    private func checkFolder(_ folder: String) throws {
        var st = stat()
        guard lstat(full(folder), &st) == 0 else { return }
        if (st.st_mode & S_IFMT) == S_IFLNK { throw LogError.unsafePath(path: full(folder), reason: "is a symbolic link") }
        if (st.st_mode & S_IFMT) != S_IFDIR { throw LogError.unsafePath(path: full(folder), reason: "is not a folder") }
    }

    public func open(_ name: String, _ mode: LogFileOpenMode) throws -> any LogFile {
        let flags: Int32
        switch mode {
        case .readOnly: flags = O_RDONLY
        case .readWrite: flags = O_RDWR
        case .createNew: flags = O_RDWR | O_CREAT | O_EXCL
        case .replace: flags = O_RDWR | O_CREAT | O_TRUNC
        }
        try checkSubfolder(name)
        // O_NOFOLLOW: a file of the ledger that is a symbolic link is never followed.
        let fd = Glibc.open(full(name), flags | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            if errno == ENOENT { throw LogError.ledgerNotFound(path: full(name)) }
            if errno == ELOOP { throw LogError.unsafePath(path: full(name), reason: "is a symbolic link") }
            throw Self.failure("open", full(name), errno)
        }
        return PosixFile(fd: fd, path: full(name))
    }

    @discardableResult
    public func createSubfolder(_ name: String) throws -> Bool {
        if mkdir(full(name), 0o700) == 0 { return true }
        guard errno == EEXIST else { throw Self.failure("mkdir", full(name), errno) }
        try checkFolder(name)
        return false
    }

    public func syncFolder(_ name: String?) throws {
        if let name { try checkFolder(name) }
        try Self.syncDirectory(name.map(full) ?? path)
    }

    static func syncDirectory(_ directory: String) throws {
        let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw LogError.io(operation: "open directory", path: directory, errno: errno) }
        defer { Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw LogError.io(operation: "fsync directory", path: directory, errno: errno) }
    }

    public func rename(_ from: String, to: String) throws {
        try checkSubfolder(from)
        try checkSubfolder(to)
        guard Glibc.rename(full(from), full(to)) == 0 else {
            throw LogError.io(operation: "rename", path: full(from), errno: errno)
        }
    }

    public func remove(_ name: String) throws {
        try checkSubfolder(name)
        if unlink(full(name)) != 0 && errno != ENOENT {
            throw LogError.io(operation: "unlink", path: full(name), errno: errno)
        }
    }

    public func list(_ subfolder: String) -> [String] {
        guard (try? checkFolder(subfolder)) != nil else { return [] }
        return ((try? FileManager.default.contentsOfDirectory(atPath: full(subfolder))) ?? []).sorted()
    }

    public func lockExclusive(timeout: Double) throws -> any LogLock {
        let lockPath = full("LOCK")
        let deadline = Date().addingTimeInterval(timeout)
        for _ in 0..<100 {
            let fd = Glibc.open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw Self.failure("open", lockPath, errno) }
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                let error = errno
                guard error == EWOULDBLOCK || error == EINTR else {
                    Glibc.close(fd)
                    throw LogError.io(operation: "flock", path: lockPath, errno: error)
                }
                if error == EWOULDBLOCK && Date() >= deadline {
                    Glibc.close(fd)
                    throw LogError.ledgerLocked(path: path)
                }
                usleep(10_000)
            }
            // W1: the lock counts only if the locked file is still the one at the
            // path. If LOCK was removed (or replaced) between our open and flock, a
            // second writer could lock a new LOCK: retry on the file now there.
            var held = stat(), named = stat()
            if fstat(fd, &held) == 0, lstat(lockPath, &named) == 0, held.st_dev == named.st_dev, held.st_ino == named.st_ino {
                return PosixLock(fd: fd)
            }
            Glibc.close(fd)
        }
        // LOCK kept changing under us: someone is replacing it; do not write.
        throw LogError.exclusiveAccessLost(path: lockPath, reason: "LOCK was replaced 100 times while locking it")
    }
}

/// `pread` until the buffer is full or the file ends (retrying on EINTR): the one
/// read loop, shared by the log's files and the importer's (`ReadOnlyFile`).
package enum PositionalRead {
    /// The errno of a failed read.
    package struct Failure: Error { package let errno: Int32 }

    /// The bytes read (fewer than `buffer.count` only at the end of the file).
    package static func fill(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) -> Result<Int, Failure> {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(Failure(errno: errno))
            }
            if n == 0 { break }
            done += n
        }
        return .success(done)
    }
}

/// An open file descriptor.
final class PosixFile: LogFile, @unchecked Sendable {
    // Sendable: the descriptor is immutable after init; POSIX calls on it are thread-safe.
    private let fd: Int32
    private let path: String

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { Glibc.close(fd) }

    var readsOnDemand: Bool { true }

    func size() throws -> UInt64 {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw LogError.io(operation: "fstat", path: path, errno: errno) }
        return UInt64(st.st_size)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        switch PositionalRead.fill(fd, buffer, at: offset) {
        case .success(let n): return n
        case .failure(let e): throw LogError.io(operation: "pread", path: path, errno: e.errno)
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw PosixFileSystem.failure("pwrite", path, errno)
            }
            done += n
        }
    }

    func sync() throws {
        guard fdatasync(fd) == 0 else { throw PosixFileSystem.failure("fdatasync", path, errno) }
    }

    func truncate(to length: UInt64) throws {
        guard ftruncate(fd, off_t(length)) == 0 else { throw LogError.io(operation: "ftruncate", path: path, errno: errno) }
    }

    func allocate(upTo length: UInt64) throws {
        let current = try size()
        guard length > current else { return }
        let error = hl_allocate(fd, Int64(current), Int64(length - current))
        guard error == 0 else { throw PosixFileSystem.failure("fallocate", path, error) }
    }

    func beginWriteback(offset: UInt64, length: UInt64) {
        _ = hl_begin_writeback(fd, Int64(offset), Int64(length))
    }

    func lockExclusive() throws {
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK { throw LogError.ledgerLocked(path: path) }
            throw LogError.io(operation: "flock", path: path, errno: errno)
        }
    }

    func unlock() { _ = flock(fd, LOCK_UN) }

    func close() {}
}

/// A held `flock`, released explicitly (`LOCK_UN`) before the descriptor is closed:
/// a child process forked in between (before its `exec` closes the `O_CLOEXEC`
/// descriptor) shares the open file description, and closing ours alone would leave
/// the lock held by the child for that moment.
final class PosixLock: LogLock, @unchecked Sendable {
    // Sendable: `fd` is guarded by `lock`.
    private let lock = NSLock()
    private var fd: Int32

    init(fd: Int32) { self.fd = fd }

    func release() {
        lock.lock()
        defer { lock.unlock() }
        if fd >= 0 {
            _ = flock(fd, LOCK_UN)
            Glibc.close(fd)
            fd = -1
        }
    }

    deinit { release() }
}
