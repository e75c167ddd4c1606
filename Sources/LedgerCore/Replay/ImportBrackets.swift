import Foundation
import LedgerLog

/// How a transactional import (an `importStarted` of version 2) ends in the log:
/// rule E11 (events/FORMAT.md). Its events — from the start up to the first
/// `importFinished` or `importAborted` naming its importId — are applied only when
/// that event is an `importFinished`.
package enum ImportClose: Sendable, Equatable {
    /// Finished at this event: the import applies, as of that event.
    case finished(sequence: UInt64, recordedAt: Int64)
    /// Aborted at this event: none of the import's events applies.
    case aborted(sequence: UInt64, recordedAt: Int64)
}

/// An import whose end is not (yet) in the log: still running in another process,
/// or stopped without finishing (the next writer aborts it). Replay stops before it.
package struct OpenImport: Sendable, Equatable {
    /// The import (its `importStarted`).
    package let importId: UUID
    /// The sequence number of its `importStarted`.
    package let startedAt: UInt64
    /// The position just before the batch its `importStarted` begins.
    package let position: LogReader.Position
}

/// Finding the end of a transactional import: replay looks ahead from its start
/// (reading and checking the batches, decoding nothing but the import events' ids)
/// before it folds the first of its events.
package enum ImportBrackets {
    /// The first `importFinished` or `importAborted` naming `importId` after the
    /// event `startedAt`, scanning from `position` (the batch the start is in, or one
    /// before it); nil when the log ends first (or stops at a batch that does not
    /// check: replay stops there too).
    package static func close(of importId: UUID, startedAt: UInt64, scanningFrom position: LogReader.Position,
                              reader: LogReader) -> ImportClose? {
        var found: ImportClose?
        let finished = EventKind.importFinished.rawValue, aborted = EventKind.importAborted.rawValue
        do {
            try reader.forEachBatch(position: position) { batch in
                batch.forEachRecord { record in
                    guard found == nil, record.sequence > startedAt, record.kind == finished || record.kind == aborted,
                          EventCodec.importId(of: record) == importId else { return }
                    found = record.kind == finished ? .finished(sequence: record.sequence, recordedAt: record.recordedAt)
                                                    : .aborted(sequence: record.sequence, recordedAt: record.recordedAt)
                }
                return found == nil
            }
        } catch {
            return nil  // damage: the replay itself reports it when it gets there
        }
        return found
    }
}
