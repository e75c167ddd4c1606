import Foundation

/// Whether an append waits for its records to be durable.
public enum Durability: Sendable {
    /// Return once written and `fdatasync`ed (group commit: concurrent appends share syncs).
    case durable
    /// Return once encoded; the records become durable at the next `sync()` or
    /// durable append (bulk mode, e.g. an import that syncs at the end).
    case deferred
}

/// Options for opening a writer.
public struct LogWriterOptions: Sendable {
    /// Seconds to wait for another writer's lock before `ledgerLocked` (0: fail at once).
    public var lockTimeout: Double
    /// The clock stamping records, in nanoseconds since the Unix epoch. Tests and
    /// golden files inject a fixed one.
    public var clock: @Sendable () -> Int64
    /// Bytes the file grows by, reserved ahead of the log, when an append needs room
    /// (`LogFile.allocate`): appends inside reserved space change no file size, so
    /// their syncs flush data only (about 2× the durable appends/s here). 0 disables.
    public var allocationChunk: UInt64

    public init(lockTimeout: Double = 0, clock: @escaping @Sendable () -> Int64 = LogClock.now,
                allocationChunk: UInt64 = 4 << 20) {
        self.lockTimeout = lockTimeout
        self.clock = clock
        self.allocationChunk = allocationChunk
    }
}

/// The wall clock in nanoseconds since the Unix epoch.
public enum LogClock {
    @Sendable public static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
