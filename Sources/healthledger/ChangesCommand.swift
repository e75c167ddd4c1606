import Foundation
import HealthLedger
import LedgerTools
import HealthModel
import LedgerReporting

/// `healthledger changes`: the change feed (HKAnchoredObjectQuery), and with
/// `--follow` the `tail -f` of a health store.
enum ChangesCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] changes TYPE[,TYPE…] (--app ID | --owner) [--anchor A] [--limit N]
                                          [--where EXPR] [--json] [--follow]

        The samples of the types saved after anchor A and the objects deleted after it,
        in log order, as the app may see them (without read permission: its own samples;
        a deletion of something it could never read is not shown), then the new anchor.
        No --anchor: everything so far, deletions included. --limit N stops after N
        changes (0 or none: all); pass the printed anchor as --anchor for the next page —
        pages never lose or repeat a change, even while a writer appends. A
        sync-identifier replacement is the new sample, then the deletion of the old one.
        --where (grammar below) filters additions and deletions alike (a deleted
        sample is tested as it was saved).

        Each line says what it is: `added …` (the sample as `query` prints it) or
        `deleted UUID TYPE [sync ID vN] [replaced by UUID] [erased at event N]`, and last
        `anchor: A`. With --json: {"change":"added","sample":{…}}, {"change":"deleted",
        "uuid":…,"type":…,"syncIdentifier":…,"syncVersion":…,"replacedBy":…,"erasedAt":…}
        and {"anchor":"A"}.

        Anchors never expire. An anchor from another ledger, or from a ledger whose
        history was rolled back or rewritten since (a copy cut and re-appended), is
        refused (exit 5, saying which). A read grant given after an anchor makes the
        older samples it reveals appear once, before the newer changes. An anchor
        issued before an erasure (`erase`) is answered with the erased samples it could
        have been given, as deletions (`erased at event N`), then everything current as
        from the start: applied by UUID, that ends where a fetch without --anchor does.

        --follow: after catching up, keep printing each commit's changes (each answer
        ending with its anchor line) as other processes write, until interrupted or
        stdout is closed. A ledger folder replaced by another ledger meanwhile ends it
        (exit 5, ledgerReplaced: the ledger at PATH is another one). The log is watched (inotify on Linux, else its length and
        time are polled every 50 ms); only the new events are read.

        \(SamplePredicate.grammar)

        \(ExitStatus.table)
        """

    static let command = Command(name: "changes", abstract: "Samples added and objects deleted since an anchor (--follow: tail)",
                                 help: help) { args, global in
        if handledHelp(&args, help) { return }
        guard let identity = try Identity.read(&args) else { return }
        let anchorText = try args.option("--anchor")
        let limitText = try args.option("--limit")
        let whereText = try args.option("--where")
        let follow = args.flag("--follow")
        let typesText = try args.required("TYPE")
        try args.finish()
        guard let limit = Int(limitText ?? "0"), limit >= 0 else { throw CLIError.usage("--limit takes a whole number ≥ 0") }
        var types: [ObjectType] = []
        for part in typesText.split(separator: ",", omittingEmptySubsequences: false) {
            types.append(try Parse.type(String(part)))
        }
        if let whereText, types.count != 1 {
            _ = whereText
            throw CLIError.usage("--where applies to one type at a time")
        }
        let predicate = try whereText.map { try Parse.predicate($0, types[0]) }
        let anchor = try anchorText.map { try ChangeAnchor(text: $0) }

        // A follower watches the log from before the load: no write after it is missed.
        let watcher = follow ? try global.reads.appendWatcher() : nil
        var ledger = try LedgerView.open(global)
        let set = Set(types)
        func printedAnchor(_ anchor: ChangeAnchor) {
            Output.line(global.json ? "{\"anchor\":\(JSONObject.quote(anchor.text))}" : "anchor: \(anchor.text)")
            Output.flush()
        }
        func printed(_ answer: ChangeSet) {
            for change in answer.changes { print(change, json: global.json) }
            printedAnchor(answer.newAnchor)
        }
        guard follow else {
            guard limit == 0 else {
                printed(try LedgerView.read(&ledger, as: identity) { try $0.changes(of: set, predicate: predicate, anchor: anchor, limit: limit) })
                return
            }
            // Every change, a page at a time from the previous page's anchor: memory is
            // the page, not the answer; the lines are the one answer's, then its anchor.
            var at = anchor
            while true {
                let page = try LedgerView.read(&ledger, as: identity) {
                    try $0.changes(of: set, predicate: predicate, anchor: at, limit: Self.pageSize)
                }
                for change in page.changes { print(change, json: global.json) }
                guard page.hasMore, Output.failure == nil else {
                    printedAnchor(page.newAnchor)
                    return
                }
                Output.flush()
                at = page.newAnchor
            }
        }
        var first = true
        try await ChangeFollowing.follow(from: anchor, fetch: { anchor in
            try LedgerView.read(&ledger, as: identity) { try $0.changes(of: set, predicate: predicate, anchor: anchor, limit: limit) }
        }, deliver: { answer in
            // Printed: every answer with changes, and the first when no anchor was given
            // (its anchor is where to resume); an empty answer after that, never.
            defer { first = false }
            guard !answer.changes.isEmpty || (first && anchor == nil) else { return true }
            printed(answer)
            return Output.failure == nil
        }, wait: {
            // Caught up: wait for a write to the log (or a second: a missed wake-up costs at
            // most that), then fold just the new events (none: one batch header read).
            try watcher?.waitForActivity(timeout: 1)
            if stdoutClosed() { return false }
            try ledger.catchUp()
            // An import transaction is running (rule E11): nothing of it is a change until
            // it commits, and each replay looks ahead through all of it again, so look
            // again at most twice a second until it closes.
            if ledger.openImport != nil { usleep(500_000) }
            return true
        })
    }

    /// Changes read at a time when every change is asked for (no `--limit`).
    static let pageSize = 16_384

    /// Whether the reader of stdout went away (a pipe whose read end is closed reports
    /// POLLERR), so a follower with nothing to print still stops with its reader.
    static func stdoutClosed() -> Bool {
        var p = pollfd(fd: 1, events: 0, revents: 0)
        return poll(&p, 1, 0) > 0 && p.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0
    }

    static func print(_ change: Change, json: Bool) {
        switch change {
        case .added(let sample):
            Output.line { bytes in
                if json {
                    bytes.append(contentsOf: "{\"change\":\"added\",\"sample\":".utf8)
                    SampleJSONWriter.append(sample, to: &bytes)
                    bytes.append(UInt8(ascii: "}"))
                } else {
                    bytes.append(contentsOf: ("added    " + describe(sample)).utf8)
                }
            }
        case .deleted(let d):
            if json {
                var o = JSONObject()
                o.set("change", "deleted")
                o.set("uuid", d.uuid.uuidString)
                o.set("type", d.type?.identifier)
                o.set("syncIdentifier", d.syncIdentifier)
                o.set("syncVersion", d.syncVersion.map { Int($0) })
                o.set("replacedBy", d.replacedBy?.uuidString)
                o.set("erasedAt", d.erasedAt.map { Int($0) })
                Output.line(o.string)
            } else {
                var line = "deleted  \(d.uuid.uuidString)  \(d.type?.identifier ?? "raw")"
                if let s = d.syncIdentifier { line += "  sync \(s) v\(d.syncVersion ?? 0)" }
                if let r = d.replacedBy { line += "  replaced by \(r.uuidString)" }
                if let e = d.erasedAt { line += "  erased at event \(e)" }
                Output.line(line)
            }
        }
    }
}
