import Foundation
import LedgerChecksums

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

/// What opening for writing found and did at the tail of the log.
public struct RecoveryReport: Sendable, Equatable {
    /// Where validation started (a checkpoint, or just after the file header).
    public let scannedFrom: UInt64
    /// A torn tail that was cut, if any.
    public let cut: TailCut?
}

/// A torn tail cut at open: the bytes are kept in `quarantineFile`, not destroyed.
public struct TailCut: Sendable, Equatable, CustomStringConvertible {
    /// Where the cut starts (the start of the first incomplete batch).
    public let offset: UInt64
    /// How many bytes were cut.
    public let length: UInt64
    /// The first failed rule in the cut bytes.
    public let damage: LogDamage
    /// The file (relative to the ledger folder) holding the cut bytes.
    public let quarantineFile: String

    /// `cut 123 bytes from byte 4567 (…) into quarantine/…`.
    public var description: String {
        "cut \(length) bytes from byte \(offset) (\(damage.kind.rawValue)) into \(quarantineFile)"
    }
}

/// The single writer of a ledger's log.
///
/// - One writer at a time: the writer holds the folder's exclusive lock from open to
///   close; another process or handle gets `LogError.ledgerLocked`.
/// - `append` assigns dense sequence numbers and returns once the batch is durable
///   (written and `fdatasync`ed). Appends from many tasks share one sync (group
///   commit): the writer's own flusher thread writes everything encoded so far,
///   syncs once, and wakes every append the sync covered. An awaiting append is a
///   suspended continuation: no Swift-concurrency thread ever blocks in a write or a
///   sync, and none waits behind the sealing (CRCs, SHA-256) of another's batch.
/// - After any failed write or sync the writer is poisoned: every later call throws
///   `writerPoisoned` until the ledger is reopened, whose recovery finds a
///   consistent log. A failed fsync is never retried.
///
/// Invariants: `durableLength ≤ writtenLength ≤ encodedLength`; every batch's
/// `syncedLength` field is a `durableLength` that was true when it was encoded;
/// `recordedAt` never decreases; `writtenLength` and `durableLength` only ever
/// count bytes that are in the file (what a reader may be told of).
/// `checkInvariants()` checks these and the rest of the state's
/// (`LogWriter.Invariant`, LogWriter+Invariants.swift).
package final class LogWriter: Sendable {
    /// The log file's name in the ledger folder.
    package static let logFileName = "ledger.log"

    /// The decoded file header.
    package let header: LogFileHeader
    /// What opening found at the tail (nil for a new ledger).
    package let recovery: RecoveryReport?

    private let fs: any LogFileSystem
    private let file: any LogFile
    private let lock: any LogLock
    private let clock: @Sendable () -> Int64
    private let allocationChunk: UInt64
    /// The writer's state, and the condition its flusher thread sleeps on.
    private let state: LockedCondition<State>
    /// Held by `enqueue` (and `close`, for the seal) from reading the chain head to
    /// publishing the sealed batch: it orders sealers, and only sealers take it, so
    /// the state lock is never held across a batch's CRCs and SHA-256. (A bare
    /// `NSLock`, the mutex `Locked` wraps: it guards an order, not a value, and a
    /// `Locked<Void>`'s zero-sized value looks to ThreadSanitizer like an access
    /// to the next object.)
    private let sealing = NSLock()

    /// Runs `body` holding the sealing lock.
    private func whileSealing<Result>(_ body: () throws -> Result) rethrows -> Result {
        sealing.lock()
        defer { sealing.unlock() }
        return try body()
    }

    private struct Waiter {
        let end: UInt64
        let durable: Bool
        let continuation: CheckedContinuation<Void, Error>
    }

    /// `close`'s last step, done by the flusher: the seal written and synced, the
    /// reserve given back, the checkpoint saved.
    private struct CloseWork {
        let bytes: [UInt8]
        let offset: UInt64
        let checkpoint: LogCheckpoint
        let expectedSize: UInt64
        let continuation: CheckedContinuation<Void, Error>
    }

    private struct State {
        var nextSequence: UInt64
        var lastRecordedAt: Int64
        var link: SHA256Digest
        /// Bytes sealed and queued (what the next batch's offset is).
        var encodedLength: UInt64
        /// Bytes in the file (`pwrite` returned): the most any reader may be told of.
        var writtenLength: UInt64
        /// Bytes in the file and covered by a returned `fdatasync`.
        var durableLength: UInt64
        var pending: [[UInt8]] = []
        var pendingBytes = 0
        var waiters: [Waiter] = []
        /// A deferred append passed the write-behind mark: write without a waiter.
        var writeBehindRequested = false
        /// `close` handed the seal to the flusher.
        var closing: CloseWork?
        /// The flusher thread exists (it is started by the first work it gets).
        var flusherStarted = false
        /// The flusher thread is asleep on the condition: new work must signal it.
        var flusherAsleep = false
        /// The flusher thread must end (closed, abandoned, or the writer is gone).
        var flusherStopping = false
        /// The file's physical size: the log plus space reserved ahead of it.
        var allocatedLength: UInt64
        /// The file size this writer left (what `fstat` must report before each
        /// write, W7). Only the flusher thread changes the file once the writer is open.
        var physicalLength: UInt64
        /// Reserving space failed (a nearly full disk): plain appends from now on.
        var allocationFailed = false
        var poisoned: LogError?
        var closed = false
        var checkpoint: LogCheckpoint

        /// Whether the flusher has something to do now.
        var flusherHasWork: Bool {
            guard poisoned == nil else { return false }
            if closing != nil { return true }
            if needsSync { return true }
            return !pending.isEmpty && (writeBehindRequested || !waiters.isEmpty)
        }

        /// Someone waits for bytes to be durable that are not yet.
        var needsSync: Bool {
            waiters.contains { $0.durable && $0.end > durableLength }
        }

        /// Whether `end` is written (or durable) already.
        func covers(_ end: UInt64, durable: Bool) -> Bool {
            (durable ? durableLength : writtenLength) >= end
        }
    }

    /// Bytes of deferred appends that start a background write.
    static let writeBehindBytes = 2 << 20
    /// Bytes of deferred appends beyond which appends wait for the writes (back-pressure):
    /// twice the write-behind, so a busy flusher holds back at most this much memory
    /// (an import's peak RSS counts it).
    static let pendingBytesMax = 4 << 20

    private init(fs: any LogFileSystem, file: any LogFile, lock: any LogLock, header: LogFileHeader,
                 options: LogWriterOptions, length: UInt64, allocated: UInt64, checkpoint: LogCheckpoint,
                 recovery: RecoveryReport?) {
        self.fs = fs
        self.file = file
        self.lock = lock
        self.header = header
        self.clock = options.clock
        self.allocationChunk = options.allocationChunk
        self.recovery = recovery
        state = LockedCondition(State(nextSequence: checkpoint.nextSequence, lastRecordedAt: checkpoint.lastRecordedAt,
                                      link: checkpoint.link, encodedLength: length, writtenLength: length, durableLength: length,
                                      allocatedLength: max(allocated, length), physicalLength: max(allocated, length),
                                      checkpoint: checkpoint))
    }

    /// A writer dropped without `close` or `abandon` (a test's simulated crash) ends
    /// its flusher thread; the thread holds the writer only while it flushes.
    deinit {
        state.withLock { $0.flusherStopping = true }
        state.signal()
    }

    /// Creates a new ledger: the folder (0700), the log (0600) with its header,
    /// durably (file and folder synced) before returning.
    package static func create(_ fs: any LogFileSystem, ledgerId: UUID = UUID(),
                              options: LogWriterOptions = LogWriterOptions()) throws -> LogWriter {
        // Also for an existing folder: it is made 0700.
        try fs.createFolder()
        let lock = try fs.lockExclusive(timeout: options.lockTimeout)
        guard !fs.exists(logFileName) else {
            lock.release()
            throw LogError.ledgerExists(path: fs.path)
        }
        do {
            let header = LogFileHeader(formatVersion: LogFormat.formatVersion, minReaderVersion: LogFormat.readableVersion,
                                       ledgerId: ledgerId, createdAt: options.clock())
            let bytes = header.encoded()
            let file = try fs.open(logFileName, .createNew)
            try file.lockExclusive()
            try bytes.withUnsafeBytes { try file.write($0, at: 0) }
            try file.sync()
            try fs.syncFolder(nil)
            let genesis = BatchChain.genesis(fileHeader: bytes)
            let checkpoint = LogCheckpoint(coveredLength: UInt64(LogFormat.fileHeaderLength), nextSequence: 1,
                                           lastRecordedAt: header.createdAt, link: genesis, entries: [])
            return LogWriter(fs: fs, file: file, lock: lock, header: header, options: options,
                             length: UInt64(LogFormat.fileHeaderLength), allocated: UInt64(LogFormat.fileHeaderLength),
                             checkpoint: checkpoint, recovery: nil)
        } catch {
            lock.release()
            throw error
        }
    }

    /// Opens an existing ledger for writing: takes the lock, validates the log from
    /// the last checkpoint to the end (checksums and chain), and cuts a torn tail
    /// (keeping the bytes in `quarantine/`). Damage the later batches prove was once
    /// durable is never cut: it throws `LogError.damaged` naming offset and sequence.
    package static func open(_ fs: any LogFileSystem, options: LogWriterOptions = LogWriterOptions()) throws -> LogWriter {
        guard fs.exists(logFileName) else { throw LogError.ledgerNotFound(path: fs.path) }
        let lock = try fs.lockExclusive(timeout: options.lockTimeout)
        do {
            let file = try fs.open(logFileName, .readWrite)
            // W1: the log itself is locked too, so a writer that got past a deleted
            // or replaced LOCK still cannot write beside us.
            try file.lockExclusive()
            do {
                return try openLocked(fs, file: file, lock: lock, options: options)
            } catch {
                file.unlock()
                throw error
            }
        } catch {
            lock.release()
            throw error
        }
    }

    /// `open` once both locks are held: I3, recovery of the tail, the writer.
    private static func openLocked(_ fs: any LogFileSystem, file: any LogFile, lock: any LogLock,
                                   options: LogWriterOptions) throws -> LogWriter {
        let opened = try LogOpening(fs: fs, file: file)
        // H3: append only to a format this code writes.
        guard opened.header.formatVersion == LogFormat.formatVersion else {
            throw LogError.unsupportedFormatVersion(found: opened.header.formatVersion,
                                                    minReader: opened.header.minReaderVersion,
                                                    supported: LogFormat.formatVersion)
        }
        // I3: a log shorter than a length known durable lost acknowledged bytes:
        // damage, never a torn tail to cut.
        let knownDurable = LogCheckpoint.knownDurableLength(fs, ledgerId: opened.header.ledgerId, seenLength: opened.size) ?? 0
        if knownDurable > opened.size {
            throw LogError.damaged(LogDamage(kind: .truncatedBelowDurable, offset: opened.size,
                                             length: knownDurable - opened.size, sequence: nil, inDurablePrefix: true))
        }
        var checkpoint = LogCheckpoint.load(fs, log: file, logLength: opened.size, ledgerId: opened.header.ledgerId,
                                            genesis: opened.genesis)
            ?? LogCheckpoint(coveredLength: UInt64(LogFormat.fileHeaderLength), nextSequence: 1,
                             lastRecordedAt: opened.header.createdAt, link: opened.genesis, entries: [])
        let scanner = LogScanner(file: file, end: opened.size, offset: checkpoint.coveredLength,
                                 nextSequence: checkpoint.nextSequence, link: checkpoint.link,
                                 lastRecordedAt: checkpoint.lastRecordedAt, checkChain: true, checkRecords: true)
        let scannedFrom = checkpoint.coveredLength
        var cut: TailCut?
        scan: while true {
            switch try scanner.nextClassified() {
            case .batch(let batch):
                if !batch.header.isSeal { checkpoint.note(batchAt: batch.offset, firstSequence: batch.header.firstSequence) }
            case .end:
                break scan
            case .damaged(let damage):
                throw LogError.damaged(damage)
            case .incompleteTail(let damage):
                // I3: invalid bytes below a length known durable are damage.
                if scanner.offset < knownDurable { throw LogError.damaged(damage.withDurability(true)) }
                cut = try quarantineTail(fs: fs, file: file, from: scanner.offset, to: opened.size, damage: damage)
                break scan
            }
        }
        checkpoint.coveredLength = scanner.offset
        checkpoint.nextSequence = scanner.nextSequence
        checkpoint.link = scanner.link
        checkpoint.lastRecordedAt = scanner.lastRecordedAt
        // Everything now in the file becomes durable before any batch vouches for it.
        try file.sync()
        let writer = LogWriter(fs: fs, file: file, lock: lock, header: opened.header, options: options,
                               length: scanner.offset, allocated: try file.size(), checkpoint: checkpoint,
                               recovery: RecoveryReport(scannedFrom: scannedFrom, cut: cut))
        if scanner.offset - scannedFrom > 16 << 20 { try? checkpoint.save(fs, ledgerId: opened.header.ledgerId) }
        return writer
    }

    /// Copies [from, to) into `quarantine/tail-<offset>-<time>.bin` (synced, and its
    /// folder entry synced), then cuts the log there. If the copy fails (a full
    /// disk), the partial quarantine file is removed and the log is left uncut.
    private static func quarantineTail(fs: any LogFileSystem, file: any LogFile, from: UInt64, to: UInt64,
                                       damage: LogDamage) throws -> TailCut {
        // A new folder's entry lives in the ledger folder: sync that (W8).
        if try fs.createSubfolder("quarantine") { try fs.syncFolder(nil) }
        let name = "quarantine/tail-\(from)-\(LogClock.now()).bin"
        let out = try fs.open(name, .createNew)
        do {
            var position = from
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while position < to {
                let want = Int(min(UInt64(buffer.count), to - position))
                let got = try buffer.withUnsafeMutableBytes { try file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<want]), at: position) }
                guard got > 0 else { break }
                try buffer.withUnsafeBytes { try out.write(UnsafeRawBufferPointer(rebasing: $0[0..<got]), at: position - from) }
                position += UInt64(got)
            }
            try out.sync()
            out.close()
            try fs.syncFolder("quarantine")
        } catch {
            out.close()
            try? fs.remove(name)
            try? fs.syncFolder("quarantine")
            throw error
        }
        try file.truncate(to: from)
        try file.sync()
        return TailCut(offset: from, length: to - from, damage: damage, quarantineFile: name)
    }

    // MARK: Appending

    /// Appends records as one batch: all of them or, after a crash, none. Returns
    /// their sequence numbers once durable (or once encoded, for `.deferred`).
    @discardableResult
    package func append(_ records: [LogRecord], durability: Durability = .durable) async throws -> ClosedRange<UInt64> {
        try await append(RecordBatch(records), durability: durability)
    }

    /// Appends a prepared batch (see `append(_:durability:)`).
    @discardableResult
    package func append(_ batch: consuming RecordBatch, durability: Durability = .durable) async throws -> ClosedRange<UInt64> {
        let ticket = try enqueue(batch)
        try await wait(for: ticket, durability: durability)
        return ticket.sequences
    }

    /// What `enqueue` assigned to a batch.
    package struct Ticket: Sendable {
        /// The batch's sequence numbers.
        package let sequences: ClosedRange<UInt64>
        /// The time stamped on every record of the batch (ns since the epoch).
        package let recordedAt: Int64
        /// Byte offset of each record in the log.
        package let recordOffsets: [UInt64]
        /// The log length once the batch is written.
        package let end: UInt64
        let pendingBytes: Int
    }

    /// Encodes a batch into the log's order without waiting: sequence numbers, time,
    /// offsets and the link are final when this returns (synchronously), the bytes not
    /// yet written. Callers that must decide and order appends atomically (the
    /// ledger's command loop) enqueue inside their critical section and wait outside.
    ///
    /// The batch is sealed (a CRC32C per record, the SHA-256 link) under the sealing
    /// lock, outside the state lock: the chain makes sealing sequential, and only
    /// sealers wait for it; the flusher and waiting appends never do.
    package func enqueue(_ batch: consuming RecordBatch) throws -> Ticket {
        var batch = batch
        try batch.validate()
        let now = clock()
        return try whileSealing { () throws -> Ticket in
            let (first, recordedAt, offset, syncedLength, previousLink) = try state.withLock { s in
                if let cause = s.poisoned { throw LogError.writerPoisoned(cause: cause) }
                guard !s.closed else { throw LogError.writerClosed }
                return (s.nextSequence, max(now, s.lastRecordedAt), s.encodedLength, s.durableLength, s.link)
            }
            var offsets: [UInt64] = []
            offsets.reserveCapacity(batch.count)
            // `syncedLength` may be behind by the time the batch is published: a
            // lower claim is still true (W4, B6).
            let link = batch.seal(firstSequence: first, recordedAt: recordedAt, syncedLength: syncedLength,
                                  previousLink: previousLink, recordOffsets: &offsets)
            for i in offsets.indices { offsets[i] += offset }
            let bytes = batch.bytes
            return try state.withLock { s -> Ticket in
                // Poisoned or closed while sealing: nothing of this batch is published.
                if let cause = s.poisoned { throw LogError.writerPoisoned(cause: cause) }
                guard !s.closed else { throw LogError.writerClosed }
                precondition(s.nextSequence == first && s.encodedLength == offset && s.link == previousLink,
                             "only a sealer holding the sealing lock moves the chain head")
                s.link = link
                s.checkpoint.note(batchAt: offset, firstSequence: first)
                s.nextSequence = first + UInt64(batch.count)
                s.lastRecordedAt = recordedAt
                s.encodedLength += UInt64(bytes.count)
                Self.enqueue(&s, bytes)
                return Ticket(sequences: first...(s.nextSequence - 1), recordedAt: recordedAt, recordOffsets: offsets,
                              end: s.encodedLength, pendingBytes: s.pendingBytes)
            }
        }
    }

    /// Waits until an enqueued batch is durable (`.durable`), or applies the
    /// bulk-mode back-pressure and write-behind (`.deferred`).
    package func wait(for ticket: Ticket, durability: Durability = .durable) async throws {
        switch durability {
        case .durable:
            try await wait(until: ticket.end, durable: true)
        case .deferred:
            if ticket.pendingBytes >= Self.pendingBytesMax {
                try await wait(until: ticket.end, durable: false)
            } else if ticket.pendingBytes >= Self.writeBehindBytes {
                requestWriteBehind()
            }
        }
    }

    /// Waits until the log's bytes up to `end` are in the file (written, not
    /// necessarily durable): what an in-process reader of records enqueued up to
    /// `end` waits for. Deferred bytes still queued are written now.
    package func waitUntilWritten(_ end: UInt64) async throws {
        try await wait(until: end, durable: false)
    }

    /// Adds encoded bytes to the pending writes, coalescing small batches.
    private static func enqueue(_ s: inout State, _ bytes: [UInt8]) {
        if bytes.count < 64 << 10, let last = s.pending.indices.last, s.pending[last].count < 1 << 20 {
            s.pending[last].append(contentsOf: bytes)
        } else {
            s.pending.append(bytes)
        }
        s.pendingBytes += bytes.count
    }

    /// Waits until everything appended so far is durable.
    package func sync() async throws {
        let end = try state.withLock { s -> UInt64 in
            if let cause = s.poisoned { throw LogError.writerPoisoned(cause: cause) }
            return s.encodedLength
        }
        try await wait(until: end, durable: true)
    }

    /// Waits until bytes up to `end` are written (or durable).
    ///
    /// Group commit: the waiter is a suspended continuation in `waiters`; the
    /// flusher thread (woken if it sleeps) writes everything queued, syncs once if
    /// anyone needs durability, and resumes every waiter its write or sync covered.
    /// Callers arriving meanwhile are covered by its next round. A waiter whose bytes
    /// a failed flush carried gets that flush's error itself (e.g. `noSpace`).
    private func wait(until end: UInt64, durable: Bool) async throws {
        let done = try state.withLock { s -> Bool in
            if let cause = s.poisoned { throw LogError.writerPoisoned(cause: cause) }
            return s.covers(end, durable: durable)
        }
        if done { return }
        try await suspendUntilFlushed { continuation in
            enum Outcome { case waiting(FlusherWake), resume, fail(LogError) }
            let outcome = state.withLock { s -> Outcome in
                if let cause = s.poisoned { return .fail(.writerPoisoned(cause: cause)) }
                if s.covers(end, durable: durable) { return .resume }
                // Abandoned (or closed past its seal): nothing will write these bytes.
                if s.flusherStopping { return .fail(.writerClosed) }
                s.waiters.append(Waiter(end: end, durable: durable, continuation: continuation))
                return .waiting(Self.wakeFlusher(&s))
            }
            switch outcome {
            case .waiting(let wake): perform(wake)
            case .resume: continuation.resume()
            case .fail(let error): continuation.resume(throwing: error)
            }
        }
    }

    /// Suspends on a continuation that `hand` gives the flusher (or resumes at once),
    /// and after the resume takes the state lock once: the flusher publishes under
    /// it before resuming, so what it did before (the file's writes and syncs) is
    /// ordered before what the caller does next, for ThreadSanitizer too.
    private func suspendUntilFlushed(_ hand: (CheckedContinuation<Void, Error>) -> Void) async throws {
        defer { state.synchronize() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            hand(continuation)
        }
    }

    /// Asks for the deferred bytes queued so far to be written in the background.
    private func requestWriteBehind() {
        let wake = state.withLock { s -> FlusherWake in
            if s.poisoned != nil || s.pending.isEmpty { return .none }
            s.writeBehindRequested = true
            return Self.wakeFlusher(&s)
        }
        perform(wake)
    }

    // MARK: The flusher thread

    /// What a caller must do, outside the state lock, after giving the flusher work.
    private enum FlusherWake {
        case none
        case signal
        case start
    }

    /// Decides (under the state lock) how the flusher learns of new work: it is
    /// started the first time, signalled when asleep, and otherwise sees the work
    /// when it next looks (it looks under the lock before it sleeps).
    private static func wakeFlusher(_ s: inout State) -> FlusherWake {
        if !s.flusherStarted {
            s.flusherStarted = true
            return .start
        }
        if s.flusherAsleep {
            s.flusherAsleep = false
            return .signal
        }
        return .none
    }

    private func perform(_ wake: FlusherWake) {
        switch wake {
        case .none: break
        case .signal: state.signal()
        case .start: startFlusher()
        }
    }

    /// Starts the writer's own thread for writes and syncs. It holds the writer
    /// only while it works, so a writer dropped without closing ends it (`deinit`).
    private func startFlusher() {
        let state = self.state
        let thread = Thread { [weak self] in
            // Set from the thread itself: Linux keeps at most 15 bytes of a thread's name.
            Thread.current.name = LogWriter.flusherThreadName
            while true {
                let stop = state.wait(until: { s in
                    if s.flusherStopping || s.flusherHasWork {
                        s.flusherAsleep = false
                        return true
                    }
                    s.flusherAsleep = true
                    return false
                }, then: { s in s.flusherStopping })
                guard !stop, let writer = self else { return }
                writer.flushUntilIdle()
            }
        }
        thread.start()
    }

    /// The flusher thread's name (what `top -H` and a debugger show).
    package static let flusherThreadName = "ledger.flusher"

    private struct FlushWork {
        let buffers: [[UInt8]]
        let offset: UInt64
        let sync: Bool
        let allocate: UInt64?
        /// The file size this writer left: anything else means someone else wrote (W7).
        let expectedSize: UInt64
    }

    private enum FlushStep {
        case idle
        case write(FlushWork)
        case close(CloseWork)
    }

    /// The group-commit loop, on the flusher thread: write everything pending, sync
    /// if anyone waits for durability, resume whoever is covered, repeat until there
    /// is nothing to do. Only this thread writes to the file while the writer is open.
    private func flushUntilIdle() {
        while true {
            let step = state.withLock { s -> FlushStep in
                if s.poisoned != nil { return .idle }
                if let closing = s.closing, s.pending.isEmpty {
                    s.closing = nil
                    return .close(closing)
                }
                let needSync = s.needsSync
                if s.pending.isEmpty && !needSync {
                    s.writeBehindRequested = false
                    return .idle
                }
                let buffers = s.pending
                s.pending = []
                s.pendingBytes = 0
                s.writeBehindRequested = false
                let end = s.writtenLength + UInt64(buffers.reduce(0) { $0 + $1.count })
                var allocate: UInt64?
                if end > s.allocatedLength, allocationChunk > 0, !s.allocationFailed {
                    let target = (end + allocationChunk - 1) / allocationChunk * allocationChunk
                    allocate = target
                    s.allocatedLength = target
                }
                return .write(FlushWork(buffers: buffers, offset: s.writtenLength, sync: needSync, allocate: allocate,
                                        expectedSize: s.physicalLength))
            }
            switch step {
            case .idle:
                return
            case .close(let work):
                finishClose(work)
            case .write(let work):
                do {
                    try flush(work)
                } catch {
                    poison(error)
                    return
                }
            }
        }
    }

    /// One round: reserve, write, publish the written length (waking readers and
    /// deferred waiters before the sync), sync, publish the durable length.
    private func flush(_ work: FlushWork) throws {
        // W7: before writing, the log must be exactly as this writer left it (one
        // fstat); a change means another writer or a truncation, and writing now
        // could overwrite acknowledged bytes.
        try checkUnchanged(expectedSize: work.expectedSize)
        var physical = work.expectedSize
        var reservationFailed = false
        if let target = work.allocate {
            do {
                try file.allocate(upTo: target)
                physical = max(physical, target)
            } catch LogError.noSpace {
                // A nearly full disk: append without reserving (the appends may
                // still fit). A partial reservation reads as zeros (Z1).
                physical = try file.size()
                reservationFailed = true
            }
        }
        var offset = work.offset
        for buffer in work.buffers {
            try buffer.withUnsafeBytes { try file.write($0, at: offset) }
            offset += UInt64(buffer.count)
        }
        physical = max(physical, offset)
        let written = offset
        // Only now, with the bytes in the file, is the written length published.
        publish { s in
            s.writtenLength = written
            s.physicalLength = physical
            if reservationFailed {
                s.allocationFailed = true
                s.allocatedLength = physical
            }
        }
        if work.sync {
            try file.sync()
            publish { s in s.durableLength = written }
        } else if written > work.offset {
            file.beginWriteback(offset: work.offset, length: written - work.offset)
        }
    }

    /// Changes the published lengths and resumes, outside the lock, every waiter
    /// they now cover.
    private func publish(_ change: (inout State) -> Void) {
        let covered = state.withLock { s -> [Waiter] in
            change(&s)
            precondition(s.durableLength <= s.writtenLength && s.writtenLength <= s.encodedLength,
                         "durableLength ≤ writtenLength ≤ encodedLength")
            let (written, durable) = (s.writtenLength, s.durableLength)
            var covered: [Waiter] = []
            s.waiters.removeAll { w in
                guard (w.durable ? durable : written) >= w.end else { return false }
                covered.append(w)
                return true
            }
            return covered
        }
        for w in covered { w.continuation.resume() }
    }

    /// W7: throws `exclusiveAccessLost` unless the log file has the size this writer left.
    private func checkUnchanged(expectedSize: UInt64) throws {
        let size = try file.size()
        guard size == expectedSize else {
            throw LogError.exclusiveAccessLost(path: fs.path + "/" + Self.logFileName,
                                               reason: "the log is \(size) bytes where this writer left \(expectedSize)")
        }
    }

    /// Stops the writer after a failed write or sync: the appends waiting on that
    /// flush (and a close waiting for its seal) get `error` itself (e.g. `noSpace`),
    /// every later call `writerPoisoned`.
    private func poison(_ error: Error) {
        // The file system throws `LogError`s; anything else is kept by its description.
        let cause = error as? LogError ?? .io(operation: String(describing: error), path: fs.path + "/" + Self.logFileName, errno: 0)
        let (waiters, closing) = state.withLock { s -> ([Waiter], CloseWork?) in
            s.poisoned = cause
            s.pending = []
            s.pendingBytes = 0
            s.writeBehindRequested = false
            defer {
                s.waiters = []
                s.closing = nil
            }
            return (s.waiters, s.closing)
        }
        for w in waiters { w.continuation.resume(throwing: error) }
        closing?.continuation.resume(throwing: error)
    }

    /// Ends the flusher thread (after its current round).
    private func stopFlusher() {
        state.withLock { $0.flusherStopping = true }
        state.signal()
    }

    /// Releases the log's lock and the folder's.
    private func releaseLocks() {
        file.unlock()
        lock.release()
    }

    // MARK: Closing

    /// Makes everything durable, appends a seal batch (so that damage to the last
    /// batches is later told apart from a torn write), saves the checkpoint index
    /// and releases the lock. A poisoned writer only releases the lock. The seal's
    /// write and syncs run on the flusher thread, like every other.
    package func close() async throws {
        let poisoned = state.withLock { s -> Bool in
            s.closed = true
            return s.poisoned != nil
        }
        if poisoned {
            stopFlusher()
            releaseLocks()
            return
        }
        do {
            try await sync()
            try await suspendUntilFlushed { continuation in
                let wake = whileSealing {
                    state.withLock { s -> FlusherWake in
                        let (bytes, link) = BatchChain.sealBatch(firstSequence: s.nextSequence, syncedLength: s.durableLength,
                                                                 previousLink: s.link)
                        let offset = s.encodedLength
                        s.link = link
                        s.encodedLength += UInt64(bytes.count)
                        s.checkpoint.coveredLength = s.encodedLength
                        s.checkpoint.nextSequence = s.nextSequence
                        s.checkpoint.link = link
                        s.checkpoint.lastRecordedAt = s.lastRecordedAt
                        s.closing = CloseWork(bytes: bytes, offset: offset, checkpoint: s.checkpoint,
                                              expectedSize: s.physicalLength, continuation: continuation)
                        return Self.wakeFlusher(&s)
                    }
                }
                perform(wake)
            }
        } catch {
            poison(error)
            stopFlusher()
            releaseLocks()
            throw error
        }
        stopFlusher()
        releaseLocks()
    }

    /// `close`'s last step, on the flusher thread: write and sync the seal, give
    /// back the space reserved ahead of the log (a closed log ends at its seal),
    /// sync, save the checkpoint index.
    private func finishClose(_ work: CloseWork) {
        do {
            try checkUnchanged(expectedSize: work.expectedSize)
            try work.bytes.withUnsafeBytes { try file.write($0, at: work.offset) }
            try file.sync()
            let end = work.offset + UInt64(work.bytes.count)
            try file.truncate(to: end)
            try file.sync()
            // I3: saved once the log is synced through the seal; before the lengths
            // are published, so that the close that waits sees it done.
            try? work.checkpoint.save(fs, ledgerId: header.ledgerId)
            publish { s in
                s.writtenLength = end
                s.durableLength = end
                s.allocatedLength = end
                s.physicalLength = end
            }
        } catch {
            poison(error)
            work.continuation.resume(throwing: error)
            return
        }
        work.continuation.resume()
    }

    /// Gives up the writer without syncing or sealing, as a crashed process would:
    /// appends that already returned `.durable` are safe; anything else may be lost.
    /// Releases the lock.
    package func abandon() {
        state.withLock { $0.closed = true }
        stopFlusher()
        releaseLocks()
    }

    // MARK: State

    /// The sequence number the next record will get.
    package var nextSequence: UInt64 { state.withLock { $0.nextSequence } }
    /// The chain head: the link of the last batch encoded.
    package var chainHead: SHA256Digest { state.withLock { $0.link } }
    /// Bytes of the log that are durable.
    package var durableLength: UInt64 { state.withLock { $0.durableLength } }
    /// Bytes of the log in the file (written, perhaps not yet durable): the most a
    /// reader may be told of.
    package var writtenLength: UInt64 { state.withLock { $0.writtenLength } }
    /// The encoded end while some of it is not yet in the file; nil when all of it
    /// is, or when it never will be (the writer failed, or was closed or abandoned).
    /// What an in-process reader of the writer's records waits for
    /// (`waitUntilWritten`).
    package var unwrittenEnd: UInt64? {
        state.withLock { s in
            s.poisoned == nil && !s.flusherStopping && s.writtenLength < s.encodedLength ? s.encodedLength : nil
        }
    }
    /// Bytes of the log including appends not yet durable.
    package var encodedLength: UInt64 { state.withLock { $0.encodedLength } }

    /// Every invariant (`LogWriter.Invariant`) the writer's state breaks, read under its
    /// lock (empty: none). Tests call it; it costs a pass over the pending buffers,
    /// the waiters and the checkpoint's entries.
    package func checkInvariants() -> [InvariantViolation] {
        state.withLock { s in
            StateFacts(nextSequence: s.nextSequence, lastRecordedAt: s.lastRecordedAt, encodedLength: s.encodedLength,
                       writtenLength: s.writtenLength, durableLength: s.durableLength, physicalLength: s.physicalLength,
                       pendingBytes: s.pendingBytes, pendingBufferBytes: s.pending.reduce(0) { $0 + $1.count },
                       waiters: s.waiters.map { StateFacts.Waiting(end: $0.end, durable: $0.durable) },
                       flushing: s.flusherStarted && !s.flusherAsleep, poisoned: s.poisoned != nil, closed: s.closed, checkpoint: s.checkpoint)
        }.violations()
    }
}

/// The shared first steps of opening a log file: size, header, genesis link.
struct LogOpening {
    let size: UInt64
    let header: LogFileHeader
    let headerBytes: [UInt8]
    let genesis: SHA256Digest

    init(fs: any LogFileSystem, file: any LogFile) throws {
        size = try file.size()
        guard size >= UInt64(LogFormat.fileHeaderLength) else {
            throw LogError.notALedgerLog(reason: "\(fs.path)/\(LogWriter.logFileName) is shorter than a log header")
        }
        var bytes = [UInt8](repeating: 0, count: LogFormat.fileHeaderLength)
        _ = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        header = try bytes.withUnsafeBytes { try LogFileHeader.decode($0) }
        headerBytes = bytes
        genesis = BatchChain.genesis(fileHeader: bytes)
    }
}
