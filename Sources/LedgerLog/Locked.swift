import Foundation

/// A value guarded by a pthread mutex (`NSLock`): the one lock style of the log layer
/// and the layers above it.
///
/// Not `Synchronization.Mutex`: on Linux that waits on a raw futex which
/// ThreadSanitizer cannot see, so every access under it is reported as a data race,
/// and the CI's ThreadSanitizer run would be noise.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// A value guarded by a pthread mutex, with a condition variable (`NSCondition`) for
/// a thread of our own that sleeps until the value says there is work for it (the
/// log writer's flusher). The same lock style as `Locked`: a pthread mutex and a
/// pthread condition, both of which ThreadSanitizer sees.
package final class LockedCondition<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched with `condition` locked.
    private let condition = NSCondition()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        condition.lock()
        defer { condition.unlock() }
        return try body(&value)
    }

    /// Sleeps (the lock released meanwhile) until `ready` holds, then runs `body`;
    /// `ready` and `body` both run with the lock held, so nothing changes between
    /// them. Only threads of our own wait here, never a Swift-concurrency thread.
    package func wait<Result>(until ready: (inout Value) -> Bool, then body: (inout Value) throws -> Result) rethrows -> Result {
        condition.lock()
        defer { condition.unlock() }
        while !ready(&value) { condition.wait() }
        return try body(&value)
    }

    /// Runs `body` with the lock held; `body` may call its second argument to sleep
    /// with the lock released until `signal()` or until that many seconds pass (nil:
    /// no time limit), and must check the value again after each sleep. For a thread
    /// of our own whose wait has a deadline (`DeadlineThread`).
    package func withLockWaiting<Result>(_ body: (inout Value, (Double?) -> Void) throws -> Result) rethrows -> Result {
        condition.lock()
        defer { condition.unlock() }
        let condition = self.condition
        return try body(&value) { seconds in
            if let seconds {
                _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
            } else {
                condition.wait()
            }
        }
    }

    /// Wakes the thread waiting in `wait(until:then:)`, if any; call it after a
    /// change that makes its `ready` hold.
    package func signal() {
        condition.signal()
    }

    /// Takes and releases the lock: everything an earlier holder did before
    /// releasing it happens before what the caller does next. (A task resumed from
    /// one of our threads is ordered after it by the continuation, but
    /// ThreadSanitizer does not see that edge on Linux; this one it sees.)
    package func synchronize() {
        condition.lock()
        condition.unlock()
    }
}
