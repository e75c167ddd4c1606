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

    public init(path: String) {
        self.path = path
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
        access(full(name), F_OK) == 0
    }

    public func open(_ name: String, _ mode: LogFileOpenMode) throws -> any LogFile {
        let flags: Int32
        switch mode {
        case .readOnly: flags = O_RDONLY
        case .readWrite: flags = O_RDWR
        case .createNew: flags = O_RDWR | O_CREAT | O_EXCL
        case .replace: flags = O_RDWR | O_CREAT | O_TRUNC
        }
        let fd = Glibc.open(full(name), flags | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == ENOENT { throw LogError.ledgerNotFound(path: full(name)) }
            throw LogError.io(operation: "open", path: full(name), errno: errno)
        }
        return PosixFile(fd: fd, path: full(name))
    }

    public func createSubfolder(_ name: String) throws {
        if mkdir(full(name), 0o700) != 0 && errno != EEXIST {
            throw LogError.io(operation: "mkdir", path: full(name), errno: errno)
        }
    }

    public func syncFolder(_ name: String?) throws {
        try Self.syncDirectory(name.map(full) ?? path)
    }

    static func syncDirectory(_ directory: String) throws {
        let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw LogError.io(operation: "open directory", path: directory, errno: errno) }
        defer { Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw LogError.io(operation: "fsync directory", path: directory, errno: errno) }
    }

    public func rename(_ from: String, to: String) throws {
        guard Glibc.rename(full(from), full(to)) == 0 else {
            throw LogError.io(operation: "rename", path: full(from), errno: errno)
        }
    }

    public func remove(_ name: String) throws {
        if unlink(full(name)) != 0 && errno != ENOENT {
            throw LogError.io(operation: "unlink", path: full(name), errno: errno)
        }
    }

    public func list(_ subfolder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: full(subfolder))) ?? []).sorted()
    }

    public func lockExclusive(timeout: Double) throws -> any LogLock {
        let lockPath = full("LOCK")
        let fd = Glibc.open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw LogError.io(operation: "open", path: lockPath, errno: errno) }
        let deadline = Date().addingTimeInterval(timeout)
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
        return PosixLock(fd: fd)
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

    func size() throws -> UInt64 {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw LogError.io(operation: "fstat", path: path, errno: errno) }
        return UInt64(st.st_size)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw LogError.io(operation: "pread", path: path, errno: errno)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw LogError.io(operation: "pwrite", path: path, errno: errno)
            }
            done += n
        }
    }

    func sync() throws {
        guard fdatasync(fd) == 0 else { throw LogError.io(operation: "fdatasync", path: path, errno: errno) }
    }

    func truncate(to length: UInt64) throws {
        guard ftruncate(fd, off_t(length)) == 0 else { throw LogError.io(operation: "ftruncate", path: path, errno: errno) }
    }

    func allocate(upTo length: UInt64) throws {
        let current = try size()
        guard length > current else { return }
        let error = hl_allocate(fd, Int64(current), Int64(length - current))
        guard error == 0 else { throw LogError.io(operation: "fallocate", path: path, errno: error) }
    }

    func beginWriteback(offset: UInt64, length: UInt64) {
        _ = hl_begin_writeback(fd, Int64(offset), Int64(length))
    }

    func close() {}
}

/// A held `flock`; closing the descriptor releases it.
final class PosixLock: LogLock, @unchecked Sendable {
    // Sendable: `fd` is guarded by `lock`.
    private let lock = NSLock()
    private var fd: Int32

    init(fd: Int32) { self.fd = fd }

    func release() {
        lock.lock()
        defer { lock.unlock() }
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }

    deinit { release() }
}
