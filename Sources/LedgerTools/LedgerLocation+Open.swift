import LedgerCore
import LedgerLog

extension LedgerLocation {
    /// Opens the ledger for writing: its lock, recovery of a torn tail, the projections
    /// (`Ledger.openReport` says what recovery cut and which snapshots were skipped).
    /// No ledger there is `LogError.ledgerNotFound`.
    package func openForWriting(lockTimeout: Double = 0, progress: ((ReplayProgress) -> Void)? = nil) throws -> Ledger {
        let fs = try fileSystem()
        guard fs.exists(LogWriter.logFileName) else { throw LogError.ledgerNotFound(path: fs.path) }
        return try Ledger.open(fs, options: LedgerOptions(log: LogWriterOptions(lockTimeout: lockTimeout)), progress: progress)
    }

    /// Creates a new ledger here (`LogError.ledgerExists` when one is).
    package func create() throws -> Ledger { try Ledger.create(fileSystem()) }
}
