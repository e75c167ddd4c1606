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
