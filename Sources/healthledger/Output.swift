import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writing to stdout and stderr without Foundation's buffering surprises, and the one
/// place where stdout's failures are checked.
///
/// Every command's output goes through `line`; a write that fails (a full disk,
/// `/dev/full`, a closed pipe, a closed descriptor) is remembered, later output is
/// dropped, and `commit()` turns it into exit 1 with the reason. `main` calls
/// `commit()` after every command and `ingest` after every acknowledgement, so
/// nothing is reported as done while its report was lost.
enum Output {
    nonisolated(unsafe) private static var buffer: [UInt8] = []
    /// The errno of the first failed write to stdout, if any.
    nonisolated(unsafe) private(set) static var failure: Int32?
    /// Whether stdout was closed when the process started (fd 1 then holds /dev/null).
    nonisolated(unsafe) private static var stdoutWasClosed = false
    /// Whether any byte was handed to stdout.
    nonisolated(unsafe) private static var wroteAny = false

    /// A failed write to stdout, as a command error (exit 1).
    struct WriteFailed: Error, CustomStringConvertible {
        let errno: Int32
        /// What the lost output meant, when it matters ("lines 1-10 were committed but …").
        var detail: String? = nil
        var description: String { "outputFailed: stdout: \(String(cString: strerror(errno)))" + (detail.map { "; " + $0 } ?? "") }
    }

    /// Makes sure fds 0, 1 and 2 are open before any file is opened, so that a ledger
    /// file can never become stdout (`healthledger … >&-` would otherwise write output
    /// into the log). A closed stdout is reported when output is written (EBADF);
    /// SIGPIPE is ignored so that a closed pipe is a write error we report (exit 1),
    /// not a silent death.
    static func prepare() {
        signal(SIGPIPE, SIG_IGN)
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            let opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)
            if opened >= 0, opened != fd { _ = dup2(opened, fd); _ = close(opened) }
            if fd == 1 { stdoutWasClosed = true }
        }
    }

    /// Appends a line to stdout (buffered; flushed at exit and every 64 KiB).
    static func line(_ text: String) {
        guard failure == nil else { return }
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Appends a line built in place as bytes (the hot path of `query --json`: no
    /// `String` per sample).
    static func line(building body: (inout [UInt8]) -> Void) {
        guard failure == nil else { return }
        body(&buffer)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Appends bytes built in place (whole lines, each with its line end).
    static func bytes(building body: (inout [UInt8]) -> Void) {
        guard failure == nil else { return }
        body(&buffer)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Writes `bytes` (whole lines) after what is buffered, straight from the caller's
    /// buffer: a writer thread's batch of lines (a megabyte or two) is not copied into
    /// the buffer first.
    static func writeLines(_ bytes: [UInt8]) {
        guard failure == nil, !bytes.isEmpty else { return }
        flush()
        guard failure == nil else { return }
        wroteAny = true
        if stdoutWasClosed { failure = EBADF; return }
        failure = bytes.withUnsafeBytes { writeAll($0, to: 1) }
    }

    /// Writes buffered stdout; a failure is remembered for `commit()`.
    static func flush() {
        defer { buffer.removeAll(keepingCapacity: true) }
        guard failure == nil, !buffer.isEmpty else { return }
        wroteAny = true
        if stdoutWasClosed { failure = EBADF; return }
        failure = buffer.withUnsafeBytes { writeAll($0, to: 1) }
    }

    /// Writes all of `bytes` to `fd` (resuming after EINTR and short writes); the errno
    /// of a failed write, EIO for one that wrote nothing, or nil when all were written.
    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Int32? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, base + offset, bytes.count - offset)
            if n < 0, errno == EINTR { continue }
            if n < 0 { return errno }
            if n == 0 { return EIO }
            offset += n
        }
        return nil
    }

    /// Flushes stdout and throws if any write to it failed since the process began.
    static func commit() throws(WriteFailed) {
        flush()
        if let failure { throw WriteFailed(errno: failure) }
    }

    /// The last check at exit: flush, then close stdout so that an error only `close`
    /// reports (a deferred write on a network file system) is caught too.
    static func finish() throws(WriteFailed) {
        try commit()
        guard wroteAny else { return }
        if close(1) != 0 {
            let e = errno
            if e != EINTR { failure = e; throw WriteFailed(errno: e) }
        }
    }

    /// Writes a line to stderr at once (after stdout's buffer, to keep their order).
    /// A failure to write to stderr is not reported: there is nowhere left to report it.
    static func error(_ text: String) {
        flush()
        let bytes = Array((text + "\n").utf8)
        _ = bytes.withUnsafeBytes { writeAll($0, to: 2) }
    }

    /// Whether stderr is a terminal (progress is shown only then).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }
}
