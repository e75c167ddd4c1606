import Foundation
import LedgerLog

/// Builds the projections for a point in the log the fastest way: the newest usable
/// snapshot at or before that point, then replay of the tail. A damaged, foreign or
/// misplaced snapshot is skipped with a warning (and a full replay happens instead).
package enum StateLoader {
    package struct Loaded: Sendable {
        package var state: LedgerState
        /// Where the state stands in the log (nil when it stops inside a batch).
        package let position: LogReader.Position?
        /// The snapshot used, if any.
        package let snapshot: String?
        /// Events replayed on top of it.
        package let replayed: UInt64
        /// Snapshots skipped, and why.
        package let warnings: [String]
        package let incompleteTail: LogDamage?
        /// A transactional import replay stopped before (its end not in the log, or
        /// beyond the limit): its events are not in `state` (rule E11).
        package let openImport: OpenImport?
    }

    /// `mapped` (readers, rule S8): the snapshot's columns are mapped, not read — a
    /// large ledger opens without reading them; each block is checked when first read,
    /// and a reader asks `state.checkIntact()` before it answers.
    package static func load(_ fs: any LogFileSystem, reader: LogReader, limit: ReplayLimit = .end,
                            useSnapshots: Bool = true, mapped: Bool = false, progress: ((ReplayProgress) -> Void)? = nil) throws -> Loaded {
        var warnings: [String] = []
        var state = LedgerState()
        var position = reader.start
        var used: String?
        if useSnapshots {
            for name in SnapshotFile.list(fs) {
                do {
                    let header = try SnapshotFile.header(fs, name)
                    switch limit {
                    case .end: break
                    case .sequence(let last): if header.lastSequence > last { continue }
                    case .instant(let t): if header.lastRecordedAt > t { continue }
                    }
                    let (loadedHeader, loadedState) = try SnapshotFile.load(fs, name, reader: reader, mapped: mapped)
                    state = loadedState
                    position = loadedHeader.position
                    used = name
                    break
                } catch {
                    warnings.append("\(error); ignored (it is derived data and will be rebuilt)")
                }
            }
        }
        let outcome = try Replayer.replay(reader, into: &state, from: position, limit: limit, progress: progress)
        return Loaded(state: state, position: outcome.position, snapshot: used, replayed: outcome.applied,
                      warnings: warnings, incompleteTail: outcome.incompleteTail, openImport: outcome.openImport)
    }
}
