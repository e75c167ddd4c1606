import Glibc

/// The steps of a durable write, for tests that stop a write as `kill -9` would
/// (`KeyStore.crashAt`): after each, what is on disk is what that step left.
enum WriteStep: CaseIterable, Sendable, CustomStringConvertible {
    /// `.new` created, empty.
    case created
    /// Half of `.new` written.
    case halfWritten
    /// `.new` written whole, not yet fsynced.
    case written
    /// `.new` fsynced and closed, not yet renamed.
    case synced
    /// Renamed over `keys.bin`, the folder not yet fsynced.
    case renamed
    /// The folder fsynced: the write is complete, the call has not yet returned.
    case folderSynced

    var description: String {
        switch self {
        case .created: "created"
        case .halfWritten: "halfWritten"
        case .written: "written"
        case .synced: "synced"
        case .renamed: "renamed"
        case .folderSynced: "folderSynced"
        }
    }
}

/// The few POSIX file operations the key files need, each failure a `KeyStoreError`.
/// No state: every call takes its paths.
enum PosixFile {
    /// A file's permission bits (mode & 07777) and whether it is the kind asked for,
    /// without following a final symbolic link; nil when nothing is there.
    static func lstatMode(_ path: String) throws(KeyStoreError) -> (mode: UInt32, isDirectory: Bool, isRegular: Bool)? {
        var info = stat()
        guard unsafe lstat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw .io(operation: "lstat", path: path, errno: errno)
        }
        let type = UInt32(info.st_mode) & UInt32(S_IFMT)
        return (UInt32(info.st_mode) & 0o7777, type == UInt32(S_IFDIR), type == UInt32(S_IFREG))
    }

    /// Refuses `mode` when its group or others have any permission.
    static func refuseUnprotected(_ path: String, mode: UInt32) throws(KeyStoreError) {
        guard mode & 0o077 == 0 else { throw .unprotected(path: path, mode: mode) }
    }

    /// Creates `path` new (O_CREAT|O_EXCL|O_NOFOLLOW: never an existing file, never
    /// through a symbolic link) with mode 0600, writes `bytes`, fsyncs and closes it.
    /// On a failure after creating it, removes it. EEXIST is returned as nil so the
    /// caller can name its own error.
    ///
    /// `crash` (tests only) stops as a `kill -9` would at that step: the file is left
    /// as it is, and `KeyStoreError.simulatedCrash` thrown.
    static func createNew(_ path: String, bytes: [UInt8], crash: WriteStep? = nil) throws(KeyStoreError) -> Bool {
        let fd = unsafe open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { return false }
            throw .io(operation: "create", path: path, errno: errno)
        }
        func crashed(at step: WriteStep) -> KeyStoreError? {
            guard step == crash else { return nil }
            close(fd)  // as the kernel does for a killed process
            return .io(operation: "simulated crash after \(step)", path: path, errno: 0)
        }
        if let stop = crashed(at: .created) { throw stop }
        var failure: KeyStoreError?
        // The umask may take bits away, never add: still, 0600 exactly, whatever it is.
        if fchmod(fd, 0o600) != 0 { failure = .io(operation: "fchmod 0600", path: path, errno: errno) }
        var written = 0
        while failure == nil && written < bytes.count {
            if written >= bytes.count / 2, let stop = crashed(at: .halfWritten) { throw stop }
            let limit = crash == .halfWritten && written < bytes.count / 2 ? bytes.count / 2 : bytes.count
            let n = unsafe bytes.withUnsafeBytes { unsafe write(fd, $0.baseAddress! + written, limit - written) }
            if n > 0 {
                written += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                failure = .io(operation: "write", path: path, errno: n == 0 ? EIO : errno)
            }
        }
        if failure == nil, let stop = crashed(at: .written) { throw stop }
        if failure == nil && fsync(fd) != 0 { failure = .io(operation: "fsync", path: path, errno: errno) }
        if close(fd) != 0 && failure == nil { failure = .io(operation: "close", path: path, errno: errno) }
        if let failure {
            unsafe unlink(path)
            throw failure
        }
        if crash == .synced { throw .io(operation: "simulated crash after synced", path: path, errno: 0) }
        return true
    }

    /// Writes `bytes` at `offset` of the existing file `path` (an addition at the end of
    /// its whole parts, Y8) and fsyncs it: durable when this returns.
    ///
    /// `crash` (tests only) stops as a `kill -9` would: after `.created` nothing is
    /// written; after `.halfWritten` half; after `.written` all, not fsynced; after any
    /// later step all, fsynced.
    static func append(_ bytes: [UInt8], to path: String, at offset: Int, crash: WriteStep? = nil) throws(KeyStoreError) {
        let fd = unsafe open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw .io(operation: "open for an addition", path: path, errno: errno) }
        defer { close(fd) }
        let stop = KeyStoreError.io(operation: "simulated crash after \(crash.map { "\($0)" } ?? "")", path: path, errno: 0)
        if crash == .created { throw stop }
        let count = crash == .halfWritten ? bytes.count / 2 : bytes.count
        var written = 0
        while written < count {
            let n = unsafe bytes.withUnsafeBytes { unsafe pwrite(fd, $0.baseAddress! + written, count - written, off_t(offset + written)) }
            if n > 0 {
                written += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                throw .io(operation: "write", path: path, errno: n == 0 ? EIO : errno)
            }
        }
        if crash == .halfWritten || crash == .written { throw stop }
        guard fdatasync(fd) == 0 else { throw .io(operation: "fsync", path: path, errno: errno) }
        if crash != nil { throw stop }
    }

    /// Cuts the file `path` to `length` bytes and fsyncs it (an addition cut short, Y8).
    static func truncate(_ path: String, to length: Int) throws(KeyStoreError) {
        let fd = unsafe open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw .io(operation: "open to cut an addition short", path: path, errno: errno) }
        defer { close(fd) }
        guard ftruncate(fd, off_t(length)) == 0 else { throw .io(operation: "ftruncate", path: path, errno: errno) }
        guard fsync(fd) == 0 else { throw .io(operation: "fsync", path: path, errno: errno) }
    }

    /// fsyncs a folder, so that a rename or a new entry in it is durable.
    static func syncFolder(_ path: String) throws(KeyStoreError) {
        let fd = unsafe open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(operation: "open folder", path: path, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .io(operation: "fsync folder", path: path, errno: errno) }
    }

    /// The next `count` bytes of an open file (fewer only at its end), reading until then.
    static func read(_ fd: Int32, count: Int, path: String) throws(KeyStoreError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: max(count, 1))
        var filled = 0
        while filled < count {
            let n = unsafe bytes.withUnsafeMutableBytes { unsafe Glibc.read(fd, $0.baseAddress! + filled, count - filled) }
            if n > 0 {
                filled += n
            } else if n == 0 {
                break
            } else if errno != EINTR {
                throw .io(operation: "read", path: path, errno: errno)
            }
        }
        bytes.removeLast(bytes.count - filled)
        return bytes
    }

    /// The folder part of `path` ("." when there is none).
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `folder` + "/" + `name`.
    static func join(_ folder: String, _ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }
}
