import LedgerLog

/// What a copy wrote: the log's bytes, byte for byte, and the chain head both ends agree on.
package struct LedgerCopyReport: Sendable {
    package let from: String
    package let to: String
    package let bytes: UInt64
    package let batches: UInt64
    package let records: UInt64
    /// The chain head (hex) of the copy, equal to the source's.
    package let chainHead: String
}

extension LedgerLocation {
    /// Copies this ledger's log to `destination`, byte for byte: verified here first
    /// (every checksum, the whole chain), written there under its writer lock and synced
    /// once (in PostgreSQL, one transaction), then verified there. Derived files are
    /// not copied. No ledger here is `LogError.ledgerNotFound`; one there is
    /// `ToolError.ledgerExists`.
    package func copy(to destination: LedgerLocation) throws -> LedgerCopyReport {
        let from = try fileSystem(), to = try destination.fileSystem()
        guard from.exists(LogWriter.logFileName) else { throw LogError.ledgerNotFound(path: from.path) }
        let report: LogCopy.Report
        do {
            report = try LogCopy.copy(from: from, to: to)
        } catch LogError.ledgerExists(let path) {
            throw ToolError.ledgerExists(path: path)
        }
        return LedgerCopyReport(from: from.path, to: to.path, bytes: UInt64(report.bytes), batches: UInt64(report.batches),
                                records: UInt64(report.records), chainHead: report.chainHead.hex)
    }
}
