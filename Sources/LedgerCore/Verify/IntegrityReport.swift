import Foundation
import LedgerChecksums
import LedgerLog

/// Everything `verify` checks, as one verdict: the log (framing, checksums, chain,
/// index), the events (decoding, rules), the snapshots against a fresh replay, the
/// Merkle tree file against a tree built from the log alone, a checkpoint the ledger
/// must still extend (and its signature), and the access log beside the ledger.
/// A front end only prints it: each problem says which check found it, where, and what.
package struct IntegrityReport: Sendable {
    /// One thing found wrong.
    package struct Problem: Sendable, Equatable {
        /// Which check found it: "log", "events", "snapshot", "tree", "checkpoint",
        /// "access log".
        package let check: String
        package let sequence: UInt64?
        package let offset: UInt64?
        package let what: String
    }

    /// A checkpoint the ledger must extend (`verify --checkpoint`): the note as read,
    /// parsed, and the key its signature is checked with (nil: not checked, said so).
    package struct CheckpointClaim: Sendable {
        package let note: String
        package let checkpoint: TreeCheckpoint
        package let verifier: SignedNote.Verifier?

        package init(note: String, checkpoint: TreeCheckpoint, verifier: SignedNote.Verifier?) {
            self.note = note
            self.checkpoint = checkpoint
            self.verifier = verifier
        }
    }

    /// The log, events and snapshots (`LedgerVerifier`).
    package let ledger: LedgerVerifier.Report
    /// The access log beside the ledger, when there is one.
    package let access: AccessLog.Verification?
    /// Every problem, in the order the checks are listed above. Empty: intact.
    package let problems: [Problem]
    /// What was checked and held (the tree's size and root, a checkpoint extended, a
    /// signature that verifies or was not checked).
    package let notes: [String]

    package var isIntact: Bool { problems.isEmpty }

    /// Checks the ledger in `fs`. `accessLogFolder`: the folder whose access log is
    /// checked (the ledger's local folder; nil: none), asked for after the ledger's
    /// own checks.
    package static func check(_ fs: any LogFileSystem, checkpoint: CheckpointClaim?, accessLogFolder: () throws -> String?,
                             progress: ((ReplayProgress) -> Void)? = nil) throws -> IntegrityReport {
        let tree = try treeFindings(fs, checkpoint: checkpoint)
        let report = try LedgerVerifier.verify(fs, progress: progress)
        var problems: [Problem] = []
        if let d = report.log.damage {
            let durability = d.inDurablePrefix ? "in bytes known durable: damage, not a torn write"
                                               : "in the unsynced tail: a torn write or damage"
            problems.append(Problem(check: "log", sequence: d.sequence, offset: d.offset,
                                    what: "\(d.kind.rawValue) (\(d.kind.ruleIDs)), \(durability)"))
        }
        // A damaged log stops the scan early, so the index naturally covers more than
        // was scanned; a stale index is a problem only of an otherwise sound log.
        if let why = report.log.indexDisagreement, report.log.damage == nil {
            problems.append(Problem(check: "log", sequence: nil, offset: nil,
                                    what: "index/log.idx disagrees with the log: \(why) (the log was cut or replaced?)"))
        }
        var notes = tree.notes
        switch report.eventProblem {
        case .undecodable(let s, let o, let why)?:
            problems.append(Problem(check: "events", sequence: s, offset: o, what: "does not decode: \(why)"))
            if case .sealedRecordUnopened(let failure) = why, failure.reason == .noKeys {
                notes.append("the ledger is encrypted: give its key-encryption key (--key-file PATH or HEALTHLEDGER_KEY_FILE) "
                             + "to check its events, or `verify --structure` to check framing, checksums, the chain and the tree without it")
            }
        case .ruleViolation(let s, let o, let why)?:
            problems.append(Problem(check: "events", sequence: s, offset: o, what: "breaks a rule: \(why)"))
        case nil: break
        }
        if let e = report.readProblem, report.log.damage == nil {
            problems.append(Problem(check: "log", sequence: nil, offset: nil, what: e.description))
        }
        for f in report.snapshots { problems.append(Problem(check: "snapshot", sequence: f.sequence, offset: nil, what: f.description)) }
        problems += tree.problems
        let access = try accessLogFolder().flatMap { try AccessLog.verify(ledgerPath: $0) }
        if let access {
            if let d = access.log.damage {
                problems.append(Problem(check: "access log", sequence: d.sequence, offset: d.offset,
                                        what: "\(d.kind.rawValue) (\(d.kind.ruleIDs))"))
            } else if let e = access.undecodable {
                problems.append(Problem(check: "access log", sequence: nil, offset: nil, what: "a record is not an access entry: \(e)"))
            }
        }
        return IntegrityReport(ledger: report, access: access, problems: problems, notes: notes)
    }

    /// What `verify --structure` checks, with no key (an encrypted ledger's sealed
    /// records stay shut): the log's framing, checksums and hash chain over every byte
    /// (`LogVerifier`), the Merkle tree file against a tree built from the log, and a
    /// checkpoint's consistency. Events are not decoded.
    package static func checkStructure(_ fs: any LogFileSystem, checkpoint: CheckpointClaim?) throws
        -> (log: LogVerifier.Report, problems: [Problem], notes: [String]) {
        let log = try LogVerifier.verify(fs)
        var problems: [Problem] = []
        if let d = log.damage {
            let durability = d.inDurablePrefix ? "in bytes known durable: damage, not a torn write"
                                               : "in the unsynced tail: a torn write or damage"
            problems.append(Problem(check: "log", sequence: d.sequence, offset: d.offset,
                                    what: "\(d.kind.rawValue) (\(d.kind.ruleIDs)), \(durability)"))
        }
        if let why = log.indexDisagreement, log.damage == nil {
            problems.append(Problem(check: "log", sequence: nil, offset: nil,
                                    what: "index/log.idx disagrees with the log: \(why) (the log was cut or replaced?)"))
        }
        let tree = try treeFindings(fs, checkpoint: checkpoint)
        return (log, problems + tree.problems, tree.notes)
    }

    /// The tree file (when present) against a tree built from the log, and with a
    /// checkpoint, that the ledger extends it.
    static func treeFindings(_ fs: any LogFileSystem, checkpoint: CheckpointClaim?) throws
        -> (problems: [Problem], notes: [String]) {
        guard checkpoint != nil || fs.exists(MerkleTreeFile.fileName) else { return ([], []) }
        let reader = try LogReader(fs)
        guard let fresh = try? MerkleTreeFile.build(reader: reader) else {
            return (checkpoint == nil ? [] : [Problem(check: "checkpoint", sequence: nil, offset: nil,
                                                      what: "the log could not be read to its end to rebuild the tree")], [])
        }
        var problems: [Problem] = []
        var notes: [String] = []
        if let what = MerkleTreeFile.check(fs, reader: reader, against: fresh) {
            problems.append(Problem(check: "tree", sequence: nil, offset: nil, what: what))
        }
        notes.append("merkle tree: \(fresh.size) events, root \(Self.base64(fresh.root))")
        if let checkpoint {
            let verdict = extends(checkpoint, fresh: fresh, origin: TreeCheckpoint.origin(of: reader))
            problems += verdict.problems.map { Problem(check: "checkpoint", sequence: nil, offset: nil, what: $0) }
            notes += verdict.notes
        }
        return (problems, notes)
    }

    /// Whether the ledger (its tree built from the log alone, `fresh`) extends the
    /// checkpoint: the same origin, a size not beyond the log's, the same root over its
    /// first `size` events (history rewritten and re-chained is caught here), and the
    /// signature by the known verifier key.
    package static func extends(_ claim: CheckpointClaim, fresh: MerkleTreeFile, origin: String)
        -> (problems: [String], notes: [String]) {
        let checkpoint = claim.checkpoint
        var problems: [String] = [], notes: [String] = []
        if checkpoint.origin != origin {
            problems.append("the checkpoint is of \(checkpoint.origin), this ledger is \(origin)")
        }
        if let verifier = claim.verifier {
            do {
                switch try SignedNote.verify(claim.note, by: verifier) {
                case true?: notes.append("checkpoint signature by \(verifier.name) verifies")
                default: problems.append("the checkpoint carries no signature by \(verifier.name)+\(String(format: "%08x", verifier.keyHash))")
                }
            } catch { problems.append("checkpoint: \(error)") }
        } else {
            notes.append("checkpoint signature not checked (no verifier key)")
        }
        if checkpoint.size > fresh.size {
            problems.append("the checkpoint covers \(checkpoint.size) events, the ledger has only \(fresh.size): events were removed")
        } else if let root = try? fresh.root(size: checkpoint.size) {
            if root != checkpoint.root {
                problems.append("the ledger's first \(checkpoint.size) events hash to \(base64(root)), the checkpoint says \(base64(checkpoint.root)): history up to event \(checkpoint.size) was rewritten")
            } else {
                notes.append("the ledger extends the checkpoint of \(checkpoint.size) events (\(fresh.size) now)")
            }
        } else {
            problems.append("the tree of the first \(checkpoint.size) events could not be computed from the log")
        }
        return (problems, notes)
    }

    /// A tree hash as checkpoints write it (base64).
    package static func base64(_ d: SHA256Digest) -> String { Data(d.array).base64EncodedString() }
}

extension TreeCheckpoint {
    /// A ledger's origin line in its checkpoints: `healthledger/<ledger id>`.
    package static func origin(of reader: LogReader) -> String {
        "healthledger/\(reader.header.ledgerId.uuidString.lowercased())"
    }
}
