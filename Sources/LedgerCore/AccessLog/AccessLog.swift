import Foundation
import LedgerLog

/// The access log: every read a client was answered, in a log of its own beside the
/// ledger (`access/ledger.log`, the ledger log's format: framed, CRC32C-checked,
/// SHA-256 chained, synced), never in the ledger's history — reading changes no
/// health data, and the ledger's digest does not move when someone reads.
///
/// A reader is answered only after its entry is durable (`record` returns): a read
/// that cannot be recorded is not answered. Concurrent records share one sync (the
/// log writer's group commit).
package final class AccessLog: Sendable {
    /// The subfolder of the ledger folder that holds it.
    package static let folderName = "access"

    private let writer: LogWriter

    private init(writer: LogWriter) { self.writer = writer }

    /// The access log's own folder for a ledger at `ledgerPath`.
    package static func fileSystem(ledgerPath: String) -> PosixFileSystem {
        PosixFileSystem(path: ledgerPath + "/" + folderName)
    }

    /// Opens the access log of the ledger at `ledgerPath` for appending (its own
    /// lock), creating it (0700 folder, 0600 file) the first time.
    package static func openForWriting(ledgerPath: String, lockTimeout: Double = 0) throws -> AccessLog {
        let fs = fileSystem(ledgerPath: ledgerPath)
        let options = LogWriterOptions(lockTimeout: lockTimeout)
        if fs.exists(LogWriter.logFileName) { return AccessLog(writer: try LogWriter.open(fs, options: options)) }
        return AccessLog(writer: try LogWriter.create(fs, options: options))
    }

    /// Appends one entry and returns its sequence once it is durable.
    @discardableResult
    package func record(_ entry: AccessEntry) async throws -> UInt64 {
        let range = try await writer.append([LogRecord(kind: AccessEntry.kind, kindVersion: AccessEntry.version, payload: entry.payload)],
                                            durability: .durable)
        return range.lowerBound
    }

    /// Syncs, seals and releases the lock.
    package func close() async throws { try await writer.close() }

    /// Releases the lock without sealing (what a crash would leave; appends already
    /// acknowledged are durable).
    package func abandon() { writer.abandon() }

    /// Whether the ledger at `ledgerPath` has an access log.
    package static func exists(ledgerPath: String) -> Bool {
        fileSystem(ledgerPath: ledgerPath).exists(LogWriter.logFileName)
    }

    /// Every entry, in order (read without the lock; a batch being written is not seen).
    package static func entries(ledgerPath: String) throws -> [StoredAccessEntry] {
        let reader = try LogReader(fileSystem(ledgerPath: ledgerPath))
        var out: [StoredAccessEntry] = []
        var failure: EventDecodingError?
        try reader.forEachRecord { record in
            let (kind, version, sequence, recordedAt) = (record.kind, record.kindVersion, record.sequence, record.recordedAt)
            let decoded = record.withPayload { (payload) -> Result<AccessEntry, EventDecodingError> in
                payload.withUnsafeBytes { bytes in
                    Result { () throws(EventDecodingError) -> AccessEntry in try AccessEntry(kind: kind, version: version, payload: bytes) }
                }
            }
            switch decoded {
            case .success(let entry): out.append(StoredAccessEntry(sequence: sequence, recordedAt: recordedAt, entry: entry))
            case .failure(let e):
                failure = e
                return false
            }
            return true
        }
        if let failure { throw AccessLogError.undecodable(failure) }
        return out
    }

    /// What `verify` found in an access log: the log layer's report (bytes, chain) and
    /// whether every record decodes as an access entry.
    package struct Verification: Sendable {
        package let log: LogVerifier.Report
        package let entries: Int
        package let undecodable: EventDecodingError?
        package var isIntact: Bool { log.isIntact && undecodable == nil }
    }

    /// Verifies the access log of the ledger at `ledgerPath` (nil when it has none).
    package static func verify(ledgerPath: String) throws -> Verification? {
        guard exists(ledgerPath: ledgerPath) else { return nil }
        let report = try LogVerifier.verify(fileSystem(ledgerPath: ledgerPath))
        guard report.isIntact else { return Verification(log: report, entries: 0, undecodable: nil) }
        do {
            return Verification(log: report, entries: try entries(ledgerPath: ledgerPath).count, undecodable: nil)
        } catch AccessLogError.undecodable(let e) {
            return Verification(log: report, entries: 0, undecodable: e)
        }
    }
}

/// Why the access log cannot be read.
package enum AccessLogError: Error, Sendable, CustomStringConvertible {
    /// A record that is not an access entry this version reads.
    case undecodable(EventDecodingError)

    package var description: String {
        switch self {
        case .undecodable(let e): "damaged: the access log holds a record that is not an access entry: \(e)"
        }
    }
}
