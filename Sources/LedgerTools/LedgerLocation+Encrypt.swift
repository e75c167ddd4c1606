import Foundation
import HealthModel
import LedgerCore
import LedgerLog

/// What `encrypt SRC DST` did.
package struct LedgerEncryptReport: Sendable {
    package let from: String
    package let to: String
    /// The source's events copied (its seals are not events).
    package let events: UInt64
    /// The source's chain head (hex), recorded in the copy's first event.
    package let sourceChainHead: String
    /// The copy's chain head (hex) once closed.
    package let chainHead: String
}

extension LedgerLocation {
    /// Copies this plain ledger into a new encrypted ledger at `destination` (its key
    /// file made new, as `init --encrypt` makes it), event by event: the copy's first
    /// event (`encryptedFrom`, rule E17) names this ledger and its chain head; every
    /// event follows at its own time, laid out and sealed as the encrypted ledger's
    /// writer lays out its own, held to the rules and folded (an aborted import's
    /// passed over, as replay passes over it). The source is read, never written: its
    /// chain is checked first, whole.
    /// - Throws: `encryptionUnsupported` (PostgreSQL at either end, or a source already
    ///   encrypted: `copy` copies those); `ToolError.sourceOpenImport` for a source that
    ///   ends inside an import still open (open it for writing once: its writer aborts
    ///   it); what `createEncrypted` throws; a rule an event breaks (the copy is left
    ///   incomplete, and says so).
    package func encrypt(to destination: LedgerLocation, now: Int64 = LogClock.now()) async throws -> LedgerEncryptReport {
        guard !isDatabase, !destination.isDatabase else {
            throw LedgerLocationError.encryptionUnsupported("usage: encrypt copies a ledger folder into a new one; encrypted PostgreSQL ledgers are not supported yet")
        }
        let fs = PosixFileSystem(path: text)
        guard fs.exists(LogWriter.logFileName) else { throw LogError.ledgerNotFound(path: text) }
        guard !(try Self.isEncrypted(fs)) else {
            throw LedgerLocationError.encryptionUnsupported("usage: \(text) is encrypted already (copy copies it, with its keys)")
        }
        let reader = try LogReader(fs, keys: .some(nil))
        // The whole chain first: what is copied is what the source's chain head proves.
        var firstTime: Int64?
        var events: UInt64 = 0
        let end = try reader.forEachBatch(verifyChain: true) { batch in
            batch.forEachRecord { record in
                if firstTime == nil { firstTime = record.recordedAt }
                events += 1
            }
            return true
        }
        let ledger: Ledger
        do {
            ledger = try destination.createEncrypted(createdAt: reader.header.createdAt)
        } catch LogError.ledgerExists(let path) {
            throw ToolError.ledgerExists(path: path)
        }
        do {
            try await ledger.appendCopied([.encryptedFrom(LedgerOrigin(ledgerId: reader.header.ledgerId, chainHead: end.chainHead.array,
                                                                         events: events, copiedAt: now))],
                                          recordedAt: firstTime ?? now, importId: nil, applied: true)
            try await Self.copyEvents(reader, through: end, into: ledger)
            try await ledger.close()
        } catch {
            ledger.abandon()
            throw ToolError.incompleteCopy(path: destination.text, cause: "\(error)")
        }
        let copy = try LogReader(try destination.fileSystem())
        let copied = try copy.forEachBatch(verifyChain: true) { _ in true }
        return LedgerEncryptReport(from: text, to: destination.text, events: events, sourceChainHead: end.chainHead.hex,
                                   chainHead: copied.chainHead.hex)
    }

    /// One source batch as the copy appends it.
    private struct CopiedBatch {
        let events: [Event]
        let recordedAt: Int64
        let importId: UUID?
        let applied: Bool
    }

    /// Copies the source's batches in chunks of about 20,000 events (read, then
    /// appended, then read on from where the reading stopped), so memory stays bounded.
    private static func copyEvents(_ reader: LogReader, through end: LogReader.ScanEnd, into ledger: Ledger) async throws {
        var position = reader.start
        var registry = AppRegistry()
        // The import transaction the records are in: its id, whether it applies, its last event.
        var transaction: (importId: UUID, applied: Bool, through: UInt64)?
        while position.offset < end.endOffset {
            var chunk: [CopiedBatch] = []
            var count = 0
            var problem: (any Error)?
            _ = try reader.forEachBatch(position: position) { batch in
                guard batch.endOffset <= end.endOffset else { return false }
                let batchStart = position
                position = batch.endPosition
                guard !batch.isSeal else { return true }
                var events: [Event] = []
                var recordedAt: Int64 = 0
                var importId: UUID?
                var applied = true
                batch.forEachRecord { record in
                    guard problem == nil else { return }
                    recordedAt = record.recordedAt
                    do {
                        let event = try EventCodec.decode(record, source: registry.source)
                        if case .appRegistered(let ordinal, let r) = event { registry.register(ordinal, r) }
                        if case .importStarted(let start) = event, start.isTransaction {
                            switch ImportBrackets.close(of: start.importId, startedAt: record.sequence, scanningFrom: batchStart, reader: reader) {
                            case .finished(let at, _)?: transaction = (start.importId, true, at)
                            case .aborted(let at, _)?: transaction = (start.importId, false, at)
                            case nil: throw ToolError.sourceOpenImport(importId: start.importId)
                            }
                        }
                        if let t = transaction {
                            importId = t.importId
                            applied = t.applied
                            if record.sequence >= t.through { transaction = nil }
                        } else {
                            importId = nil
                            applied = true
                        }
                        events.append(event)
                    } catch {
                        problem = error
                    }
                }
                if let problem { throw problem }
                chunk.append(CopiedBatch(events: events, recordedAt: recordedAt, importId: importId, applied: applied))
                count += events.count
                return count < 20_000
            }
            for b in chunk {
                try await ledger.appendCopied(b.events, recordedAt: b.recordedAt, importId: b.importId, applied: b.applied)
            }
        }
    }
}
