import Foundation
import LedgerCore
import LedgerLog

/// The integrity section: `verify` run in full (log framing, checksums and hash
/// chain; every event decoded and checked against the rules; snapshots against a
/// fresh replay), and the Merkle tree head when the ledger keeps one.
enum IntegrityCheck {
    static func run(_ fs: any LogFileSystem, reader: LogReader) throws -> HealthReportData.Integrity {
        let report = try LedgerVerifier.verify(fs)
        var problems: [String] = []
        if let d = report.log.damage { problems.append("log at sequence \(d.sequence.map(String.init) ?? "?"), byte \(d.offset): \(d.kind.rawValue)") }
        if report.log.staleIndex && report.log.damage == nil { problems.append("index/log.idx disagrees with the log") }
        switch report.eventProblem {
        case .undecodable(let s, let o, let why)?: problems.append("event \(s) at byte \(o) does not decode: \(why)")
        case .ruleViolation(let s, let o, let why)?: problems.append("event \(s) at byte \(o) breaks a rule: \(why)")
        case nil: break
        }
        if let e = report.readProblem, report.log.damage == nil { problems.append(e.description) }
        problems += report.snapshots.map { "snapshot: \($0.description)" }
        var integrity = HealthReportData.Integrity(intact: problems.isEmpty, problems: problems, events: report.events,
                                                   logBytes: report.log.bytes, chainHead: report.log.chainHead.hex,
                                                   projectionDigest: report.digest.hex)
        // The tree head only when the ledger keeps a tree file (checkpoint/prove made one);
        // read without writing anything.
        if fs.exists(MerkleTreeFile.fileName), let tree = try? MerkleTreeFile.open(fs, reader: reader, save: false).tree {
            integrity.checkpoint = (tree.size, Data(tree.root.array).base64EncodedString())
        }
        return integrity
    }
}
