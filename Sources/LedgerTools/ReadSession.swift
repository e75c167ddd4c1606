import Foundation
import LedgerCore
import LedgerLog
import Synchronization

/// One front-end command's reads of one ledger, and what they must tell afterwards.
///
/// Read-only commands read without the writer's lock (`ReadOnlyLedger`), so that they
/// work while a writer runs; the session remembers every reader and every mapped
/// snapshot it opened, so that after the command (printed or failed) the front end
/// can ask one place:
/// - `stoppedShort`: a read stopped before the log's end (an incomplete batch: a writer
///   mid-append, or a torn tail the next writer cuts); what was printed may miss it.
/// - `damageFound`: a mapped snapshot failed its checks while it was read (rule S8).
///   What was printed may rest on the zeros a damaged block reads as, so the command
///   fails with this problem in place of any other error.
/// - `setAsideDamagedSnapshots()`: such a snapshot is moved aside, and the next read
///   rebuilds from the log.
/// Notes for people (snapshots skipped, an import not yet committed, rule E11) go to
/// `note`, the front end's channel for them (the CLI's stderr).
package final class ReadSession: Sendable {
    package let location: LedgerLocation
    let note: @Sendable (String) -> Void
    private let opened = Mutex(Opened())

    private struct Opened {
        var readers: [LogReader] = []
        var damages: [SnapshotDamage] = []
        var fileSystem: (any LogFileSystem)?
    }

    /// `note` receives each line a reader should know ("warning: …", "note: …").
    package init(_ location: LedgerLocation, note: @escaping @Sendable (String) -> Void) {
        self.location = location
        self.note = note
    }

    /// The ledger's files, opened once per session (a PostgreSQL ledger: one connection).
    package func fileSystem() throws -> any LogFileSystem {
        if let fs = opened.withLock({ $0.fileSystem }) { return fs }
        let fs = try location.fileSystem()
        return opened.withLock {
            if let first = $0.fileSystem { return first }  // another thread opened it first
            $0.fileSystem = fs
            return fs
        }
    }

    /// A reader of the log (no lock), remembered for `stoppedShort`.
    package func reader() throws -> (any LogFileSystem, LogReader) {
        let fs = try fileSystem()
        let reader = try LogReader(fs)
        opened.withLock { $0.readers.append(reader) }
        return (fs, reader)
    }

    /// The ledger as of `limit`, read without the lock. Tells `note` the snapshots it
    /// skipped and an import that has not finished (shown nowhere, rule E11), and
    /// watches its mapped snapshot (rule S8).
    package func open(limit: ReplayLimit = .end, progress: ((ReplayProgress) -> Void)? = nil) throws -> ReadOnlyLedger {
        let (fs, reader) = try reader()
        let ledger = try ReadOnlyLedger(fs, reader: reader, limit: limit, progress: progress)
        for warning in ledger.warnings { note("warning: \(warning)") }
        if let open = ledger.openImport {
            note("note: the import started at event #\(open.startedAt) has not finished (it is running, or its process stopped and the next writer aborts it): nothing of it is shown")
        }
        if let damage = ledger.snapshotDamage { opened.withLock { $0.damages.append(damage) } }
        return ledger
    }

    /// The one read view of the ledger for `viewer`, as of `limit`: it alone applies
    /// what an app may see. An app that is not registered is `appNotRegistered`.
    package func view(as viewer: Viewer, limit: ReplayLimit = .end,
                      progress: ((ReplayProgress) -> Void)? = nil) throws -> LedgerReadView {
        try open(limit: limit, progress: progress).view(as: viewer)
    }

    /// The first incomplete batch a reader of this session stopped at, if any.
    package var stoppedShort: String? {
        opened.withLock { $0.readers.lazy.compactMap(\.stoppedShort).first.map { "\($0)" } }
    }

    /// The first problem the checks of a mapped snapshot found while this session read
    /// it (rule S8), if any.
    package var damageFound: SnapshotProblem? {
        opened.withLock { $0.damages.lazy.compactMap(\.problem).first }
    }

    /// Sets aside every mapped snapshot found damaged, so that the next read rebuilds
    /// from the log.
    package func setAsideDamagedSnapshots() {
        let (fs, damaged) = opened.withLock { ($0.fileSystem, $0.damages.filter { $0.problem != nil }) }
        guard let fs else { return }
        for damage in damaged { SnapshotFile.setAside(fs, damage.file) }
    }
}
