import Foundation
import Synchronization
import LedgerLog

/// A temporary folder removed when the test ends.
package final class TemporaryDirectory {
    package let url: URL
    package init(_ name: String = "ledger") {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("healthledger-tests-\(UUID().uuidString)")
            .appendingPathComponent(name)
    }
    package var path: String { url.path }
    package var fs: PosixFileSystem { PosixFileSystem(path: path) }
    deinit { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
}

/// Deterministic payload bytes for a record: a function of a seed and its length,
/// so tests can check content without keeping copies.
package func payload(seed: UInt64, length: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: (length + 7) & ~7)
    bytes.withUnsafeMutableBytes { b in
        // xorshift64*: cheap enough for gigabytes in a debug build
        var x = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var i = 0
        while i < b.count {
            x ^= x >> 12; x ^= x << 25; x ^= x >> 27
            b.storeBytes(of: x &* 0x2545_F491_4F6C_DD1D, toByteOffset: i, as: UInt64.self)
            i += 8
        }
    }
    bytes.removeLast(bytes.count - length)
    return bytes
}

/// Whether a record's payload equals `expected`.
package func payloadMatches(_ record: borrowing RecordView, _ expected: [UInt8]) -> Bool {
    record.withPayload { $0.withUnsafeBytes { payloadMatches($0, expected) } }
}

/// Whether a payload equals `expected` (memcmp).
package func payloadMatches(_ payload: UnsafeRawBufferPointer, _ expected: [UInt8]) -> Bool {
    guard payload.count == expected.count else { return false }
    if expected.isEmpty { return true }
    return expected.withUnsafeBytes { memcmp($0.baseAddress!, payload.baseAddress!, expected.count) == 0 }
}

/// A fixed clock for deterministic logs: starts at `start` and advances 1 ms per call.
package final class SteppingClock: @unchecked Sendable {
    // @unchecked: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value: Int64
    package init(start: Int64 = 1_767_225_600_000_000_000, step: Int64 = 1_000_000) {
        value = start
        self.step = step
    }
    private let step: Int64  // 2026-01-01T00:00:00Z
    package func next() -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        value += step
        return value
    }
    package var options: LogWriterOptions {
        LogWriterOptions(clock: { [self] in self.next() }, allocationChunk: smallChunk)
    }
    /// A clock function for options built elsewhere.
    package var function: @Sendable () -> Int64 {
        { [self] in self.next() }
    }
}


/// Tests reserve file space in small steps: the zero tail is exercised without
/// copying megabytes of zeros in memory for every trial.
package let smallChunk: UInt64 = 1024
package let testOptions = LogWriterOptions(allocationChunk: smallChunk)

/// A fixed ledger id for deterministic logs.
package let fixedLedgerId = UUID(uuidString: "6C656467-6572-4000-8000-000000000001")!

/// A tiny lock-protected box for closures in tests.
package final class Mutex4Test<T>: @unchecked Sendable {
    // @unchecked: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value: T
    package init(_ value: T) { self.value = value }
    package func with<R>(_ body: (inout T) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// Runs tasks on its own eight OS threads (like a server's event loops), so a
/// test that needs real concurrency does not depend on how busy Dispatch's shared
/// pool is with other tests. The threads live as long as the executor.
package final class ThreadPoolTaskExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs` and `stopping` are guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopping = false

    package init(threads: Int = 8) {
        for i in 0..<threads {
            let thread = Thread { [self] in run() }
            thread.name = "test.executor.\(i)"
            thread.start()
        }
    }

    /// Lets the threads finish once the queue is empty.
    package func shutdown() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty { condition.unlock(); return }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// The repository root and `../shared` beside it (tests that need real exports skip
/// with a clear message when it is absent).
package enum SharedData {
    package static let repositoryRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    package static let root: URL? = {
        let url = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }()

    /// A file under `../shared`, or nil (printing why) when absent.
    package static func file(_ relativePath: String) -> URL? {
        guard let root else {
            print("SKIPPED: ../shared is not beside the repository; \(relativePath) unavailable")
            return nil
        }
        let url = root.appendingPathComponent(relativePath)
        guard FileManager.default.fileExists(atPath: url.path) else {
            print("SKIPPED: \(url.path) is absent")
            return nil
        }
        return url
    }
}

/// Threads that keep the CPUs busy, so that appenders, the flusher and the follower
/// are descheduled at arbitrary points.
package final class CPULoad: Sendable {
    private let running = Atomic<Bool>(true)
    /// Starts `threads` busy threads.
    package init(threads: Int) {
        for _ in 0..<threads {
            let thread = Thread { [self] in
                var x: UInt64 = 1
                while running.load(ordering: .relaxed) {
                    for _ in 0..<10_000 { x = x &* 6364136223846793005 &+ 1442695040888963407 }
                }
                if x == 0 { print("") }
            }
            thread.start()
        }
    }
    /// Ends them.
    package func stop() { running.store(false, ordering: .relaxed) }
}
