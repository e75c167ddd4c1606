import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

/// `healthledger stats`.
enum StatsCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] stats [--json]

        Events by kind, live samples by type and source, records kept raw by identifier
        (as written) and source, deleted objects, log size and the chain head (the SHA-256 link of the last batch: it fingerprints the log).
        These are counts of what the log holds; for the values of a type (sums,
        averages, per day, sources merged by priority) see `healthledger statistics`.

        \(ExitStatus.table)
        """

    static let command = Command(name: "stats", abstract: "Events by kind, samples by type and source, log size, chain head", help: help) { args, global in
        if handledHelp(&args, help) { return }
        try args.finish()
        let ledger = try LedgerView.open(global)
        let logBytes = try ledger.logBytes(), head = ledger.chainHead?.hex ?? "(inside a batch)"
        var view = try ledger.view(as: .owner)
        let counts = try view.counts()
        let bySource = counts.liveSamples, raw = counts.rawRecords
        if global.json {
            var o = JSONObject()
            var events = JSONObject()
            for kind in EventKind.allCases { events.set(kind.name, counts.eventsByKind[kind] ?? 0) }
            o.set("events", events)
            o.set("eventsTotal", counts.events)
            var samples = JSONObject()
            for type in bySource.keys.sorted() {
                var sources = JSONObject()
                for source in bySource[type]!.keys.sorted() { sources.set(source, bySource[type]![source]!) }
                samples.set(type, sources)
            }
            o.set("samples", samples)
            var rawObject = JSONObject()
            for identifier in raw.keys.sorted() {
                var sources = JSONObject()
                for source in raw[identifier]!.keys.sorted() { sources.set(source, raw[identifier]![source]!) }
                rawObject.set(identifier, sources)
            }
            o.set("raw", rawObject)
            o.set("deleted", counts.samplesDeleted)
            o.set("logBytes", logBytes)
            o.set("chainHead", head)
            o.set("apps", counts.apps.count)
            Output.line(o.string)
            return
        }
        Output.line("log: \(logBytes) bytes, \(counts.events) events, chain head \(head)")
        // Columns as wide as their content: no name is cut.
        Output.line("events by kind:")
        var kinds = TextColumns()
        for kind in EventKind.allCases { kinds.add(kind.name, String(counts.eventsByKind[kind] ?? 0)) }
        for line in kinds.lines { Output.line(line) }
        Output.line("live samples by type and source (\(counts.samplesSaved - counts.samplesDeleted) live, \(counts.samplesDeleted) deleted):")
        var live = TextColumns()
        for type in bySource.keys.sorted() {
            for source in bySource[type]!.keys.sorted() { live.add(type, source, String(bySource[type]![source]!)) }
        }
        for line in live.lines { Output.line(line) }
        if !raw.isEmpty {
            Output.line("records kept raw by identifier and source (query --owner --raw IDENTIFIER):")
            var kept = TextColumns()
            for identifier in raw.keys.sorted() {
                for source in raw[identifier]!.keys.sorted() { kept.add(identifier, source, String(raw[identifier]![source]!)) }
            }
            for line in kept.lines { Output.line(line) }
        }
        Output.line("apps: \(counts.apps.joined(separator: ", "))")
    }
}
