import Foundation
import LedgerLog

/// The attack `verify --checkpoint` exists for: rewrite a ledger's history from event
/// `sequence` on and re-chain it, so that every rule of the log still holds (same file
/// header and ledger id, valid checksums, a valid hash chain, dense sequence numbers)
/// and today's `verify` finds nothing wrong.
///
/// The log is cut at the start of the batch holding `sequence`, then the records from
/// that batch on are appended again through the real writer, each passed through
/// `transform` (kind, version, payload; the writer stamps a new `recordedAt`).
package enum LogRewriter {
    package static func rechain(_ fs: any LogFileSystem, from sequence: UInt64,
                               transform: (LogRecord) -> LogRecord = { $0 }) async throws {
        let reader = try LogReader(fs)
        var cut: UInt64?
        var kept: [[LogRecord]] = []
        try reader.forEachBatch { batch in
            if batch.isSeal { return true }
            let last = batch.firstSequence + UInt64(batch.recordCount) - 1
            if last >= sequence {
                if cut == nil { cut = batch.offset }
                var records: [LogRecord] = []
                batch.forEachRecord { r in
                    records.append(LogRecord(kind: r.kind, kindVersion: r.kindVersion, payload: r.payloadCopy()))
                }
                kept.append(records)
            }
            return true
        }
        guard let cut else { return }
        let file = try fs.open(LogWriter.logFileName, .readWrite)
        try file.truncate(to: cut)
        try file.sync()
        file.close()
        // A stale sparse index would point past the cut; it is derived, so drop it.
        if fs.exists("index/log.idx") { try fs.remove("index/log.idx") }
        let writer = try LogWriter.open(fs)
        for records in kept { _ = try await writer.append(records.map(transform)) }
        try await writer.close()
    }
}
