#if canImport(Glibc)
import Glibc
#endif
import LedgerLog  // PositionalRead

/// Why a file the export names, inside its folder, is not read.
public enum RouteFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A FIFO, a device, a folder, a socket: only regular files are read (opening a
    /// FIFO for reading would wait for a writer).
    case notARegularFile
    /// Larger than a route file may be (`ExportSource.routeFileLimit`): never read.
    case tooLarge(size: UInt64, limit: UInt64)
    /// It is there but could not be opened or read.
    case unreadable(operation: String, errno: Int32)

    public var description: String {
        switch self {
        case .notARegularFile: "not a regular file"
        case .tooLarge(let size, let limit): "\(size) bytes, over the \(limit) a route file may hold"
        case .unreadable(let operation, let errno): "\(operation) failed (errno \(errno))"
        }
    }
}

/// The folder an export's XML lies in, and the files inside it that the export names
/// (`FileReference path="/workout-routes/…"`). A name is resolved — `..`, symlinks
/// and all (`realpath`) — and must stay inside the folder; one that leads out, or
/// names nothing, is *not there*: the two are told apart by no one (no existence
/// oracle), and nothing of a file outside is opened or read.
struct ExportFolder: Sendable {
    /// The folder's real path (no symlinks, no `..`).
    let root: String

    /// nil when `path` does not resolve (it is gone).
    init?(_ path: String) {
        guard let real = Self.realPath(path) else { return nil }
        root = real
    }

    /// `path` with every symlink, `.` and `..` resolved, or nil when it names nothing.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether the real path `real` lies inside the folder (the folder itself is not).
    func contains(real: String) -> Bool {
        let prefix = root.hasSuffix("/") ? root : root + "/"
        return real.count > prefix.count && real.hasPrefix(prefix)
    }

    /// The real path of `path` (absolute, or relative to the working folder) when it
    /// is inside the folder, else nil (missing, or outside).
    func inside(_ path: String) -> String? {
        guard let real = Self.realPath(path), contains(real: real) else { return nil }
        return real
    }

    /// The bytes of the regular file that `relative` (segments already checked: no
    /// `..`, none empty) names inside the folder, or nil when it is not there or
    /// leads outside. Throws `RouteFileError` for a file inside that is not regular
    /// or holds more than `limit` bytes — judged from `fstat`, before any read; a FIFO
    /// is opened without blocking (`O_NONBLOCK`).
    func contents(of relative: String, limit: UInt64) throws(RouteFileError) -> [UInt8]? {
        guard let real = inside(root + "/" + relative) else { return nil }
        // The real path holds no symlink; O_NOFOLLOW refuses one put in its place since.
        let fd = open(real, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let e = errno
            if e == ENOENT || e == ELOOP || e == ENOTDIR { return nil }  // gone, or swapped for a symlink: not there
            throw .unreadable(operation: "open", errno: e)
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .unreadable(operation: "fstat", errno: errno) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw .notARegularFile }
        let size = UInt64(max(0, st.st_size))
        guard size <= limit else { throw .tooLarge(size: size, limit: limit) }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        let read = bytes.withUnsafeMutableBytes { PositionalRead.fill(fd, $0, at: 0) }
        switch read {
        case .success(let n): return n == bytes.count ? bytes : Array(bytes[0..<n])
        case .failure(let e): throw .unreadable(operation: "pread", errno: e.errno)
        }
    }

    /// The segments of a reference (`/workout-routes/route.gpx`, relative to the
    /// folder whatever its leading `/`), or nil when one is `..` or `.`, or empty but
    /// for the leading one: such a name is not looked up at all.
    static func segments(_ reference: String) -> [Substring]? {
        let body = reference.hasPrefix("/") ? reference.dropFirst() : Substring(reference)
        let parts = body.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.isEmpty, !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." || $0.contains("\0") }) else {
            return nil
        }
        return parts
    }
}
