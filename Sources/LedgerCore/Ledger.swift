import Foundation
import HealthModel
import LedgerChecksums
import LedgerLog

/// Options for opening a ledger.
public struct LedgerOptions: Sendable {
    /// The log writer's options (lock timeout, clock, space reservation).
    public var log: LogWriterOptions
    /// Write a snapshot on close when at least this much replay work came since the
    /// last one, counted as events plus samples saved (a save of 1,000 samples costs a
    /// replay about what 1,000 one-sample saves cost, so counting events alone left
    /// 2,000 large saves, two million samples, to be replayed at every open).
    public var snapshotEvery: UInt64
    /// Snapshots kept (older ones are removed after a new one is written).
    public var snapshotsKept: Int
    /// Load projections from snapshots (false: always replay from the start).
    public var useSnapshots: Bool

    public init(log: LogWriterOptions = LogWriterOptions(), snapshotEvery: UInt64 = 100_000, snapshotsKept: Int = 2,
                useSnapshots: Bool = true) {
        self.log = log
        self.snapshotEvery = snapshotEvery
        self.snapshotsKept = snapshotsKept
        self.useSnapshots = useSnapshots
    }
}

/// Why a ledger refuses to go on.
public enum LedgerError: Error, Sendable, CustomStringConvertible {
    /// An earlier append failed (`cause`: the log's error itself); the ledger must be
    /// reopened (its recovery finds a consistent log).
    case failed(cause: any Error)
    /// Opening found projections (snapshot plus replay) that end at another event
    /// than the log: the ledger is not opened.
    case projectionsDisagree(projectionsEnd: UInt64, logEnd: UInt64)
    /// The log's events do not replay (undecodable or against the rules): the ledger
    /// is damaged and is not opened for writing.
    case replayFailed(ReplayError)
    /// A sealed ledger (issue 32) opened or created without its key-encryption key.
    case keysRequired(path: String)
    /// The key store failed (`KeyStoreError`'s text): nothing was appended. `usage`:
    /// the owner's to mend (the wrong key file, one readable by others).
    case keyStore(String, usage: Bool)
    /// An erasure refused before anything changed (issue 32): why. `notFound`: what it
    /// names is not there (an unknown app, import or type, nothing left to erase).
    case erasureRefused(String, notFound: Bool)

    public var description: String {
        switch self {
        case .failed(let cause): "ledgerFailed: an earlier append failed (\(cause)); reopen the ledger"
        case .projectionsDisagree(let projectionsEnd, let logEnd):
            "ledgerFailed: the projections end at \(projectionsEnd) but the log at \(logEnd)"
        case .replayFailed(let e): "damaged: \(e)"
        case .keysRequired(let path):
            "keyFileNotGiven: the ledger at \(path) is encrypted; give its key-encryption key with --key-file PATH or HEALTHLEDGER_KEY_FILE"
        case .keyStore(let text, _): text
        case .erasureRefused(let why, _): "erasureRefused: \(why)"
        }
    }
}

