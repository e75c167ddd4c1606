import Foundation
import LedgerChecksums

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
    /// The keys and salt sealed records are sealed with (nil: no key store given).
    let recordSealing: RecordSealing?
    /// What opening found at the tail (nil for a new ledger).
    package let recovery: RecoveryReport?

    let fs: any LogFileSystem
    let file: any LogFile
    let lock: any LogLock
    let clock: @Sendable () -> Int64
    let allocationChunk: UInt64
    /// The writer's state, and the condition its flusher thread sleeps on.
    let state: LockedCondition<State>
    /// Held by `enqueue` (and `close`, for the seal) from reading the chain head to
    /// publishing the sealed batch: it orders sealers, and only sealers take it, so
    /// the state lock is never held across a batch's CRCs and SHA-256. (A bare
    /// `NSLock`, the mutex `Locked` wraps: it guards an order, not a value, and a
    /// `Locked<Void>`'s zero-sized value looks to ThreadSanitizer like an access
    /// to the next object.)
    let sealing = NSLock()

    /// Runs `body` holding the sealing lock.
    func whileSealing<Result>(_ body: () throws -> Result) rethrows -> Result {
        sealing.lock()
        defer { sealing.unlock() }
        return try body()
    }

    struct Waiter {
        let end: UInt64
        let durable: Bool
        let continuation: CheckedContinuation<Void, Error>
    }

    /// `close`'s last step, done by the flusher: the seal written and synced, the
    /// reserve given back, the checkpoint saved.
    struct CloseWork {
        let bytes: [UInt8]
        let offset: UInt64
        let checkpoint: LogCheckpoint
        let expectedSize: UInt64
        let continuation: CheckedContinuation<Void, Error>
    }

    struct State {
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

    init(fs: any LogFileSystem, file: any LogFile, lock: any LogLock, header: LogFileHeader,
                 options: LogWriterOptions, length: UInt64, allocated: UInt64, checkpoint: LogCheckpoint,
                 recovery: RecoveryReport?) throws {
        recordSealing = try (options.recordKeys ?? fs.recordKeys).map {
            RecordSealing(keys: $0, salt: try options.sealSalt ?? RecordSealing.randomSalt(), ledgerId: header.ledgerId)
        }
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
            let version = options.sealedFormat ? LogFormat.sealedFormatVersion : LogFormat.formatVersion
            let header = LogFileHeader(formatVersion: version, minReaderVersion: version,
                                       ledgerId: ledgerId, createdAt: options.createdAt ?? options.clock())
            let bytes = header.encoded()
            let file = try fs.open(logFileName, .createNew)
            try file.lockExclusive()
            try bytes.withUnsafeBytes { try file.write($0, at: 0) }
            try file.sync()
            try fs.syncFolder(nil)
            let genesis = BatchChain.genesis(fileHeader: bytes)
            let checkpoint = LogCheckpoint(coveredLength: UInt64(LogFormat.fileHeaderLength), nextSequence: 1,
                                           lastRecordedAt: header.createdAt, link: genesis, entries: [])
            return try LogWriter(fs: fs, file: file, lock: lock, header: header, options: options,
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
    static func openLocked(_ fs: any LogFileSystem, file: any LogFile, lock: any LogLock,
                                   options: LogWriterOptions) throws -> LogWriter {
        let opened = try LogOpening(fs: fs, file: file)
        // H3: append only to a format this code writes.
        guard LogFormat.writableVersions.contains(opened.header.formatVersion) else {
            throw LogError.unsupportedFormatVersion(found: opened.header.formatVersion,
                                                    minReader: opened.header.minReaderVersion,
                                                    supported: LogFormat.writableVersions.upperBound)
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
                                 lastRecordedAt: checkpoint.lastRecordedAt, checkChain: true, checkRecords: true,
                                 sealedRecords: opened.header.allowsSealedRecords)
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
        let writer = try LogWriter(fs: fs, file: file, lock: lock, header: opened.header, options: options,
                               length: scanner.offset, allocated: try file.size(), checkpoint: checkpoint,
                               recovery: RecoveryReport(scannedFrom: scannedFrom, cut: cut))
        if scanner.offset - scannedFrom > 16 << 20 { try? checkpoint.save(fs, ledgerId: opened.header.ledgerId) }
        return writer
    }

    /// Copies [from, to) into `quarantine/tail-<offset>-<time>.bin` (synced, and its
    /// folder entry synced), then cuts the log there. If the copy fails (a full
    /// disk), the partial quarantine file is removed and the log is left uncut.
    static func quarantineTail(fs: any LogFileSystem, file: any LogFile, from: UInt64, to: UInt64,
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

    /// Whether a failed write or sync has poisoned the writer (every later call throws).
    package var isPoisoned: Bool { state.withLock { $0.poisoned != nil } }

    /// The `recordedAt` the next batch gets if enqueued now with it: the clock's time,
    /// or the last batch's if the clock went back. For a single enqueuer that folds a
    /// batch's events before handing it over (the ledger) and passes it to `enqueue`.
    package func nextRecordedAt() -> Int64 {
        let now = clock()
        return state.withLock { max(now, $0.lastRecordedAt) }
    }

    /// Encodes a batch into the log's order without waiting: sequence numbers, time,
    /// offsets and the link are final when this returns (synchronously), the bytes not
    /// yet written. Callers that must decide and order appends atomically (the
    /// ledger's command loop) enqueue inside their critical section and wait outside.
    ///
    /// The batch is sealed (a CRC32C per record, the SHA-256 link) under the sealing
    /// lock, outside the state lock: the chain makes sealing sequential, and only
    /// sealers wait for it; the flusher and waiting appends never do.
    ///
    /// `recordedAt`: the time the caller took from `nextRecordedAt()` to fold the
    /// batch's events before enqueueing them; the batch gets it (or the last batch's
    /// time, if later: `recordedAt` never decreases). Nil: the clock's time now.
    package func enqueue(_ batch: consuming RecordBatch, recordedAt predicted: Int64? = nil) throws -> Ticket {
        var batch = batch
        try batch.validate(allowsSealed: header.allowsSealedRecords, sealing: recordSealing)
        let now = predicted ?? clock()
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
                                  previousLink: previousLink, sealing: recordSealing, recordOffsets: &offsets)
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
    static func enqueue(_ s: inout State, _ bytes: [UInt8]) {
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
    func wait(until end: UInt64, durable: Bool) async throws {
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
    func suspendUntilFlushed(_ hand: (CheckedContinuation<Void, Error>) -> Void) async throws {
        defer { state.synchronize() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            hand(continuation)
        }
    }

    /// Asks for the deferred bytes queued so far to be written in the background.
    func requestWriteBehind() {
        let wake = state.withLock { s -> FlusherWake in
            if s.poisoned != nil || s.pending.isEmpty { return .none }
            s.writeBehindRequested = true
            return Self.wakeFlusher(&s)
        }
        perform(wake)
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
