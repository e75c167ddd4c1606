/// Every way the log layer can fail, in one place. A refusal by a rule of
/// events/FORMAT.md ends its description with the rule's ID (`… [W1]`, `ruleID`);
/// what the environment did (a missing ledger, a failed system call, a full disk)
/// names no rule.
public indirect enum LogError: Error, Equatable, Sendable {
    /// No ledger at the path (no log file in the folder).
    case ledgerNotFound(path: String)
    /// `create` found a ledger already there.
    case ledgerExists(path: String)
    /// The file is not a HealthLedger log (wrong magic or header shape): `rule` is
    /// H1 (the magic, or too short for a header), H4 (the header length) or P1 (rows
    /// of a PostgreSQL store that are not a log).
    case notALedgerLog(reason: String, rule: String = "H1")
    /// The log needs a newer reader (its minimum reader version is above ours).
    case unsupportedFormatVersion(found: UInt16, minReader: UInt16, supported: UInt16)
    /// Another writer (process or handle) holds the ledger's lock.
    case ledgerLocked(path: String)
    /// Bytes that fail a validity rule, where they cannot be a torn tail: opening for
    /// writing refuses, `verify` reports it. Never repaired silently.
    case damaged(LogDamage)
    /// A previous write or sync failed; this writer refuses everything until the
    /// ledger is reopened (no retried fsync: see PostgreSQL's "fsyncgate").
    /// The cause is the error of the write or sync that failed, itself.
    case writerPoisoned(cause: LogError)
    /// The writer was closed.
    case writerClosed
    /// A system call failed.
    case io(operation: String, path: String, errno: Int32)
    /// A record payload above `LogFormat.payloadLengthMax`, or a batch above
    /// `LogFormat.batchLengthMax`.
    case tooLarge(bytes: Int, limit: Int)
    /// An append with no records.
    case emptyBatch
    /// A record kind of 0 or a kind version of 0 (reserved).
    case invalidKind(kind: UInt16, version: UInt16)
    /// A sequence number that is not in the log.
    case sequenceNotFound(UInt64)
    /// A byte offset at which no batch of the log ends (a snapshot's position that
    /// does not belong to this log, or one past its end).
    case noBatchEndsAt(offset: UInt64)
    /// The writer found the log or its lock not as it left them (another process
    /// wrote, truncated or replaced the log, or `LOCK` was replaced): it stops
    /// rather than overwrite anything (W1, W7).
    case exclusiveAccessLost(path: String, reason: String)
    /// The disk is full (ENOSPC/EDQUOT) during `operation`: nothing of the failed
    /// write is acknowledged.
    case noSpace(operation: String, path: String)
    /// A ledger path component (`snapshots/`, `quarantine/`, `index/`) that is a
    /// symbolic link or not a folder: the ledger never follows it out of its folder.
    case unsafePath(path: String, reason: String)
    /// A sealed record appended to a plain log (format version 1), which has no room
    /// for record flags: `encrypt SRC DST` makes a sealed ledger of a plain one.
    case sealedRecordInPlainLog
    /// A sealed record naming a key the writer does not hold live (no key store given,
    /// or the id unknown or destroyed): refused before anything is written.
    case sealKeyUnavailable(keyId: UInt64)
    /// The sealed record `sequence` could not be opened (`failure` says why: no key
    /// given, the key destroyed, unknown, or the tag broken).
    case sealedRecordUnopened(sequence: UInt64, failure: RecordSealFailure)
}

/// Where and how the log's bytes fail a validity rule.
public struct LogDamage: Equatable, Sendable, CustomStringConvertible {
    /// Which rule failed (FORMAT.md gives each an ID).
    public enum Kind: String, Sendable {
        /// H1/H2: the file header's magic or checksum.
        case fileHeader
        /// B1/B2/B5: a batch header that is not a valid header (magic, checksum, fields).
        case batchHeader
        /// B3: a batch that runs past the end of the file.
        case batchTruncated
        /// B4: a batch whose first sequence number is not the next one.
        case sequenceGap
        /// B6: a batch claiming more durable bytes than precede it.
        case syncedLengthInvalid
        /// R2/B7: records that do not exactly fill their batch, or a record too long.
        case recordFraming
        /// R1: a record's checksum.
        case recordChecksum
        /// R3: a record whose sequence number is not its place in the batch.
        case recordSequence
        /// R4: a record recorded earlier than the one before it.
        case recordTimeOrder
        /// R5/R6/R7: kind 0, kind version 0, reserved bytes or flags not as allowed, a
        /// sealed payload shorter than its keyId, salt and tag.
        case recordFields
        /// B8: a batch's link is not SHA-256(previous link ‖ batch bytes).
        case chainMismatch
        /// Bytes after the last batch that are not a batch (too short for a header).
        case trailingBytes
        /// I3: the log is shorter than a length known durable (the checkpoint's
        /// coveredLength): acknowledged bytes were cut, never a torn tail.
        case truncatedBelowDurable

        /// The FORMAT.md rule IDs this kind stands for, e.g. `R1`.
        public var ruleIDs: String {
            switch self {
            case .fileHeader: "H1/H2"
            case .batchHeader: "B1/B2/B5"
            case .batchTruncated: "B3"
            case .sequenceGap: "B4"
            case .syncedLengthInvalid: "B6"
            case .recordFraming: "R2/B7"
            case .recordChecksum: "R1"
            case .recordSequence: "R3"
            case .recordTimeOrder: "R4"
            case .recordFields: "R5/R6/R7"
            case .chainMismatch: "B8"
            case .trailingBytes: "B3"
            case .truncatedBelowDurable: "I3"
            }
        }
    }

