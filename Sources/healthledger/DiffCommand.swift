import Foundation
import HealthLedger
import HealthModel
import LedgerReporting
import LedgerTools

/// `healthledger diff A B`: every sample added, removed and changed between two points.
enum DiffCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] diff A B [--type TYPE]... [--summary] [--json]

        What changed between two points of the ledger's history, sample by sample (the
        owner's view). A and B are each @SEQ (the state after event SEQ), import:ID (after
        the import with that ID — the importId its summary printed — finished), or an
        ISO 8601 instant (the state then). Each line is one change:
          + SAMPLE                          added between A and B
          - SAMPLE  (why)                   removed; why, where the log says it
                                            ("absent from the export dated D")
          ~ BEFORE  ->  AFTER  (how)        changed: a removed and an added sample with
                                            the same sync identity and source, or the
                                            same type, source, start and end
        removed first, then changed, then added, each in the log's order. With B before
        A, the same changes run backwards (no reasons). --type (repeatable) narrows to
        those types; --summary prints counts per type instead. --json: one object per
        change ({"change":"added"|"removed"|"changed", "sample" or "before"/"after",
        "reason", "by"}) or per type with --summary. A point against itself prints
        nothing. Reads without the writer's lock.

        For an import B right after import A, each change counts once: added plus
        changed is B's "new", removed plus changed its "removed" and replaced versions.

        \(ExitStatus.table)
        """

    static let command = Command(name: "diff", abstract: "Samples added, removed and changed between two points", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let typeTexts = try args.options("--type")
        let summary = args.flag("--summary")
        let a = try point(try args.required("A"))
        let b = try point(try args.required("B"))
        try args.finish()
        let types = typeTexts.isEmpty ? nil : Set(try typeTexts.map { try Parse.type($0) })
        let difference: LedgerDifference
        do {
            defer { Progress.finish() }
            difference = try global.reads.diff(a, b, types: types, progress: Progress.replay())
        } catch let e as UnknownImport {
            throw CLIError.notFound(e.description)
        }
        if summary {
            var counts: [String: (added: Int, removed: Int, changed: Int)] = [:]
            for change in difference.changes {
                var c = counts[change.type] ?? (0, 0, 0)
                switch change {
                case .added: c.added += 1
                case .removed: c.removed += 1
                case .changed: c.changed += 1
                }
                counts[change.type] = c
            }
            for type in counts.keys.sorted() {
                let c = counts[type]!
                if global.json {
                    var o = JSONObject()
                    o.set("type", type)
                    o.set("added", c.added)
                    o.set("removed", c.removed)
                    o.set("changed", c.changed)
                    Output.line(o.string)
                } else {
                    Output.line("\(type)\t+\(c.added)\t-\(c.removed)\t~\(c.changed)")
                }
            }
            return
        }
        for change in difference.changes {
            if global.json {
                var o = JSONObject()
                switch change {
                case .added(let s):
                    o.set("change", "added")
                    o.setRaw("sample", SampleJSON.object(s).string)
                case .removed(let s, let reason):
                    o.set("change", "removed")
                    o.setRaw("sample", SampleJSON.object(s).string)
                    o.set("reason", reason)
                case .changed(let before, let after, let by):
                    o.set("change", "changed")
                    o.set("by", by.rawValue)
                    o.setRaw("before", SampleJSON.object(before).string)
                    o.setRaw("after", SampleJSON.object(after).string)
                }
                Output.line(o.string)
            } else {
                switch change {
                case .added(let s): Output.line("+ " + describe(s))
                case .removed(let s, let reason): Output.line("- " + describe(s) + (reason.map { "  (\($0))" } ?? ""))
                case .changed(let before, let after, let by):
                    Output.line("~ " + describe(before) + "  ->  " + describe(after)
                                + (by == .syncIdentity ? "  (a new version: same sync identity)" : "  (same type, source and dates)"))
                }
            }
        }
    }

    /// `@SEQ`, `import:ID` or an ISO 8601 instant.
    static func point(_ text: String) throws -> DiffPoint {
        if text.hasPrefix("@") {
            guard let n = UInt64(text.dropFirst()), n >= 1 else { throw CLIError.usage("\(text): @SEQ takes a sequence number ≥ 1") }
            return .sequence(n)
        }
        if text.hasPrefix("import:") {
            guard let id = UUIDText.parse(String(text.dropFirst(7))) else { throw CLIError.usage("\(text): import:ID takes the import's UUID") }
            return .importID(id)
        }
        return .instant(try Parse.date(text, "diff point"))
    }
}
