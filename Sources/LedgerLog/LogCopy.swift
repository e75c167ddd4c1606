import LedgerChecksums

/// Copies a ledger's log from one store to another, byte for byte: a folder to a
/// database, back, or between two of either. The source is verified first (every
/// rule, the whole chain) and only its valid batches are copied, as they are; the
/// destination must hold no ledger, is written under its writer lock, synced once at
/// the end (in a database one transaction, the ledger's header row included: the copy
/// is all there or not at all), and verified again. Derived files are not copied: they are rebuilt beside the copy.
public enum LogCopy {
    /// What was copied.
    public struct Report: Sendable, Equatable {
        /// Bytes of the log (header and batches).
        public let bytes: UInt64
        public let batches: Int
        public let records: UInt64
        /// The chain head, equal in source and copy.
        public let chainHead: SHA256Digest
    }

    /// Copies the log of `source` into `destination`. Throws `LogError.damaged` when the
    /// source is not intact (nothing is written), `ledgerExists` when the destination
    /// holds a ledger, `ledgerLocked` when another writer holds it.
    public static func copy(from source: any LogFileSystem, to destination: any LogFileSystem,
                            lockTimeout: Double = 0) throws -> Report {
        let check = try LogVerifier.verify(source)
        if let damage = check.damage { throw LogError.damaged(damage) }
        let reader = try LogReader(source)
        let input = try source.open(LogWriter.logFileName, .readOnly)
        defer { input.close() }
        var header = [UInt8](repeating: 0, count: LogFormat.fileHeaderLength)
        guard try header.withUnsafeMutableBytes({ try input.read(into: $0, at: 0) }) == LogFormat.fileHeaderLength else {
            throw LogError.notALedgerLog(reason: "\(source.path)/\(LogWriter.logFileName) is shorter than a log header")
        }

        try destination.createFolder()
        let lock = try destination.lockExclusive(timeout: lockTimeout)
        defer { lock.release() }
        guard !destination.exists(LogWriter.logFileName) else { throw LogError.ledgerExists(path: destination.path) }
        let output = try destination.open(LogWriter.logFileName, .createNew)
        defer {
            output.unlock()
            output.close()
        }
        try output.lockExclusive()
        try header.withUnsafeBytes { try output.write($0, at: 0) }

        var batches = 0
        var records: UInt64 = 0
        var buffer = [UInt8]()
        let end = try reader.forEachBatch(verifyChain: true) { batch in
            let length = Int(batch.endOffset - batch.offset)
            if buffer.count < length { buffer = [UInt8](repeating: 0, count: length) }
            try buffer.withUnsafeMutableBytes { b in
                let view = UnsafeMutableRawBufferPointer(rebasing: b[0..<length])
                guard try input.read(into: view, at: batch.offset) == length else {
                    throw LogError.damaged(LogDamage(kind: .batchTruncated, offset: batch.offset, length: UInt64(length),
                                                     sequence: batch.firstSequence, inDurablePrefix: true))
                }
                try output.write(UnsafeRawBufferPointer(view), at: batch.offset)
            }
            batches += 1
            records += UInt64(batch.recordCount)
            return true
        }
        // One sync for everything: in a database one transaction, header row included.
        try output.sync()
        try destination.syncFolder(nil)

        // The copy must be the same log: same length, same chain head, intact.
        let copied = try LogVerifier.verify(destination)
        if let damage = copied.damage { throw LogError.damaged(damage) }
        guard copied.chainHead == end.chainHead, copied.nextSequence == end.nextSequence else {
            throw LogError.exclusiveAccessLost(path: destination.path,
                                               reason: "the copy's chain head differs from the source's")
        }
        return Report(bytes: end.endOffset, batches: batches, records: records, chainHead: end.chainHead)
    }
}
