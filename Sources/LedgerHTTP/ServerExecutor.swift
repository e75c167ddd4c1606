import Foundation
import Synchronization

/// The threads a server's handlers run on: a task executor of its own (SE-0417), so
/// that a request's work — its handler, and the default actors it calls, which run on
/// the task's preferred executor — never waits for Swift's shared cooperative pool,
/// which other work in the process (a long computation, a blocking call) may hold.
///
/// Each server has its own, so that one server's slow handler (a report's full
/// verify) never delays another's.
///
/// Invariant: every job enqueued runs exactly once, on one of `threadCount` threads,
/// in the order enqueued per thread pick-up; the threads live as long as the process.
public final class ServerExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `queue` is guarded by `condition`'s lock; the rest is immutable.
    private let condition = NSCondition()
    private var queue: [UnownedJob] = []
    private var head = 0
    public let threadCount: Int

    /// `threads` threads (at least 2: one handler may wait on another's commit).
    public init(threads: Int = max(2, ProcessInfo.processInfo.activeProcessorCount)) {
        threadCount = max(2, threads)
        for i in 0..<threadCount {
            let thread = Thread { [unowned self] in self.run() }
            thread.name = "http-handler-\(i)"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        condition.lock()
        queue.append(unowned)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while head == queue.count { condition.wait() }
            let job = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 1024 && head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    // Threads are never given back: a server lives as long as its process (tests make
    // a few dozen; each thread waits on its condition when idle).
}
