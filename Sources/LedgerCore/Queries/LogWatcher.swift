import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LedgerLog

/// Waits for a ledger's log to grow: how a reader (in this process or another) learns
/// of a writer's commits without reading the log again. On Linux it uses inotify on
/// the log file (`IN_MODIFY`), re-checking the length at least every `pollInterval`
/// in case an event is missed; elsewhere, or for a file system without a path, it
/// polls the length every `pollInterval`.
public final class LogWatcher: @unchecked Sendable {
    private let file: any LogFile
    private let pollInterval: Double
    private var inotify: Int32 = -1

    /// Watches the log of `fs`; `pollInterval` bounds each wait between length checks.
    public init(_ fs: any LogFileSystem, pollInterval: Double = 0.05) throws {
        file = try fs.open(LogWriter.logFileName, .readOnly)
        self.pollInterval = max(0.001, pollInterval)
        #if canImport(Glibc)
        let logPath = fs.path + "/" + LogWriter.logFileName
        if fs is PosixFileSystem {
            let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
            if fd >= 0 {
                if inotify_add_watch(fd, logPath, UInt32(IN_MODIFY)) >= 0 { inotify = fd } else { close(fd) }
            }
        }
        #endif
    }

    deinit {
        file.close()
        #if canImport(Glibc)
        if inotify >= 0 { close(inotify) }
        #endif
    }

    /// The log's length now.
    public func length() throws -> UInt64 { try file.size() }

    /// Blocks until the log is longer than `length` or `timeout` seconds passed
    /// (nil: no limit); returns the length then.
    @discardableResult
    public func wait(beyond length: UInt64, timeout: Double? = nil) throws -> UInt64 {
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        while true {
            let now = try file.size()
            if now > length { return now }
            var step = pollInterval
            if let deadline {
                let left = deadline.timeIntervalSinceNow
                if left <= 0 { return now }
                step = min(step, left)
            }
            pause(step)
        }
    }

    private func pause(_ seconds: Double) {
        #if canImport(Glibc)
        if inotify >= 0 {
            var p = pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, Int32(max(1, seconds * 1000)))
            var buffer = [UInt8](repeating: 0, count: 4096)
            while buffer.withUnsafeMutableBytes({ read(inotify, $0.baseAddress, $0.count) }) > 0 {}
            return
        }
        #endif
        Thread.sleep(forTimeInterval: seconds)
    }
}
