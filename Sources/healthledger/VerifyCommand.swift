import Foundation
import HealthLedger
import LedgerTools
import LedgerReporting

/// `healthledger verify`: is the ledger intact, from its bytes to its snapshots?
enum VerifyCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] verify [--structure] [--checkpoint OLD.txt [--verifier-key KEY]] [--json]

        Check everything:
          1. the log: framing, checksums and the SHA-256 hash chain over every byte
             (a damaged index/log.idx, derived data, is named as ignored, not a problem;
             an intact one that does not fit the log is one);
          2. the events: each decodes and obeys the rules at its point in the log
             (dense sequence numbers, unique UUIDs, permissions, deleters, sync versions);
          3. every stored snapshot equals a fresh replay to its position;
          4. index/merkle.bin (if present) agrees with the log; with --checkpoint, the
             ledger still extends that checkpoint (same root over its first N events: a
             history rewritten and re-chained is caught here) and, given the verifier key
             (--verifier-key, else keys/checkpoint.pub), its signature verifies.
        --structure: only 1 and 4, decoding no event: what can be checked of an
        encrypted ledger without its key-encryption key (every byte, sealed or not, is
        covered by the checksums, the chain and the tree).
        Exit 0 when all holds; otherwise exit 6, naming the first bad sequence number,
        byte offset and what is wrong (for a snapshot: the projection and key that differ).

        \(ExitStatus.table)
        """

    static let command = Command(name: "verify", abstract: "Check log, events, rules and snapshots", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let checkpointPath = try args.option("--checkpoint")
        let verifierKey = try args.option("--verifier-key")
        let structureOnly = args.flag("--structure")
        try args.finish()
        if structureOnly {
            try verifyStructure(global, checkpointPath: checkpointPath, verifierKey: verifierKey)
            return
        }
        let integrity = try global.reads.integrity(checkpointPath: checkpointPath, verifierKey: verifierKey, progress: Progress.replay())
        Progress.finish()
        let report = integrity.ledger, access = integrity.access, problems = integrity.problems
        if global.json {
            var o = JSONObject()
            o.set("intact", problems.isEmpty)
            o.set("bytes", report.log.bytes)
            o.set("batches", report.log.batches)
            o.set("events", report.events)
            o.set("chainHead", report.log.chainHead.hex)
            o.set("digest", report.digest.hex)
            o.set("snapshotsChecked", report.snapshotsChecked)
            if !report.olderSnapshots.isEmpty {
                o.setRaw("olderSnapshots", JSONObject.array(report.olderSnapshots.map { JSONObject.quote("\($0)") }))
            }
            if let ignored = report.log.ignoredIndex { o.set("ignoredIndex", ignored) }
            if let access {
                o.set("accessLogEntries", access.entries)
                o.set("accessLogChainHead", access.log.chainHead.hex)
            }
            if let open = report.openImport {
                o.set("openImportStartedAt", open.startedAt)
                o.set("eventsOfOpenImport", report.eventsOfOpenImport)
            }
            o.setRaw("problems", JSONObject.array(problems.map { p in
                var j = JSONObject()
                j.set("check", p.check)
                j.set("sequence", p.sequence.map { Int($0) })
                j.set("offset", p.offset.map { Int($0) })
                j.set("what", p.what)
                return j.string
            }))
            Output.line(o.string)
        } else {
            Output.line("log: \(report.log.bytes) bytes, \(report.log.batches) batches, \(report.log.records) events; chain head \(report.log.chainHead.hex)")
            Output.line("events checked: \(report.events); projection digest \(report.digest.hex)")
            if let open = report.openImport {
                Output.line("import open since event #\(open.startedAt): \(report.eventsOfOpenImport) events decoded, not applied (rule E11; the next writer aborts it)")
            }
            Output.line("snapshots checked: \(report.snapshotsChecked)")
            for older in report.olderSnapshots {
                Output.line("\(older): derived data, skipped (replay --write-snapshot writes a current one)")
            }
            if let access, access.isIntact {
                Output.line("access log: \(access.entries) reads recorded; chain head \(access.log.chainHead.hex)")
            }
            if let ignored = report.log.ignoredIndex {
                Output.line("\(ignored): derived data, rebuilt by the next writer; the log was checked in full without it")
            }
            for note in integrity.notes { Output.line(note) }
            for p in problems {
                let at = [p.sequence.map { "sequence \($0)" }, p.offset.map { "byte \($0)" }].compactMap { $0 }
                Output.line("FAILED \(p.check)\(at.isEmpty ? "" : " at " + at.joined(separator: ", ")): \(p.what)")
            }
            Output.line(problems.isEmpty ? "OK: the ledger is intact" : "NOT INTACT: \(problems.count) problem\(problems.count == 1 ? "" : "s")")
        }
        if !problems.isEmpty {
            Output.flush()
            throw CLIError(status: ExitStatus.damaged, message: "verify: the ledger is not intact (first problem: \(problems[0].check)\(problems[0].sequence.map { " at sequence \($0)" } ?? ""))")
        }
    }
}

extension VerifyCommand {
    /// `verify --structure`: the log, the tree and a checkpoint, no event decoded.
    static func verifyStructure(_ global: GlobalOptions, checkpointPath: String?, verifierKey: String?) throws {
        let (log, problems, notes) = try global.reads.structure(checkpointPath: checkpointPath, verifierKey: verifierKey)
        if global.json {
            var o = JSONObject()
            o.set("intact", problems.isEmpty)
            o.set("structureOnly", true)
            o.set("bytes", log.bytes)
            o.set("batches", log.batches)
            o.set("events", Int(log.records))
            o.set("chainHead", log.chainHead.hex)
            o.setRaw("problems", JSONObject.array(problems.map { p in
                var j = JSONObject()
                j.set("check", p.check)
                j.set("sequence", p.sequence.map { Int($0) })
                j.set("offset", p.offset.map { Int($0) })
                j.set("what", p.what)
                return j.string
            }))
            Output.line(o.string)
        } else {
            Output.line("log: \(log.bytes) bytes, \(log.batches) batches, \(log.records) events; chain head \(log.chainHead.hex)")
            Output.line("structure only: framing, checksums and the hash chain over every byte; no event decoded")
            for note in notes { Output.line(note) }
            for p in problems {
                let at = [p.sequence.map { "sequence \($0)" }, p.offset.map { "byte \($0)" }].compactMap { $0 }
                Output.line("FAILED \(p.check)\(at.isEmpty ? "" : " at " + at.joined(separator: ", ")): \(p.what)")
            }
            Output.line(problems.isEmpty ? "OK: the log's structure is intact" : "NOT INTACT: \(problems.count) problem\(problems.count == 1 ? "" : "s")")
        }
        if !problems.isEmpty {
            Output.flush()
            throw CLIError(status: ExitStatus.damaged, message: "verify: the log is not intact (first problem: \(problems[0].check)\(problems[0].sequence.map { " at sequence \($0)" } ?? ""))")
        }
    }
}
