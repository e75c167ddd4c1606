import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The one way tests start another program: `posix_spawn` with explicit file
/// actions, instead of Foundation's `Process` (never deallocated on Linux, so every
/// run leaked its pipes, and its `/proc/self/fd` scan reads past glibc's readdir
/// buffer: the ASan suppression this replaced).
///
/// - Standard input, output and error are each a pipe, `/dev/null`, or a path; the
///   child gets exactly fds 0–2 (`addclosefrom_np(3)`: nothing else of the test
///   process leaks into it), and every pipe end is closed as soon as it is done with.
/// - A timeout kills the child (SIGKILL): a hung child fails its test, never the run.
/// - The end is reported as `exited(status)` or `signaled(signal)`.
/// - Waiting is by events: `waitForOutput` reads the child's stdout until a line or
///   text appears (`poll` on the pipe), `wait` blocks in `waitpid`; no test sleeps
///   for time to let a child get somewhere.
/// glibc's GNU extensions the Glibc module does not import (they need _GNU_SOURCE):
/// looked up once by name (glibc ≥ 2.34 has all three).
private enum GNU {
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias Chdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    static func symbol<T>(_ name: String, as: T.Type) -> T {
        guard let p = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { fatalError("glibc has no \(name)") }
        return unsafeBitCast(p, to: T.self)
    }
    nonisolated(unsafe) static let pipe2 = symbol("pipe2", as: Pipe2.self)
    nonisolated(unsafe) static let addCloseFrom = symbol("posix_spawn_file_actions_addclosefrom_np", as: CloseFrom.self)
    nonisolated(unsafe) static let addChdir = symbol("posix_spawn_file_actions_addchdir_np", as: Chdir.self)
}