    /// The rule that failed.
    public let kind: Kind
    /// Byte offset in the log file of the damaged unit (record, batch header, link, …).
    public let offset: UInt64
    /// Length in bytes of the damaged unit, when known.
    public let length: UInt64?
    /// Sequence number of the damaged record (or the first of the damaged batch).
    public let sequence: UInt64?
    /// True when the damage lies in bytes a later batch (or a seal) proves were
    /// durable: corruption, never a torn write. False: a possible torn tail.
    public let inDurablePrefix: Bool

    public init(kind: Kind, offset: UInt64, length: UInt64?, sequence: UInt64?, inDurablePrefix: Bool) {
        self.kind = kind
        self.offset = offset
        self.length = length
        self.sequence = sequence
        self.inDurablePrefix = inDurablePrefix
    }

    /// `recordChecksum at byte 1234 (sequence 17), in bytes known durable: damage [R1]`.
    public var description: String {
        if kind == .truncatedBelowDurable {
            return "truncatedBelowDurable at byte \(offset): the log ends there but index/log.idx proves "
                + "\(offset + (length ?? 0)) bytes were durable; acknowledged bytes are missing: damage [I3]"
        }
        var text = "\(kind.rawValue) at byte \(offset)"
        if let sequence { text += " (sequence \(sequence))" }
        text += inDurablePrefix ? ", in bytes known durable: damage" : ", in the unsynced tail: torn write or damage"
        return text + " [\(kind.ruleIDs)]"
    }

    func withDurability(_ durable: Bool) -> LogDamage {
        LogDamage(kind: kind, offset: offset, length: length, sequence: sequence, inDurablePrefix: durable)
    }
}

extension LogError: CustomStringConvertible {
    /// The FORMAT.md rule a refusal cites; nil for a failure of the environment.
    public var ruleID: String? {
        switch self {
        case .notALedgerLog(_, let rule): rule
        case .unsupportedFormatVersion: "H3"
        case .ledgerLocked: "W1"
        case .damaged(let damage): damage.kind.ruleIDs
        case .writerPoisoned: "W5"
        case .tooLarge: "R2/B5"
        case .emptyBatch: "B5"
        case .invalidKind: "R5"
        case .exclusiveAccessLost: "W7"
        case .unsafePath: "W8"
        case .sealedRecordInPlainLog: "R6"
        case .sealKeyUnavailable: "W9"
        case .sealedRecordUnopened: "R8"
        case .ledgerNotFound, .ledgerExists, .writerClosed, .io, .sequenceNotFound, .noBatchEndsAt, .noSpace: nil
        }
    }

    /// One line naming the problem and where it is, then the rule it breaks, if any.
    public var description: String {
        guard let rule = ruleID else { return text }
        if case .damaged = self { return text }  // the damage names its rule itself
        return "\(text) [\(rule)]"
    }

    private var text: String {
        switch self {
        case .ledgerNotFound(let path): "ledgerNotFound: no ledger at \(path)"
        case .ledgerExists(let path): "ledgerExists: a ledger already exists at \(path)"
        case .notALedgerLog(let reason, _): "notALedgerLog: \(reason)"
        case .unsupportedFormatVersion(let found, let minReader, let supported):
            "unsupportedFormatVersion: log format \(found) needs a reader of version \(minReader); this one reads \(supported)"
        case .ledgerLocked(let path): "ledgerLocked: another writer holds \(path)"
        case .damaged(let damage): "damaged: \(damage)"
        case .writerPoisoned(let cause): "writerPoisoned: an earlier write failed (\(cause)); reopen the ledger"
        case .writerClosed: "writerClosed: the writer was closed"
        case .io(let operation, let path, let errno): "io: \(operation) \(path) failed: \(String(cString: strerror(errno))) (errno \(errno))"
        case .tooLarge(let bytes, let limit): "tooLarge: \(bytes) bytes exceeds the limit of \(limit) bytes"
        case .emptyBatch: "emptyBatch: an append needs at least one record"
        case .invalidKind(let kind, let version): "invalidKind: kind \(kind) version \(version) (both must be ≥ 1)"
        case .sequenceNotFound(let seq): "sequenceNotFound: no record \(seq) in the log"
        case .noBatchEndsAt(let offset): "noBatchEndsAt: no batch of the log ends at byte \(offset)"
        case .exclusiveAccessLost(let path, let reason):
            "exclusiveAccessLost: \(reason) at \(path); this writer stops and overwrites nothing"
        case .noSpace(let operation, let path): "noSpace: no space left on device (\(operation) \(path))"
        case .unsafePath(let path, let reason): "unsafePath: \(path) \(reason); refusing to follow it"
        case .sealedRecordInPlainLog:
            "sealedRecordInPlainLog: a log of format version 1 holds no sealed records (encrypt it into a new ledger)"
        case .sealKeyUnavailable(let keyId): "sealKeyUnavailable: no live key \(keyId) to seal a record under"
        case .sealedRecordUnopened(let sequence, let failure): "sealedRecordUnopened: record \(sequence) is \(failure)"
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
