import Foundation
import LedgerCore
import LedgerLog

/// The integrity section. By default the log's own check — every byte against the
/// framing and CRC32C rules and the SHA-256 hash chain recomputed from the header to
/// the last batch — which a report of a large ledger can afford; with `full`, the
/// whole `verify` (every event decoded and replayed against the rules, snapshots
/// compared with a fresh replay). The Merkle tree head is read when the ledger keeps
/// one.
enum IntegrityCheck {
    static func run(_ fs: any LogFileSystem, reader: LogReader, full: Bool) throws -> HealthReportData.Integrity {
        var problems: [String] = []
        var integrity: HealthReportData.Integrity
        func logProblems(_ log: LogVerifier.Report) {
            if let d = log.damage { problems.append("log at sequence \(d.sequence.map(String.init) ?? "?"), byte \(d.offset): \(d.kind.rawValue)") }
            if log.staleIndex && log.damage == nil { problems.append("index/log.idx disagrees with the log") }
        }
        if full {
            let report = try LedgerVerifier.verify(fs)
            logProblems(report.log)
            switch report.eventProblem {
            case .undecodable(let s, let o, let why)?: problems.append("event \(s) at byte \(o) does not decode: \(why)")
            case .ruleViolation(let s, let o, let why)?: problems.append("event \(s) at byte \(o) breaks a rule: \(why)")
            case nil: break
            }
            if let e = report.readProblem, report.log.damage == nil { problems.append(e.description) }
            problems += report.snapshots.map { "snapshot: \($0.description)" }
            integrity = HealthReportData.Integrity(intact: problems.isEmpty, full: true, problems: problems, events: report.events,
                                                   logBytes: report.log.bytes, chainHead: report.log.chainHead.hex,
                                                   projectionDigest: report.digest.hex)
        } else {
            let log = try LogVerifier.verify(fs)
            logProblems(log)
            integrity = HealthReportData.Integrity(intact: problems.isEmpty, full: false, problems: problems, events: log.records,
                                                   logBytes: log.bytes, chainHead: log.chainHead.hex, projectionDigest: nil)
        }
        // The tree head only when the ledger keeps a tree file (checkpoint/prove made one);
        // read without writing anything.
        if fs.exists(MerkleTreeFile.fileName), let tree = try? MerkleTreeFile.open(fs, reader: reader, save: false).tree {
            integrity.checkpoint = (tree.size, Data(tree.root.array).base64EncodedString())
        }
        return integrity
    }
}