/// A ledger opened for writing: the log's single writer, the projections, and the
/// command loop decide → append → fold.
///
/// Commands are decided against the current projections and their events enqueued
/// to the log and folded into the projections in one step of the actor (so every
/// command sees the effects of those before it), then the caller waits for
/// durability outside that step, which lets concurrent commands share one sync.
/// A read waits until the log file holds every record the projections fold (the
/// writer's written length, `read(_:)`): in-process readers see events once they are
/// written, a moment before they are durable, and are never told of a record they
/// cannot read back. If an append then fails, the ledger refuses everything
/// (`LedgerError.failed`) until it is reopened.
public actor Ledger {
    package nonisolated let fs: any LogFileSystem
    package nonisolated let reader: LogReader
    let writer: LogWriter
    /// A sealed ledger's keys (issue 32), opened for writing; nil for a plain ledger.
    let keyRing: LedgerKeyRing?
    let options: LedgerOptions
    /// Every projection, up to the last event enqueued. Read through `read(as:_:)`.
    package internal(set) var state: LedgerState
    /// What opening found: torn tail cut, snapshot used, events replayed, warnings.
    public nonisolated let openReport: OpenReport
    var failure: (any Error)?
    /// The import transaction running, if one is (rule E11): while it is, every other
    /// caller waits (`admit`), so that no read sees its events before its
    /// `importFinished` and no other event lands inside it.
    var transaction: ImportTransaction?
    /// Callers waiting for the transaction to end.
    var waitingForTransaction: [CheckedContinuation<Void, Never>] = []
    /// Events plus samples saved since the last snapshot (or the start): what a
    /// reopen would replay, measured as `snapshotEvery` counts it.
    var replayWorkSinceSnapshot: UInt64
    private var fetcher: SampleFetcher
    /// Callers waiting for a commit after a sequence (`waitForCommit`), by ticket.
    var commitWaiters: [UInt64: (after: UInt64, resume: CommitWaiter)] = [:]
    var nextCommitWaiter: UInt64 = 0

    /// What opening a ledger found and did.
    public struct OpenReport: Sendable {
        public let recovery: RecoveryReport?
        public let snapshot: String?
        public let replayed: UInt64
        public let warnings: [String]
    }

    private init(fs: any LogFileSystem, writer: LogWriter, reader: LogReader, state: LedgerState, options: LedgerOptions,
                 report: OpenReport, replayWorkSinceSnapshot: UInt64) {
        self.fs = fs
        keyRing = writer.header.allowsSealedRecords ? fs.recordKeys as? LedgerKeyRing : nil
        self.writer = writer
        self.reader = reader
        self.state = state
        self.options = options
        self.openReport = report
        self.replayWorkSinceSnapshot = replayWorkSinceSnapshot
        self.fetcher = SampleFetcher(reader: reader)
    }

    /// Creates a new, empty ledger. With `options.log.sealedFormat`, a sealed one
    /// (issue 32): its key store is created first, under the key-encryption key of
    /// `fs.recordKeys` (a `LedgerKeyRing`; `keysRequired` without one).
    package static func create(_ fs: any LogFileSystem, ledgerId: UUID = UUID(), options: LedgerOptions = LedgerOptions()) throws -> Ledger {
        if options.log.sealedFormat {
            guard let ring = fs.recordKeys as? LedgerKeyRing else { throw LedgerError.keysRequired(path: fs.path) }
            guard !fs.exists(LogWriter.logFileName) else { throw LogError.ledgerExists(path: fs.path) }
            try fs.createFolder()
            do {
                try ring.create()
                // The snapshot key from the start, so that a reader's `replay
                // --write-snapshot` (which never creates keys) finds it.
                _ = try ring.keyIds(for: [SealedSnapshotFileSystem.scope])
            } catch .storeExists {
                // Another creator's store landed first: the ledger is that creator's.
                throw LogError.ledgerExists(path: fs.path)
            } catch {
                throw LedgerError.keyStore(error)
            }
        }
        let writer = try LogWriter.create(fs, ledgerId: ledgerId, options: options.log)
        let reader = try LogReader(fs)
        return Ledger(fs: fs, writer: writer, reader: reader, state: LedgerState(), options: options,
                      report: OpenReport(recovery: nil, snapshot: nil, replayed: 0, warnings: []), replayWorkSinceSnapshot: 0)
    }

    /// Creates a new, empty ledger in the folder at `path` (created when missing) on
    /// the local file system. Throws `LogError.ledgerExists` when one is there.
    public static func create(path: String, options: LedgerOptions = LedgerOptions()) throws -> Ledger {
        try create(PosixFileSystem(path: path), options: options)
    }

    /// Opens the ledger in the folder at `path` for writing (`open(_:options:progress:)`
    /// on the local file system). Throws `LogError.ledgerNotFound` when there is none.
    public static func open(path: String, options: LedgerOptions = LedgerOptions()) throws -> Ledger {
        try open(PosixFileSystem(path: path), options: options)
    }

    /// Opens an existing ledger for writing: recovery of the log's tail, then the
    /// projections from the newest good snapshot plus the tail of the log.
    package static func open(_ fs: any LogFileSystem, options: LedgerOptions = LedgerOptions(),
                            progress: ((ReplayProgress) -> Void)? = nil) throws -> Ledger {
        let writer = try LogWriter.open(fs, options: options.log)
        do {
            if writer.header.allowsSealedRecords {
                // The writer alone creates keys, holding the ledger's lock (Y5, Y6).
                guard let ring = fs.recordKeys as? LedgerKeyRing else { throw LedgerError.keysRequired(path: fs.path) }
                do { try ring.openForWriting() } catch { throw LedgerError.keyStore(error) }
            }
            let reader = try LogReader(fs)
            let loaded: StateLoader.Loaded
            do {
                loaded = try StateLoader.load(fs, reader: reader, useSnapshots: options.useSnapshots, progress: progress)
            } catch let error as ReplayError {
                throw LedgerError.replayFailed(error)
            }
            var state = loaded.state
            if let open = loaded.openImport {
                // E11: an import left open (its process died) is aborted by the next
                // writer before anything else. Every event from its start to the log's
                // end is the import's; none of them is applied. The abort becomes
                // durable with the next sync; lost in a crash, the next open writes it again.
                var batch = RecordBatch()
                EventCodec.append(.importAborted(ExportImportAbort(
                    importId: open.importId,
                    reason: "the import stopped before it finished; found open when the ledger was opened for writing")),
                    to: &batch)
                let ticket = try writer.enqueue(consume batch)
                for sequence in open.startedAt...ticket.sequences.upperBound {
                    state.skip(sequence: sequence, recordedAt: ticket.recordedAt)
                }
            }
            guard state.lastSequence + 1 == writer.nextSequence else {
                throw LedgerError.projectionsDisagree(projectionsEnd: state.lastSequence, logEnd: writer.nextSequence - 1)
            }
            if let ring = writer.header.allowsSealedRecords ? fs.recordKeys as? LedgerKeyRing : nil {
                // An erasure a crash stopped after its event: finished before anything else.
                try finishErasures(state.erasures, ring: ring, fs: fs)
            }
            return Ledger(fs: fs, writer: writer, reader: reader, state: state, options: options,
                          report: OpenReport(recovery: writer.recovery, snapshot: loaded.snapshot, replayed: loaded.replayed,
                                             warnings: loaded.warnings),
                          // Without a snapshot every event and sample was replayed; after one,
                          // the tail's samples are not counted (a later close errs late, not early).
                          replayWorkSinceSnapshot: loaded.snapshot == nil
                              ? state.lastSequence + UInt64(state.samples.count) : loaded.replayed)
        } catch {
            writer.abandon()
            throw error
        }
    }

    /// Appends an `importAborted`, durable, without folding it (rule E11: an aborted
    /// import is passed over, never folded; the caller rebuilds the projections).
    func appendAbort(_ abort: ExportImportAbort) async throws {
        var batch = RecordBatch()
        EventCodec.append(.importAborted(abort), to: &batch)
        let ticket = try enqueue(batch)
        do {
            try await writer.wait(for: ticket, durability: .durable)
        } catch {
            failure = error
            throw error
        }
    }

    /// Rebuilds the projections from the newest snapshot and the log (after an abort:
    /// replay passes over the aborted import). The old state is dropped first, so the
    /// two are never in memory together.
    func reloadState() throws {
        state = LedgerState()
        let loaded: StateLoader.Loaded
        do {
            loaded = try StateLoader.load(fs, reader: reader, useSnapshots: options.useSnapshots)
        } catch let error as ReplayError {
            failure = LedgerError.replayFailed(error)
            throw LedgerError.replayFailed(error)
        }
        guard loaded.openImport == nil, loaded.state.lastSequence + 1 == writer.nextSequence else {
            let error = LedgerError.projectionsDisagree(projectionsEnd: loaded.state.lastSequence, logEnd: writer.nextSequence - 1)
            failure = error
            throw error
        }
        state = loaded.state
        replayWorkSinceSnapshot = loaded.snapshot == nil ? state.lastSequence + UInt64(state.samples.count) : loaded.replayed
    }

    /// After the ledger failed inside a transaction: the projections hold the import's
    /// events folded, which no reader may see before a commit (rule E11). They are
    /// rebuilt from what the log file holds — replay stops before an import that is
    /// not finished in the file — so readers see what any other process would. If that
    /// fails too, the projections are emptied: a failed ledger answers nothing rather
    /// than an uncommitted import.
    func forgetFailedImport() {
        state = LedgerState()  // first: the two states are never in memory together
        if let loaded = try? StateLoader.load(fs, reader: reader, useSnapshots: options.useSnapshots) {
            state = loaded.state
        }
    }

    /// Makes room in the sample index for about `count` more samples (an import
    /// knows how many are coming), so it does not grow step by step.
    package func reserveSamples(_ count: Int) {
        state.samples.reserve(estimatedSamples: state.samples.count + count)
        // The statistics columns too (one value and one flag per slot): grown by
        // doubling, the last copy would hold both in memory at once.
        state.statistics.reserve(state.samples.count + count + count / 4)
    }

    /// Waits until every event appended so far is durable (after `.deferred` appends).
    public func sync() async throws {
        do {
            try await writer.sync()
        } catch {
            failure = error
            throw error
        }
    }

    /// Runs a sample query and reads the matching samples from the log (the
    /// streaming read engine, `SampleReader`).
    package func samples(_ query: SampleQuery, visibility: QueryVisibility) async throws -> [Sample] {
        try await read { state in try SampleReader(fs).page(query, visibility: visibility, in: &state).samples }
    }

    /// Runs `body` on the projections in one step of the actor: one atomic read.
    /// (`inout` only so that a query can sort a type's timeline the first time.)
    /// Our modules' raw access; a reader with a viewer uses `read(as:_:)`.
    ///
    /// It first waits for any import transaction to end (nothing of it is seen
    /// before) and until every record the projections fold is in the log file, so
    /// nothing `body` finds in them points at bytes not yet written (`settleForRead`).
    package func read<T>(_ body: (inout LedgerState) throws -> T) async rethrows -> T {
        await settleForRead()
        return try body(&state)
    }

    /// `read(_:)` without waiting: inside the actor, after `settleForRead()`.
    func readAdmitted<T>(_ body: (inout LedgerState) throws -> T) rethrows -> T {
        try body(&state)
    }

    /// Reads the sample in a slot from the log.
    package func sample(slot: UInt32) async throws -> Sample {
        await settleForRead()
        return try fetcher.sample(slot, in: state)
    }

    /// The profile (every source) at `now`, with height and weight read from the log.
    public func profile(at now: Date = Date()) async throws -> Profile {
        await settleForRead()
        return try state.profile(fetcher: &fetcher, at: now)
    }

    /// Returns, in the step of the actor the caller's read then runs in, once no import
    /// transaction runs (rule E11: a reader sees nothing of one before it commits) and
    /// the log file holds every record the projections fold: the projections run
    /// ahead of the file by the appends enqueued but not yet written (durable appends
    /// until the writer's flusher writes them, deferred ones until a sync or the
    /// write-behind), and a reader must only be told of written bytes. What came
    /// while it waited (a transaction, an append) is waited for too. If the writer
    /// failed (it never will write them) the read goes on as before the failure: the
    /// ledger refuses every write until reopened.
    func settleForRead() async {
        while true {
            await admit()
            guard let end = writer.unwrittenEnd else { return }
            do {
                try await writer.waitUntilWritten(end)
            } catch {
                return
            }
        }
    }

    /// Writes a snapshot of the projections now (after making the log durable).
    /// Never inside an import transaction (rule S7): waits for its end.
    @discardableResult
    package func snapshot() async throws -> String {
        await admit()
        precondition(transaction == nil && state.openTransaction == nil, "S7: no snapshot inside an import transaction")
        try await sync()
        // Sorted here, in place: the snapshot stores timelines sorted, and sorting the
        // snapshot's copy of the state would copy every unsorted timeline first.
        state.samples.prepareForQueries()
        let position = LogReader.Position(offset: writer.encodedLength, nextSequence: writer.nextSequence, link: writer.chainHead)
        let name = try SnapshotFile.write(state, at: position, ledgerId: writer.header.ledgerId, to: fs)
        replayWorkSinceSnapshot = 0
        for old in SnapshotFile.list(fs).dropFirst(options.snapshotsKept) { try? fs.remove(old) }
        return name
    }

    /// Makes everything durable, writes a snapshot when enough events came since the
    /// last, seals the log and releases the lock.
    public func close() async throws {
        if failure != nil {
            writer.abandon()
            return
        }
        if let open = transaction {
            try await abortImport(open, reason: "the ledger was closed before the import finished")
        }
        if replayWorkSinceSnapshot >= options.snapshotEvery && state.lastSequence > 0 {
            try await snapshot()
        }
        try await writer.close()
        // Bring an existing Merkle tree file up to date (derived; a failure here is harmless).
        if fs.exists(MerkleTreeFile.fileName), let reader = try? LogReader(fs) { _ = try? MerkleTreeFile.open(fs, reader: reader) }
    }

    /// Gives the ledger up without syncing, snapshotting or sealing, as a crashed
    /// process would (durable appends are safe; the lock is released).
    package nonisolated func abandon() {
        writer.abandon()
    }

    /// The sequence number of the last event appended (0 for an empty ledger).
    public var lastSequence: UInt64 { writer.nextSequence - 1 }

    /// The owner's time zone (an IANA identifier), nil until one is set: the zone in
    /// which dates without one are read. (After any open import, as every read.)
    public var ownerTimeZone: String? {
        get async { await read { $0.ownerTimeZone } }
    }

    /// The registration of the app `bundleIdentifier` (what a `HealthStore` is made
    /// for), nil when it is not registered (after any open import).
    public func registration(ofApp bundleIdentifier: String) async -> AppRegistration? {
        await read { state in state.registry.ordinal(of: bundleIdentifier).flatMap { state.registry.registration($0) } }
    }

    /// The ordinal the app `bundleIdentifier` was registered with (1 for the first
    /// app), nil when it is not registered.
    public func ordinal(ofApp bundleIdentifier: String) async -> AppOrdinal? {
        await read { $0.registry.ordinal(of: bundleIdentifier) }
    }

    /// The ledger's id (from the log header).
    public nonisolated var ledgerId: UUID { writer.header.ledgerId }
    /// The log's chain head: the link of the last batch.
    public nonisolated var chainHead: SHA256Digest { writer.chainHead }
    /// Bytes of the log in its file (written, perhaps not yet durable): appends
    /// still queued in the writer are not counted, so a reader of the file finds at
    /// least this much.
    public nonisolated var logLength: UInt64 { writer.writtenLength }
}
