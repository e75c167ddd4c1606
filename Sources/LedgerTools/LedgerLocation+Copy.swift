import LedgerLog
#if HEALTHLEDGER_POSTGRES
import LedgerPostgres
#endif

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
    ///
    /// An encrypted ledger's key store (sealed under the same key-encryption key) is
    /// copied with its log, byte for byte, or the copy could never be read: a folder's
    /// `keys/keys.bin`, a PostgreSQL ledger's `healthledger_keys` row.
    package func copy(to destination: LedgerLocation) throws -> LedgerCopyReport {
        let from = try fileSystem(), to = try destination.fileSystem()
        guard from.exists(LogWriter.logFileName) else { throw LogError.ledgerNotFound(path: from.path) }
        let sealed = try Self.isEncrypted(from)
        // Into a database the key row goes first, as `init --encrypt` makes it: a log
        // there is never deleted, so a copy stopped after it must not leave a log
        // without its keys (a key row left by a stopped copy is taken again when it
        // holds the same bytes).
        let keys = sealed ? try keyStoreBytes(from) : nil
        if let keys, destination.isDatabase {
            guard !to.exists(LogWriter.logFileName) else { throw ToolError.ledgerExists(path: to.path) }
            try destination.putKeyStore(keys, into: to)
        }
        let report: LogCopy.Report
        do {
            report = try LogCopy.copy(from: from, to: to)
        } catch LogError.ledgerExists(let path) {
            throw ToolError.ledgerExists(path: path)
        }
        if let keys, !destination.isDatabase { try destination.putKeyStore(keys, into: to) }
        return LedgerCopyReport(from: from.path, to: to.path, bytes: UInt64(report.bytes), batches: UInt64(report.batches),
                                records: UInt64(report.records), chainHead: report.chainHead.hex)
    }

    /// Whether the ledger's log is format version 2 (it may hold sealed records).
    static func isEncrypted(_ fs: any LogFileSystem) throws -> Bool {
        let file = try fs.open(LogWriter.logFileName, .readOnly)
        defer { file.close() }
        return try LogFileHeader.read(from: file, path: fs.path).allowsSealedRecords
    }

    /// The sealed key store's bytes: `keys/keys.bin`, or the ledger's row.
    func keyStoreBytes(_ fs: any LogFileSystem) throws -> [UInt8] {
        #if HEALTHLEDGER_POSTGRES
        if isDatabase {
            return try postgresKeyStore().read()
        }
        #endif
        let name = "keys/keys.bin"
        let source = try fs.open(name, .readOnly)
        defer { source.close() }
        return try source.readAll(path: fs.path + "/" + name)
    }

    /// Puts a copied key store's bytes here: a new `keys/keys.bin` (0600 in a 0700
    /// folder, synced with its folder), or a new row of `healthledger_keys` (one with
    /// other bytes is `ToolError.ledgerExists`).
    func putKeyStore(_ bytes: [UInt8], into to: any LogFileSystem) throws {
        #if HEALTHLEDGER_POSTGRES
        if isDatabase {
            let store = try postgresKeyStore()
            do {
                try store.create(bytes)
            } catch .storeExists {
                // Another ledger's keys, or this copy's from a run that stopped before its log.
                guard try store.read() == bytes else { throw ToolError.ledgerExists(path: to.path) }
            }
            return
        }
        #endif
        let name = "keys/keys.bin"
        try to.createSubfolder("keys")
        try to.syncFolder(nil)
        let target = try to.open(name, .createNew)
        defer { target.close() }
        try bytes.withUnsafeBytes { try target.write($0, at: 0) }
        try target.sync()
        try to.syncFolder("keys")
    }
}
