import Foundation
import LedgerCore
import LedgerLog
import LedgerReporting

/// `healthledger verify`: is the ledger intact, from its bytes to its snapshots?
enum VerifyCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] verify [--checkpoint OLD.txt [--verifier-key KEY]] [--json]

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
        Exit 0 when all holds; otherwise exit 6, naming the first bad sequence number,
        byte offset and what is wrong (for a snapshot: the projection and key that differ).

        \(ExitStatus.table)
        """

    static let command = Command(name: "verify", abstract: "Check log, events, rules and snapshots", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let checkpointPath = try args.option("--checkpoint")
        let verifierKey = try args.option("--verifier-key")
        try args.finish()
        let merkle = try Transparency.verifyProblems(global, checkpointPath: checkpointPath, verifierKey: verifierKey)
        let fs = try LedgerAccess.fileSystem(global)
        let report = try LedgerVerifier.verify(fs, progress: Progress.replay())
        Progress.finish()
        var problems: [(String, UInt64?, UInt64?, String)] = []  // (check, sequence, offset, what)
        if let d = report.log.damage {
            let durability = d.inDurablePrefix ? "in bytes known durable: damage, not a torn write"
                                               : "in the unsynced tail: a torn write or damage"
            problems.append(("log", d.sequence, d.offset, "\(d.kind.rawValue) (\(d.kind.ruleIDs)), \(durability)"))
        }
        // A damaged log stops the scan early, so the index naturally covers more than
        // was scanned; report a stale index only for an otherwise sound log.
        if let why = report.log.indexDisagreement, report.log.damage == nil {
            problems.append(("log", nil, nil, "index/log.idx disagrees with the log: \(why) (the log was cut or replaced?)"))
        }
        if let e = report.eventProblem {
            switch e {
            case .undecodable(let s, let o, let why): problems.append(("events", s, o, "does not decode: \(why)"))
            case .ruleViolation(let s, let o, let why): problems.append(("events", s, o, "breaks a rule: \(why)"))
            }
        }
        if let e = report.readProblem, report.log.damage == nil { problems.append(("log", nil, nil, e.description)) }
        for f in report.snapshots { problems.append(("snapshot", f.sequence, nil, f.description)) }
        problems += merkle.problems
        // The access log beside the ledger (serve's record of every read), when there is one.
        let access = try AccessLog.verify(ledgerPath: try LedgerAccess.localFolder(global))
        if let access {
            if let d = access.log.damage {
                problems.append(("access log", d.sequence, d.offset, "\(d.kind.rawValue) (\(d.kind.ruleIDs))"))
            } else if let e = access.undecodable {
                problems.append(("access log", nil, nil, "a record is not an access entry: \(e)"))
            }
        }

        if global.json {
            var o = JSONObject()
            o.set("intact", problems.isEmpty)
            o.set("bytes", report.log.bytes)
            o.set("batches", report.log.batches)
            o.set("events", report.events)
            o.set("chainHead", report.log.chainHead.hex)
            o.set("digest", report.digest.hex)
            o.set("snapshotsChecked", report.snapshotsChecked)
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
                j.set("check", p.0)
                j.set("sequence", p.1.map { Int($0) })
                j.set("offset", p.2.map { Int($0) })
                j.set("what", p.3)
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
            if let access, access.isIntact {
                Output.line("access log: \(access.entries) reads recorded; chain head \(access.log.chainHead.hex)")
            }
            if let ignored = report.log.ignoredIndex {
                Output.line("\(ignored): derived data, rebuilt by the next writer; the log was checked in full without it")
            }
            for note in merkle.notes { Output.line(note) }
            for p in problems {
                let at = [p.1.map { "sequence \($0)" }, p.2.map { "byte \($0)" }].compactMap { $0 }
                Output.line("FAILED \(p.0)\(at.isEmpty ? "" : " at " + at.joined(separator: ", ")): \(p.3)")
            }
            Output.line(problems.isEmpty ? "OK: the ledger is intact" : "NOT INTACT: \(problems.count) problem\(problems.count == 1 ? "" : "s")")
        }
        if !problems.isEmpty {
            Output.flush()
            throw CLIError(status: ExitStatus.damaged, message: "verify: the ledger is not intact (first problem: \(problems[0].0)\(problems[0].1.map { " at sequence \($0)" } ?? ""))")
        }
    }
}
