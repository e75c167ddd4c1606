import Foundation
import LedgerChecksums
import LedgerLog

/// A ledger read without its writer's lock, as read-only commands read it while a
/// writer runs: the projections from the newest usable snapshot (mapped, rule S8)
/// plus the log's tail, asked through `LedgerReadView` like an open ledger, and able
/// to fold in what writers append later (a follower).
///
/// Nothing of an import transaction that has not committed is in it (rule E11):
/// `openImport` says one is running (or stopped, for the next writer to abort).
package struct ReadOnlyLedger {
    private var state: LedgerState
    /// After the last whole batch folded.
    private var position: LogReader.Position
    private let fs: any LogFileSystem
    private let reader: LogReader
    /// Snapshots skipped, and why (each a line for people).
    package let warnings: [String]
    /// The import transaction the replay stopped before, if any (rule E11).
    package private(set) var openImport: OpenImport?

    /// Loads the ledger in `fs` as of `limit`. `mapped`: the snapshot's columns are
    /// read block by block when first used (a reader), not all at once.
    package init(_ fs: any LogFileSystem, reader: LogReader, limit: ReplayLimit = .end, mapped: Bool = true,
                 progress: ((ReplayProgress) -> Void)? = nil) throws {
        let loaded = try StateLoader.load(fs, reader: reader, limit: limit, mapped: mapped, progress: progress)
        state = loaded.state
        position = loaded.position ?? reader.start
        chainHead = loaded.position?.link
        self.fs = fs
        self.reader = reader
        warnings = loaded.warnings
        openImport = loaded.openImport
    }

    /// The damage record of the mapped snapshot read, if one was (checked as its
    /// blocks are first read; a reader that printed from it must fail, rule S8).
    package var snapshotDamage: SnapshotDamage? { state.snapshotDamage }

    /// The log's chain head as read: the link of the last whole batch folded (nil
    /// when the read stopped inside a batch: a writer mid-append, a torn tail).
    package private(set) var chainHead: SHA256Digest?

    /// Bytes of the log file now (a writer may have appended since the load).
    package func logBytes() throws -> UInt64 { try reader.size() }

    /// The owner's time zone (an IANA identifier), nil until one is set.
    package var ownerTimeZone: String? { state.ownerTimeZone }

    /// The view for `viewer`, taking the projections along (for a command that reads
    /// once). Throws `appNotRegistered` for an app that is not registered.
    package consuming func view(as viewer: Viewer) throws(RuleViolation) -> LedgerReadView {
        try LedgerReadView(state: state, fs: fs, ledgerId: reader.header.ledgerId, viewer: viewer)
    }

    /// The projections themselves, for the one reader that judges an export against
    /// them as the writer would (the Apple Health importer's dry run and refusal).
    package consuming func projections() -> LedgerState {
        state
    }

    /// Answers one read for `viewer` (for a reader that reads again after
    /// `catchUp`): the projections are lent to the view, not copied.
    package mutating func read<T>(as viewer: Viewer, _ body: (inout LedgerReadView) throws -> T) throws -> T {
        let app = try LedgerReadView.ordinal(of: viewer, in: state)
        var view = LedgerReadView(taking: &state, fs: fs, ledgerId: reader.header.ledgerId, viewer: viewer, app: app)
        defer { view.giveBack(to: &state) }
        return try body(&view)
    }

    /// Folds in the events appended since the last load or catch-up (none: one batch
    /// header read). An import transaction still open is left out, as at load.
    package mutating func catchUp() throws {
        let outcome = try Replayer.replay(reader, into: &state, from: position)
        if let p = outcome.position { position = p; chainHead = p.link }
        openImport = outcome.openImport
    }
}
