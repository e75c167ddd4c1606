import Foundation
import LedgerCore
import LedgerLog

/// The owner's reads of the log itself, beside the read view: history, replay,
/// verification, and waiting for appends.
extension ReadSession {
    /// Every event that touched `subject` (a type, an object, raw records), with who
    /// wrote it, when, and under which grant.
    package func history(of subject: LedgerAudit.Subject) throws -> [LedgerAudit.Entry] {
        try LedgerAudit.history(reader().1, of: subject)
    }

    /// The projections rebuilt as of `limit` (`ReplaySummary`), from the newest usable
    /// snapshot unless `useSnapshots` is false; `writeSnapshot` saves one (whole log only).
    package func replay(limit: ReplayLimit, useSnapshots: Bool, at instant: Date?, writeSnapshot: Bool,
                        progress: ((ReplayProgress) -> Void)? = nil) throws -> ReplaySummary {
        let (fs, reader) = try reader()
        return try ReplaySummary.replay(fs, reader: reader, limit: limit, useSnapshots: useSnapshots, at: instant,
                                        writeSnapshot: writeSnapshot, progress: progress)
    }

    /// The log, its events and rules and the snapshots checked (`LedgerVerifier`).
    package func verifyLedger(progress: ((ReplayProgress) -> Void)? = nil) throws -> LedgerVerifier.Report {
        try LedgerVerifier.verify(fileSystem(), progress: progress)
    }

    /// A watcher of the log file that wakes when a writer appends: made before the
    /// first read, so that no write after that read is missed.
    package func appendWatcher() throws -> LogWatcher {
        try LogWatcher(fileSystem())
    }
}
