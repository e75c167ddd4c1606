import LedgerCore
import LedgerKeys
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

    /// Creates a new encrypted ledger here (issue 32): a new key-encryption key written
    /// to `keyFile` (never overwriting anything there), the key store under it, and a
    /// log of format version 2 whose health-bearing events are sealed.
    /// A PostgreSQL location keeps its key store in `healthledger_keys`, beside the log.
    /// - Throws: `LedgerLocationError.keyFile` (the file exists, or cannot be made);
    ///   `LogError.ledgerExists`.
    package func createEncrypted(createdAt: Int64? = nil) throws -> Ledger {
        guard let keyFile else { throw LedgerLocationError.keyFile("usage: init --encrypt needs --key-file PATH (or HEALTHLEDGER_KEY_FILE): where to write the new key-encryption key") }
        // The key file is made below: the location is looked at without it.
        guard !(try LedgerLocation(text).fileSystem().exists(LogWriter.logFileName)) else { throw LogError.ledgerExists(path: text) }
        do { _ = try KeyEncryptionKey.create(at: keyFile) } catch { throw LedgerLocationError.keyFile(error.description) }
        var options = LedgerOptions()
        options.log.sealedFormat = true
        options.log.createdAt = createdAt
        return try Ledger.create(fileSystem(), options: options)
    }
}
