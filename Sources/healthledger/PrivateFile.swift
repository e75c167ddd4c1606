import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file written whole for its owner alone: mode 0600, as the ledger's own files (a
/// report holds the whole profile). Written to a new temporary file beside it —
/// created exclusive with mode 0600, set to exactly 0600 whatever the umask, synced —
/// then renamed over the path, so a reader sees the old file or the new one, and a
/// file already there is replaced, its mode with it.
enum PrivateFile {
    /// The mode of the file written.
    static let mode: mode_t = 0o600

    /// Writes `bytes` to `path`. Throws `CLIError` (exit 1) naming `what`, the path and
    /// why; nothing is left behind then (the temporary file is removed).
    static func write(_ bytes: [UInt8], to path: String, what: String) throws {
        let temporary = path + ".tmp-\(getpid())"
        func failure(_ e: Int32) -> CLIError {
            CLIError(status: ExitStatus.failure, message: "\(what): cannot write \(path): \(String(cString: strerror(e)))")
        }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { throw failure(errno) }
        var error: Int32 = fchmod(fd, mode) == 0 ? 0 : errno
        if error == 0 {
            error = bytes.withUnsafeBytes { raw -> Int32 in
                var offset = 0
                while offset < raw.count {
                    let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                    if n < 0, errno == EINTR { continue }
                    if n < 0 { return errno }
                    if n == 0 { return EIO }
                    offset += n
                }
                return 0
            }
        }
        if error == 0, fsync(fd) != 0 { error = errno }
        if close(fd) != 0, error == 0 { error = errno }
        if error == 0, rename(temporary, path) != 0 { error = errno }
        if error != 0 {
            unlink(temporary)
            throw failure(error)
        }
    }
}
