/// `verify` for the log layer: every byte against every rule, and the chain
/// recomputed from the file header to the last batch.
public enum LogVerifier {
    /// What a full verification found.
    public struct Report: Sendable, Equatable {
        package let header: LogFileHeader
        public let bytes: UInt64
        public let batches: Int
        public let seals: Int
        public let records: UInt64
        /// The sequence number after the last valid record.
        public let nextSequence: UInt64
        /// The link of the last valid batch.
        public let chainHead: SHA256Digest
        /// The first failed rule, if any; `inDurablePrefix` tells corruption from a
        /// possibly torn tail. Either way the log is not intact.
        public let damage: LogDamage?
        /// Why an intact `index/log.idx` (its checksum holds) does not fit the log — another
        /// ledger's, or written for bytes the log no longer holds: evidence that the log
        /// was cut or replaced. Nil when there is no index, it agrees, or it is damaged.
        public let indexDisagreement: String?
        /// Why `index/log.idx` is ignored when its own bytes are damaged (I1, e.g.
        /// `index/log.idx ignored: checksum [I1]`): derived data, rebuilt by the next
        /// writer's open; says nothing about the log, which was checked in full.
        public let ignoredIndex: String?

        /// An intact index that disagrees with the log (`indexDisagreement`).
        public var staleIndex: Bool { indexDisagreement != nil }

        /// True when the log is intact.
        public var isIntact: Bool { damage == nil }
    }

    /// Verifies the ledger's log: file header, every batch and record, the chain.
    /// Throws only when the log cannot be read at all (missing, not a log, I/O).
    public static func verify(_ fs: any LogFileSystem) throws -> Report {
        guard fs.exists(LogWriter.logFileName) else { throw LogError.ledgerNotFound(path: fs.path) }
        let file = try fs.open(LogWriter.logFileName, .readOnly)
        defer { file.close() }
        let opening: LogOpening
        do {
            opening = try LogOpening(fs: fs, file: file)
        } catch let error as LogError {
            // A header that fails H1 or H2 is reported like any other damage.
            let size = (try? file.size()) ?? 0
            let damage: LogDamage
            switch error {
            case .damaged(let found): damage = found
            case .notALedgerLog where size >= UInt64(LogFormat.fileHeaderLength):
                damage = LogDamage(kind: .fileHeader, offset: 0, length: UInt64(LogFormat.fileHeaderLength), sequence: nil,
                                   inDurablePrefix: true)
            default: throw error
            }
            return Report(header: LogFileHeader(formatVersion: 0, minReaderVersion: 0, ledgerId: UUIDZero.value, createdAt: 0),
                          bytes: size, batches: 0, seals: 0, records: 0, nextSequence: 1, chainHead: .zero,
                          damage: damage, indexDisagreement: nil, ignoredIndex: nil)
        }
        let scanner = LogScanner(file: file, end: opening.size, offset: UInt64(LogFormat.fileHeaderLength), nextSequence: 1,
                                 link: opening.genesis, lastRecordedAt: opening.header.createdAt, checkChain: true,
                                 checkRecords: true, sealedRecords: opening.header.allowsSealedRecords)
        var batches = 0, seals = 0
        var records: UInt64 = 0
        var damage: LogDamage?
        var sparse: [UInt64: UInt64] = [:]
        loop: while true {
            switch try scanner.nextClassified() {
            case .end:
                break loop
            case .batch(let batch):
                batches += 1
                if batch.header.isSeal { seals += 1 }
                records += UInt64(batch.header.recordCount)
                sparse[batch.offset] = batch.header.firstSequence
            case .damaged(let found), .incompleteTail(let found):
                damage = found
                break loop
            }
        }
        // I3: bytes below a length the index proves durable are never a torn tail, and
        // a log shorter than that length lost acknowledged bytes.
        let knownDurable = LogCheckpoint.knownDurableLength(fs, ledgerId: opening.header.ledgerId, seenLength: opening.size) ?? 0
        if let found = damage, !found.inDurablePrefix, found.offset < knownDurable {
            damage = found.withDurability(true)
        } else if damage == nil, knownDurable > opening.size {
            damage = LogDamage(kind: .truncatedBelowDurable, offset: opening.size, length: knownDurable - opening.size,
                               sequence: nil, inDurablePrefix: true)
        }
        // I1: a damaged index is derived data to rebuild; an intact one that does not fit
        // the log is a finding.
        var disagreement: String?, ignored: String?
        switch LogCheckpoint.examine(fs, log: file, logLength: opening.size, ledgerId: opening.header.ledgerId,
                                     genesis: opening.genesis) {
        case .absent: break
        case .damaged(let why): ignored = why.description
        case .disagrees(let why): disagreement = why.reason
        case .agrees(let checkpoint):
            if let entry = checkpoint.entries.first(where: { sparse[$0.offset] != $0.firstSequence }) {
                disagreement = "its entry for event \(entry.firstSequence) at byte \(entry.offset) is not a batch of the log"
            } else if checkpoint.coveredLength > scanner.offset {
                disagreement = "it covers \(checkpoint.coveredLength) bytes, the log is valid to byte \(scanner.offset)"
            }
        }
        return Report(header: opening.header, bytes: opening.size, batches: batches, seals: seals, records: records,
                      nextSequence: scanner.nextSequence, chainHead: scanner.link, damage: damage,
                      indexDisagreement: disagreement, ignoredIndex: ignored)
    }
}

import Foundation
import LedgerChecksums

enum UUIDZero {
    static let value = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}
