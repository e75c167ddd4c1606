import Foundation

/// A thread-safe dictionary that forgets everything when it grows past `limit`, so
/// hostile input (millions of distinct unit strings) cannot grow it without bound.
///
/// It locks with `NSLock` (a pthread mutex) rather than `Synchronization.Mutex`:
/// on Linux the latter waits on a raw futex that ThreadSanitizer cannot see, so every
/// access under it is reported as a race, which would hide real ones.
final class BoundedCache<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [Key: Value] = [:]
    private let limit: Int

    init(limit: Int) {
        precondition(limit > 0, "a cache holds at least one entry")
        self.limit = limit
    }

    /// The value cached for `key`, if any.
    subscript(key: Key) -> Value? {
        lock.lock()
        defer { lock.unlock() }
        return entries[key]
    }

    /// Remembers `value` for `key`, first emptying the cache when it is full.
    func insert(_ value: Value, for key: Key) {
        lock.lock()
        defer { lock.unlock() }
        if entries.count >= limit { entries.removeAll(keepingCapacity: true) }
        entries[key] = value
    }
}
