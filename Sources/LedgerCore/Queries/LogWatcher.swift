import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LedgerLog

/// Waits for activity on a ledger's log: how a reader (in this process or another)
/// learns of a writer's commits without reading the log again.
///
/// The log's length alone is not enough: a writer reserves space ahead (zeros, 4 MiB
/// at a time) and writes inside it, and a clean close gives the reserve back. So on
/// Linux the watcher uses inotify on the log file (`IN_MODIFY`: any write), and
/// otherwise (or for a file system without a path) compares the length and the
/// modification time every `pollInterval`. A wake-up may be spurious; a caller
/// re-reads the log's new events (cheap when there are none) after each.
package final class LogWatcher: @unchecked Sendable {
    private let file: any LogFile
    private let path: String?
    private let pollInterval: Double
    private var inotify: Int32 = -1
    private var last: Mark
    /// A store's own signal (PostgreSQL: LISTEN/NOTIFY); the length is polled besides.
    private let signal: (any LogChangeSignal)?

    struct Mark: Equatable {
        var size: UInt64
        var modified: Int64
    }

    /// Watches the log of `fs`; `pollInterval` is the fallback poll's period.
    package init(_ fs: any LogFileSystem, pollInterval: Double = 0.05) throws {
        file = try fs.open(LogWriter.logFileName, .readOnly)
        self.pollInterval = max(0.001, pollInterval)
        path = fs is PosixFileSystem ? fs.path + "/" + LogWriter.logFileName : nil
        signal = try fs.makeChangeSignal()
        last = Mark(size: 0, modified: 0)
        #if canImport(Glibc)
        if let path {
            let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
            if fd >= 0 {
                if inotify_add_watch(fd, path, UInt32(IN_MODIFY)) >= 0 { inotify = fd } else { close(fd) }
            }
        }
        #endif
        last = try mark()
    }

    deinit {
        file.close()
        #if canImport(Glibc)
        if inotify >= 0 { close(inotify) }
        #endif
    }

    private func mark() throws -> Mark {
        var m = Mark(size: try file.size(), modified: 0)
        #if canImport(Glibc)
        if let path {
            var st = stat()
            if stat(path, &st) == 0 { m.modified = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec) }
        }
        #endif
        return m
    }

    /// Blocks until the log was written to since the last call (or since the watcher
    /// was made), or `timeout` seconds passed. Returns whether there was activity.
    @discardableResult
    package func waitForActivity(timeout: Double) throws -> Bool {
        let deadline = Date().addingTimeInterval(max(0, timeout))
        while true {
            #if canImport(Glibc)
            if inotify >= 0 {
                var p = pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)
                let left = deadline.timeIntervalSinceNow
                let ready = poll(&p, 1, Int32(max(0, min(left, 3600)) * 1000))
                if ready > 0 {
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    while buffer.withUnsafeMutableBytes({ read(inotify, $0.baseAddress, $0.count) }) > 0 {}
                    last = try mark()
                    return true
                }
                if deadline.timeIntervalSinceNow <= 0 { return false }
                continue
            }
            #endif
            if let signal {
                // A wake-up only: a signal that was lost shows as a longer log within a second.
                if try signal.waitForSignal(timeout: min(1, max(0, deadline.timeIntervalSinceNow))) {
                    last = try mark()
                    return true
                }
                let now = try mark()
                if now != last {
                    last = now
                    return true
                }
                if deadline.timeIntervalSinceNow <= 0 { return false }
                continue
            }
            let now = try mark()
            if now != last {
                last = now
                return true
            }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return false }
            Thread.sleep(forTimeInterval: min(pollInterval, left))
        }
    }
}
