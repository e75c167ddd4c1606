import Foundation
import HealthLedger
import HealthModel
import LedgerReporting
import LedgerTools

/// `healthledger export fhir`: what a viewer may read as FHIR R4 NDJSON, as Bulk Data writes it.
enum ExportFHIRCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] export fhir (--owner | --app ID) [--type TYPE]... [--from T] [--to T]
                            [--since ANCHOR] --out DIR [--json]

        Write the samples a viewer may read as FHIR R4 resources, one NDJSON file per
        resource type as Bulk Data's $export writes them, and its completion manifest:
          DIR/Patient.ndjson      the characteristics: birthDate, gender (biological
                                  sex), the others as extensions (HealthKit's raw names)
          DIR/Observation.ndjson  one per sample, id = the sample's UUID: its LOINC
                                  code where one exists (the table in DESIGN.md) and
                                  always its HealthKit code; values in UCUM units
                                  (kg, /min, mm[Hg], Cel; percentages 0-100 %);
                                  effectiveDateTime (an instant) or effectivePeriod, in
                                  the UTC offset the sample was written with; blood
                                  pressure one panel (85354-9) with its two readings as
                                  components; category samples their value's name;
                                  workouts the activity type, duration, energy, distance
          DIR/Device.ndjson       each distinct device those samples name
          DIR/Provenance.ndjson   per saving event and app: the ledger, the event's
                                  sequence number and the checkpoint (size, root) the
                                  export was read at: `prove --seq N --size S` proves
                                  the event is in that tree
          DIR/deleted.ndjson      with --since: a transaction Bundle with one DELETE
                                  per sample deleted after the anchor
          DIR/manifest.json       transactionTime, request, requiresAccessToken (false),
                                  output [{type, url, count}], deleted, error, and an
                                  extension with the checkpoint and the anchor to pass
                                  as --since next time
        --owner exports everything; --app ID exactly what that app may read (its read
        grants, its own samples). --type TYPE (repeatable): those sample types only.
        --from T / --to T: samples whose start date is in [T1, T2) (half-open; a date
        alone is midnight UTC). --since ANCHOR: only samples added after the anchor
        (as `changes` prints it, or the manifest's), and the deletions after it, in
        log order; an anchor of another ledger or of a rewritten history is refused
        (exit 5). Resources are written in log order.

        DIR is created (0700), or must be empty. Each file (0600) is written new beside
        its name and linked into place once whole. Prints one line per file (path and
        count; --json: {"type","file","count"}), then the manifest's path and the anchor.
        Reads without the writer's lock.

        \(ExitStatus.table)
        """

    static func run(_ args: inout ArgumentList, _ global: GlobalOptions) throws {
        if handledHelp(&args, help) { return }
        guard let identity = try Identity.read(&args) else { return }
        let typeTexts = try args.options("--type")
        let fromText = try args.option("--from"), toText = try args.option("--to")
        let sinceText = try args.option("--since")
        guard let out = try args.option("--out") else { throw CLIError.usage("export fhir needs --out DIR") }
        try args.finish()
        let types = typeTexts.isEmpty ? nil : try typeTexts.map { try Parse.type($0) }
        if let types, Set(types).count != types.count { throw CLIError.usage("--type names a type twice") }
        if let other = types?.first(where: { !$0.isSampleType }) {
            throw CLIError.usage("--type \(other.identifier) has no samples (characteristics are the Patient; activity summaries: activity)")
        }
        let from = try fromText.map { try Parse.date($0, "--from") }
        let to = try toText.map { try Parse.date($0, "--to") }
        if let from, let to, from >= to { throw CLIError.usage("--from must be before --to (the range is [from, to))") }
        let since = try sinceText.map { try ChangeAnchor(text: $0) }
        var request = "healthledger export fhir"
        switch identity {
        case .owner: request += " --owner"
        case .app(let bundle): request += " --app \(bundle)"
        }
        for type in types ?? [] { request += " --type \(type.identifier)" }
        if let fromText { request += " --from \(fromText)" }
        if let toText { request += " --to \(toText)" }
        if let sinceText { request += " --since \(sinceText)" }

        let summary: FHIRExportSummary
        do {
            defer { Progress.finish() }
            summary = try global.reads.exportFHIR(FHIRExportRequest(viewer: identity.viewer, types: types, from: from, to: to,
                                                                    since: since, request: request),
                                                  to: out, progress: Progress.replay())
        } catch RuleViolation.appNotRegistered(let bundle, _) {
            throw LedgerView.notRegistered(bundle)
        }
        for file in summary.files {
            if global.json {
                var o = JSONObject()
                o.set("type", file.type)
                o.set("file", file.path)
                o.set("count", file.count)
                Output.line(o.string)
            } else {
                Output.line("\(file.path)\t\(file.count) \(file.type == "Bundle" ? "deletions" : "resources")")
            }
        }
        if global.json {
            var o = JSONObject()
            o.set("manifest", summary.manifest)
            o.set("anchor", summary.anchor)
            Output.line(o.string)
        } else {
            Output.line("manifest: \(summary.manifest)")
            Output.line("anchor: \(summary.anchor)")
        }
    }
}