package final class ChildProcess: @unchecked Sendable {
    // @unchecked: the mutable state is guarded by `lock`; the descriptors are used
    // by one thread at a time (the test's).

    package enum Stream: Sendable {
        case pipe
        case null
        /// Opened for reading (stdin) or writing, truncating (stdout, stderr).
        case path(String)
        /// The test process's own descriptor of the same number.
        case inherit
    }

    package enum Termination: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)
        package var description: String {
            switch self {
            case .exited(let s): "exit status \(s)"
            case .signaled(let s): "signal \(s)"
            }
        }
    }

    package struct SpawnFailed: Error, CustomStringConvertible {
        package let executable: String
        package let errno: Int32
        package var description: String { "posix_spawn \(executable): \(String(cString: strerror(errno)))" }
    }

    package struct TimedOut: Error, CustomStringConvertible {
        package let command: [String]
        package let seconds: Double
        package var description: String { "\(command.joined(separator: " ")) ran over \(seconds) s and was killed" }
    }

    /// A write to a child that died is EPIPE, never the death of the test process.
    private static let ignoreSIGPIPE: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    package let pid: pid_t
    package let command: [String]
    private let lock = NSLock()
    private var stdinFD: Int32?
    private var stdoutFD: Int32?
    private var stderrFD: Int32?
    private var reaped: Termination?
    private var exitedUnreaped = false
    private var killedByTimeout = false
    private var stdoutBuffer: [UInt8] = []
    private var stderrBuffer: [UInt8] = []
    private var watchdog: DispatchWorkItem?
    package let timeout: Double

    /// Starts `executable` with `arguments` (argv[0] is the executable's path).
    /// `environment` replaces the test process's environment when given.
    package init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                currentDirectory: String? = nil, stdin: Stream = .null, stdout: Stream = .pipe, stderr: Stream = .pipe,
                timeout: Double = 600) throws {
        command = [executable] + arguments
        self.timeout = timeout
        _ = Self.ignoreSIGPIPE
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [Int32] = []
        var childEnds: [Int32] = []
        func closeAll() { for fd in parentEnds + childEnds { Glibc.close(fd) } }
        func setUp(_ stream: Stream, fd target: Int32, input: Bool) throws -> Int32? {
            switch stream {
            case .inherit:
                return nil
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", input ? O_RDONLY : O_WRONLY, 0)
                return nil
            case .path(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, input ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                return nil
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard GNU.pipe2(&ends, O_CLOEXEC) == 0 else {
                    let error = errno
                    closeAll()
                    throw SpawnFailed(executable: executable, errno: error)
                }
                let (parent, child) = input ? (ends[1], ends[0]) : (ends[0], ends[1])
                parentEnds.append(parent)
                childEnds.append(child)
                // dup2 clears close-on-exec on the target: the child keeps only 0–2.
                posix_spawn_file_actions_adddup2(&actions, child, target)
                return parent
            }
        }
        let inFD = try setUp(stdin, fd: 0, input: true)
        let outFD = try setUp(stdout, fd: 1, input: false)
        let errFD = try setUp(stderr, fd: 2, input: false)
        _ = GNU.addCloseFrom(&actions, 3)
        if let currentDirectory { _ = GNU.addChdir(&actions, currentDirectory) }

        let env = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        var child: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup($0) } + [nil]
        defer { for p in argv + envp { free(p) } }
        let result = posix_spawn(&child, executable, &actions, nil, argv, envp)
        for fd in childEnds { Glibc.close(fd) }  // the child has its copies
        guard result == 0 else {
            for fd in parentEnds { Glibc.close(fd) }
            throw SpawnFailed(executable: executable, errno: result)
        }
        pid = child
        stdinFD = inFD
        stdoutFD = outFD
        stderrFD = errFD
        // The watchdog: SIGKILL past the timeout. The child is waited for without
        // being reaped first (`waitid(WNOWAIT)`), so its pid cannot be reused by the
        // time the watchdog decides.
        let item = DispatchWorkItem { [pid = child, lock, weak self] in
            lock.lock()
            defer { lock.unlock() }
            guard let self, self.reaped == nil, !self.exitedUnreaped else { return }
            self.killedByTimeout = true
            Glibc.kill(pid, SIGKILL)
        }
        watchdog = item
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: item)
    }

    deinit {
        watchdog?.cancel()
        for fd in [stdinFD, stdoutFD, stderrFD].compactMap({ $0 }) { Glibc.close(fd) }
        if reaped == nil {
            Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
    }

    /// Whether the watchdog killed the child.
    package var timedOut: Bool { lock.withLock { killedByTimeout } }

    // MARK: Standard input

    /// Writes all of `bytes` to the child's stdin (blocking while the pipe is full).
    package func write(_ bytes: [UInt8]) throws {
        guard let fd = stdinFD else { return }
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress!, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SpawnFailed(executable: command[0], errno: errno)
            }
            done += n
        }
    }

    package func write(_ text: String) throws { try write(Array(text.utf8)) }

    /// Closes the child's stdin (it reads end of file).
    package func closeStdin() {
        if let fd = stdinFD { Glibc.close(fd) }
        stdinFD = nil
    }

    // MARK: Standard output

    private enum Output { case stdout, stderr }

    /// Reads what is available on one output pipe into its buffer, waiting at most
    /// until `deadline` for some; false at end of file (or no pipe).
    private func readSome(_ which: Output, until deadline: ContinuousClock.Instant) -> Bool {
        guard let fd = which == .stdout ? stdoutFD : stderrFD else { return false }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { return true }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ms = Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000, 60_000))
            let ready = poll(&p, 1, max(ms, 1))
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { continue }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                Glibc.close(fd)
                if which == .stdout { stdoutFD = nil } else { stderrFD = nil }
                return false
            }
            lock.withLock {
                if which == .stdout { stdoutBuffer += chunk[0..<n] } else { stderrBuffer += chunk[0..<n] }
            }
            return true
        }
    }

    /// Everything read from stdout so far.
    package var output: String { lock.withLock { String(decoding: stdoutBuffer, as: UTF8.self) } }
    /// Everything read from stderr so far (by `waitForStderr`).
    package var errorOutput: String { lock.withLock { String(decoding: stderrBuffer, as: UTF8.self) } }
    /// The complete lines read from stdout so far.
    package var outputLines: [String] {
        let text = output
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()  // the part after the last newline (empty when the text ends with one)
        return lines
    }

    private func wait(for which: Output, seconds: Double, _ condition: (String) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let text = { which == .stdout ? self.output : self.errorOutput }
        while true {
            if condition(text()) { return true }
            guard ContinuousClock.now < deadline, readSome(which, until: deadline) else { return condition(text()) }
        }
    }

    /// Reads stdout until `condition` holds on what was read, stdout ends, or
    /// `seconds` pass (a bound against a hung child, not a pace); true when it held.
    @discardableResult
    package func waitForOutput(seconds: Double = 120, _ condition: (String) -> Bool) -> Bool {
        wait(for: .stdout, seconds: seconds, condition)
    }

    /// Reads stdout until it contains `text`.
    @discardableResult
    package func waitForOutput(containing text: String, seconds: Double = 120) -> Bool {
        wait(for: .stdout, seconds: seconds) { $0.contains(text) }
    }

    /// Reads stderr until it contains `text` (stderr must be a pipe).
    @discardableResult
    package func waitForStderr(containing text: String, seconds: Double = 120) -> Bool {
        wait(for: .stderr, seconds: seconds) { $0.contains(text) }
    }

    /// Reads stdout to its end (the child closed it or died).
    package func readOutputToEnd() {
        while readSome(.stdout, until: .now + .seconds(3600)) {}
    }

    // MARK: The end

    /// Sends `signal` to the child (if it has not been reaped).
    package func kill(_ signal: Int32 = SIGKILL) {
        lock.withLock {
            if reaped == nil { _ = Glibc.kill(pid, signal) }
        }
    }

    /// Waits for the child to end and reaps it (closing its pipes).
    @discardableResult
    package func wait() -> Termination {
        if let reaped = lock.withLock({ reaped }) { return reaped }
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        lock.withLock { exitedUnreaped = true }
        watchdog?.cancel()
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let end: Termination = status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signaled(status & 0x7F)
        lock.withLock { reaped = end }
        closeStdin()
        for fd in [stdoutFD, stderrFD].compactMap({ $0 }) { Glibc.close(fd) }
        stdoutFD = nil
        stderrFD = nil
        return end
    }

    /// The exit status, or 128 + the signal.
    package static func status(_ end: Termination) -> Int32 {
        switch end {
        case .exited(let s): s
        case .signaled(let s): 128 + s
        }
    }

    // MARK: One run

    package struct Result: Sendable {
        package let termination: Termination
        package let stdout: [UInt8]
        package let stderr: [UInt8]
        package var status: Int32 { ChildProcess.status(termination) }
        package var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        package var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// Runs to the end: writes `input` to a stdin pipe (then closes it), reads stdout
    /// and stderr pipes concurrently with that (one `poll` loop: a chatty child never
    /// blocks on a full pipe), waits for the exit. Throws `TimedOut` when the
    /// watchdog had to kill the child.
    package static func run(_ executable: String, _ arguments: [String], input: [UInt8]? = nil,
                           environment: [String: String]? = nil, currentDirectory: String? = nil,
                           stdin: Stream? = nil, stdout: Stream = .pipe, stderr: Stream = .pipe,
                           timeout: Double = 600) throws -> Result {
        let child = try ChildProcess(executable, arguments, environment: environment, currentDirectory: currentDirectory,
                                     stdin: stdin ?? (input == nil ? .null : .pipe), stdout: stdout, stderr: stderr,
                                     timeout: timeout)
        let (out, err) = child.pump(input: input ?? [])
        let end = child.wait()
        if child.timedOut { throw TimedOut(command: child.command, seconds: timeout) }
        return Result(termination: end, stdout: out, stderr: err)
    }

    /// Writes `input` and reads stdout and stderr until both end.
    private func pump(input: [UInt8]) -> ([UInt8], [UInt8]) {
        var out: [UInt8] = [], err: [UInt8] = []
        var written = 0
        if input.isEmpty { closeStdin() } else if let fd = stdinFD { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while stdinFD != nil || stdoutFD != nil || stderrFD != nil {
            var fds: [pollfd] = []
            if let fd = stdinFD { fds.append(pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)) }
            if let fd = stdoutFD { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
            if let fd = stderrFD { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
            if poll(&fds, nfds_t(fds.count), -1) < 0 { if errno == EINTR { continue } else { break } }
            for p in fds where p.revents != 0 {
                if p.fd == stdinFD {
                    let n = input[written...].withUnsafeBytes { Glibc.write(p.fd, $0.baseAddress!, $0.count) }
                    if n > 0 { written += n }
                    if written == input.count || (n < 0 && errno != EAGAIN && errno != EINTR) { closeStdin() }
                } else {
                    let n = chunk.withUnsafeMutableBytes { read(p.fd, $0.baseAddress!, $0.count) }
                    if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                    if n <= 0 {
                        Glibc.close(p.fd)
                        if p.fd == stdoutFD { stdoutFD = nil } else { stderrFD = nil }
                    } else if p.fd == stdoutFD {
                        out += chunk[0..<n]
                    } else {
                        err += chunk[0..<n]
                    }
                }
            }
        }
        return (out, err)
    }
}
