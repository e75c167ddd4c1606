import Dispatch
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
///   commit): a flusher thread writes everything encoded so far, syncs once, and
///   wakes every append the sync covered.
/// - After any failed write or sync the writer is poisoned: every later call throws
///   `writerPoisoned` until the ledger is reopened, whose recovery finds a
///   consistent log. A failed fsync is never retried.
///
/// Invariants: `durableLength ≤ writtenLength ≤ encodedLength`; every batch's
/// `syncedLength` field is a `durableLength` that was true when it was encoded;
/// `recordedAt` never decreases. `checkInvariants()` checks these and the rest of
/// the state's (`LogWriter.Invariant`, LogWriter+Invariants.swift).
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
    private let flusher = DispatchQueue(label: "healthledger.log.flush")
    private let state: Locked<State>

    private struct Waiter {
        let end: UInt64
        let durable: Bool
        let continuation: CheckedContinuation<Void, Error>
    }

    private struct State {
        var nextSequence: UInt64
        var lastRecordedAt: Int64
        var link: SHA256Digest
        var encodedLength: UInt64
        var writtenLength: UInt64
        var durableLength: UInt64
        var pending: [[UInt8]] = []
        var pendingBytes = 0
        var waiters: [Waiter] = []
        var flushing = false
        /// The file's physical size: the log plus space reserved ahead of it.
        var allocatedLength: UInt64
        /// The file size this writer left (what `fstat` must report before each
        /// write, W7). Only the one running flush (or close) changes the file.
        var physicalLength: UInt64
        /// Reserving space failed (a nearly full disk): plain appends from now on.
        var allocationFailed = false
        var poisoned: LogError?
        var closed = false
        var checkpoint: LogCheckpoint
    }

    /// Bytes of deferred appends that start a background write.
    static let writeBehindBytes = 4 << 20
    /// Bytes of deferred appends beyond which appends wait for the writes (back-pressure).
    static let pendingBytesMax = 32 << 20

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
        state = Locked(State(nextSequence: checkpoint.nextSequence, lastRecordedAt: checkpoint.lastRecordedAt,
                            link: checkpoint.link, encodedLength: length, writtenLength: length, durableLength: length,
                            allocatedLength: max(allocated, length), physicalLength: max(allocated, length),
                            checkpoint: checkpoint))
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
        let end: UInt64
        let pendingBytes: Int
    }

    /// Encodes a batch into the log's order without waiting: sequence numbers, time,
    /// offsets and the link are final when this returns (synchronously), the bytes not
    /// yet durable. Callers that must decide and order appends atomically (the
    /// ledger's command loop) enqueue inside their critical section and wait outside.
    package func enqueue(_ batch: consuming RecordBatch) throws -> Ticket {
        var batch = batch
        try batch.validate()
        let now = clock()
        return try state.withLock { s -> Ticket in
            if let cause = s.poisoned { throw LogError.writerPoisoned(cause: cause) }
            guard !s.closed else { throw LogError.writerClosed }
            let first = s.nextSequence
            let recordedAt = max(now, s.lastRecordedAt)
            let offset = s.encodedLength
            var offsets: [UInt64] = []
            offsets.reserveCapacity(batch.count)
            s.link = batch.seal(firstSequence: first, recordedAt: recordedAt, syncedLength: s.durableLength,
                                previousLink: s.link, recordOffsets: &offsets)
            for i in offsets.indices { offsets[i] += offset }
            s.checkpoint.note(batchAt: offset, firstSequence: first)
            s.nextSequence = first + UInt64(batch.count)
            s.lastRecordedAt = recordedAt
            s.encodedLength += UInt64(batch.bytes.count)
            Self.enqueue(&s, batch.bytes)
            return Ticket(sequences: first...(s.nextSequence - 1), recordedAt: recordedAt, recordOffsets: offsets,
                          end: s.encodedLength, pendingBytes: s.pendingBytes)
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
                startFlushing()
            }
        }
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
    /// Group commit by leadership: when nobody is flushing, the caller becomes the
    /// leader and writes and syncs on its own thread (no thread hop for a lone
    /// appender; the blocking is the point of a durable append). Callers arriving
    /// meanwhile wait; the leader's sync covers them. A leader whose own bytes are
    /// durable hands leftover work to the flusher queue rather than serving forever.
    private func wait(until end: UInt64, durable: Bool) async throws {
        let lead = try state.withLock { s -> Bool? in
            if let cause = s.poisoned { throw LogError.writerPoisoned(cause: cause) }
            if (durable ? s.durableLength : s.writtenLength) >= end { return nil }
            if s.flushing { return false }
            s.flushing = true
            return true
        }
        guard let lead else { return }
        if lead {
            // The failure of the flush that carried our bytes is our answer (e.g.
            // `noSpace`), not just "poisoned".
            if let failure = flushLoop(leaderEnd: end) { throw failure }
            let done = try state.withLock { s -> Bool in
                if let cause = s.poisoned { throw LogError.writerPoisoned(cause: cause) }
                return (durable ? s.durableLength : s.writtenLength) >= end
            }
            if done { return }
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            let start = state.withLock { s -> Bool in
                if let cause = s.poisoned {
                    continuation.resume(throwing: LogError.writerPoisoned(cause: cause))
                    return false
                }
                if (durable ? s.durableLength : s.writtenLength) >= end {
                    continuation.resume()
                    return false
                }
                s.waiters.append(Waiter(end: end, durable: durable, continuation: continuation))
                if s.flushing { return false }
                s.flushing = true
                return true
            }
            if start { flusher.async { _ = self.flushLoop(leaderEnd: nil) } }
        }
    }

    private func startFlushing() {
        let start = state.withLock { s -> Bool in
            if s.flushing || s.poisoned != nil { return false }
            s.flushing = true
            return true
        }
        if start { flusher.async { _ = self.flushLoop(leaderEnd: nil) } }
    }

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
        case handOff
        case write(FlushWork)
    }


    /// The group-commit loop: write everything pending, sync if anyone waits for
    /// durability, wake whoever is covered, repeat until idle. Runs on a leading
    /// appender's thread (`leaderEnd` set) or on the flusher queue. Exactly one runs
    /// at a time (`flushing`). Returns the error that poisoned the writer, if one did.
    private func flushLoop(leaderEnd: UInt64?) -> Error? {
        var roundsAfterOwnDurable = 0
        while true {
            let step = state.withLock { s -> FlushStep in
                let needSync = s.waiters.contains { $0.durable && $0.end > s.durableLength }
                    || (leaderEnd.map { $0 > s.durableLength } ?? false)
                if s.poisoned != nil || (s.pending.isEmpty && !needSync) {
                    s.flushing = false
                    return .idle
                }
                if let leaderEnd, s.durableLength >= leaderEnd {
                    roundsAfterOwnDurable += 1
                    if roundsAfterOwnDurable > 2 { return .handOff }  // `flushing` stays set for the flusher
                }
                let buffers = s.pending
                s.pending = []
                s.pendingBytes = 0
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
            let work: FlushWork
            switch step {
            case .idle:
                return nil
            case .handOff:
                flusher.async { _ = self.flushLoop(leaderEnd: nil) }
                return nil
            case .write(let next):
                work = next
            }
            do {
                // W7: before writing, the log must be exactly as this writer left it
                // (one fstat); a change means another writer or a truncation, and
                // writing now could overwrite acknowledged bytes.
                try checkUnchanged(expectedSize: work.expectedSize)
                var physical = work.expectedSize
                var reservationFailed = false
                if let target = work.allocate {
                    do {
                        try file.allocate(upTo: target)
                        physical = max(physical, target)
                    } catch LogError.noSpace {
                        // A nearly full disk: append without reserving (the appends
                        // may still fit). A partial reservation reads as zeros (Z1).
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
                if work.sync {
                    try file.sync()
                } else if offset > work.offset {
                    file.beginWriteback(offset: work.offset, length: offset - work.offset)
                }
                state.withLock { s in
                    s.writtenLength = offset
                    s.physicalLength = physical
                    if reservationFailed {
                        s.allocationFailed = true
                        s.allocatedLength = physical
                    }
                    if work.sync { s.durableLength = offset }
                    precondition(s.durableLength <= s.writtenLength && s.writtenLength <= s.encodedLength,
                                 "durable ≤ written ≤ encoded (LogWriter.lengthsOrdered)")
                    let (written, durable) = (s.writtenLength, s.durableLength)
                    s.waiters.removeAll { w in
                        guard (w.durable ? durable : written) >= w.end else { return false }
                        w.continuation.resume()
                        return true
                    }
                }
            } catch {
                poison(error)
                return error
            }
        }
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
    /// flush get `error` itself (e.g. `noSpace`), every later call `writerPoisoned`.
    private func poison(_ error: Error) {
        // The file system throws `LogError`s; anything else is kept by its description.
        let cause = error as? LogError ?? .io(operation: String(describing: error), path: fs.path + "/" + Self.logFileName, errno: 0)
        state.withLock { s in
            s.poisoned = cause
            s.flushing = false
            s.pending = []
            s.pendingBytes = 0
            for w in s.waiters { w.continuation.resume(throwing: error) }
            s.waiters = []
        }
    }

    /// Releases the log's lock and the folder's.
    private func releaseLocks() {
        file.unlock()
        lock.release()
    }

    // MARK: Closing

    /// Makes everything durable, appends a seal batch (so that damage to the last
    /// batches is later told apart from a torn write), saves the checkpoint index
    /// and releases the lock. A poisoned writer only releases the lock.
    package func close() async throws {
        let poisoned = state.withLock { s -> Bool in
            s.closed = true
            return s.poisoned != nil
        }
        if poisoned {
            releaseLocks()
            return
        }
        do {
            try await sync()
            let (bytes, offset, checkpoint, expectedSize) = state.withLock { s -> ([UInt8], UInt64, LogCheckpoint, UInt64) in
                let (bytes, link) = BatchChain.sealBatch(firstSequence: s.nextSequence, syncedLength: s.durableLength,
                                                         previousLink: s.link)
                let offset = s.encodedLength
                s.link = link
                s.encodedLength += UInt64(bytes.count)
                s.checkpoint.coveredLength = s.encodedLength
                s.checkpoint.nextSequence = s.nextSequence
                s.checkpoint.link = link
                s.checkpoint.lastRecordedAt = s.lastRecordedAt
                return (bytes, offset, s.checkpoint, s.physicalLength)
            }
            try checkUnchanged(expectedSize: expectedSize)
            try bytes.withUnsafeBytes { try file.write($0, at: offset) }
            try file.sync()
            // Give back the space reserved ahead of the log: a closed log ends at its seal.
            let end = offset + UInt64(bytes.count)
            try file.truncate(to: end)
            try file.sync()
            state.withLock { s in
                s.writtenLength = s.encodedLength
                s.durableLength = s.encodedLength
                s.allocatedLength = end
                s.physicalLength = end
            }
            try? checkpoint.save(fs, ledgerId: header.ledgerId)
        } catch {
            poison(error)
            releaseLocks()
            throw error
        }
        releaseLocks()
    }

    /// Gives up the writer without syncing or sealing, as a crashed process would:
    /// appends that already returned `.durable` are safe; anything else may be lost.
    /// Releases the lock.
    package func abandon() {
        state.withLock { $0.closed = true }
        releaseLocks()
    }

    // MARK: State

    /// The sequence number the next record will get.
    package var nextSequence: UInt64 { state.withLock { $0.nextSequence } }
    /// The chain head: the link of the last batch encoded.
    package var chainHead: SHA256Digest { state.withLock { $0.link } }
    /// Bytes of the log that are durable.
    package var durableLength: UInt64 { state.withLock { $0.durableLength } }
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
                       flushing: s.flushing, poisoned: s.poisoned != nil, closed: s.closed, checkpoint: s.checkpoint)
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
