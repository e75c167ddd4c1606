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
    /// `create` only: make a log of format version 2, which may hold sealed records
    /// (issue 32). Plain logs stay version 1, readable by every earlier release.
    public var sealedFormat: Bool
    /// The data keys the writer seals records under (by id); nil: the writer refuses
    /// any sealed record (`sealKeyUnavailable`).
    public var recordKeys: (any RecordKeys)?
    /// The writer's salt (`SealedRecord`); nil, as everywhere but in golden files and
    /// tests: drawn at random when the writer opens.
    public var sealSalt: UInt32?
    /// `create` only: the file header's `createdAt` (nil: the clock's time). A copy of
    /// another ledger's history (`encrypt`) begins when its source began, so that its
    /// events keep their times (`recordedAt` never precedes `createdAt` nor decreases).
    public var createdAt: Int64?

    public init(lockTimeout: Double = 0, clock: @escaping @Sendable () -> Int64 = LogClock.now,
                allocationChunk: UInt64 = 4 << 20, sealedFormat: Bool = false, recordKeys: (any RecordKeys)? = nil,
                sealSalt: UInt32? = nil) {
        self.lockTimeout = lockTimeout
        self.clock = clock
        self.allocationChunk = allocationChunk
        self.sealedFormat = sealedFormat
        self.recordKeys = recordKeys
        self.sealSalt = sealSalt
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
