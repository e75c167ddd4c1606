import Foundation
import HealthLedger
import HealthModel
import LedgerReporting
import LedgerTools

/// `healthledger export csv`: what a viewer may read, one RFC 4180 file per type;
/// `export fhir` (`ExportFHIRCommand`): the same as FHIR R4 NDJSON.
enum ExportCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] export csv (--owner | --app ID) [--type TYPE]... [--as-of TIME] --out DIR [--json]
               healthledger [--ledger PATH] export csv (--owner | --app ID) --wide --by day [--type TYPE]... [--as-of TIME]
                            [--tz ZONE] --out DIR [--json]
               healthledger [--ledger PATH] export fhir (--owner | --app ID) [--type TYPE]... [--from T] [--to T]
                            [--since ANCHOR] --out DIR [--json]   (see `export fhir --help`)

        Write the samples a viewer may read as CSV (RFC 4180: a header row, CRLF line
        ends, a field holding a comma, a double quote or a line break quoted, a double
        quote inside it doubled), one file per type, DIR/<identifier>.csv, oldest first.
        --owner exports everything; --app ID exactly what that app may read (its read
        grants, its own samples). --type TYPE (repeatable) exports those types, each with
        a file even when empty; without it, every type with a sample gets one. --as-of
        TIME exports the ledger as it stood then (ISO 8601).

        Columns: uuid,start,end,value,unit,source,device,metadata — as `query --json`
        writes them (dates in ISO 8601, numbers as JSON numbers, device and metadata as
        their JSON objects, empty when absent) — then the type's own: valueName
        (category types); activityType,duration,totalEnergyBurned,
        totalEnergyBurnedUnit,totalDistance,totalDistanceUnit (workouts); objects, the
        member UUIDs separated by spaces (correlations); and sourceVersion,creationDate.

        --wide --by day writes one file instead, DIR/daily.csv: a row per day of the
        owner's calendar (--tz ZONE, else the ledger's zone) from the first day with a
        sample to the last, empty days included, and a column per quantity type — its
        daily sum for a cumulative type (steps), its daily average for any other (body
        mass), as `statistics --by day` computes them (sources merged by the priority in
        force), in the type's canonical unit, empty where the day has none. Without
        --type, every quantity type with a sample the viewer may read.

        DIR is created (0700), or must be empty: an export never mixes with other files.
        Each file (0600) is written new beside its name and linked into place once whole,
        never through or over anything someone else put there. Prints one
        line per file (path and rows; --json: {"type","file","rows"}). Reads without the
        writer's lock.

        \(ExitStatus.table)
        """

    static let command = Command(name: "export", abstract: "Write what a viewer may read as CSV, or as FHIR R4 NDJSON", help: help) { args, global in
        var peek = args
        if peek.positional() == "fhir" {
            _ = args.positional()
            try ExportFHIRCommand.run(&args, global)
            return
        }
        if handledHelp(&args, help) { return }
        guard args.positional() == "csv" else {
            throw CLIError.usage("export csv (--owner | --app ID) [--type TYPE]... --out DIR, or export fhir (--owner | --app ID) --out DIR")
        }
        guard let identity = try Identity.read(&args) else { return }
        let typeTexts = try args.options("--type")
        let wide = args.flag("--wide")
        let by = try args.option("--by")
        let asOf = try args.option("--as-of")
        guard let out = try args.option("--out") else { throw CLIError.usage("export csv needs --out DIR") }
        try args.finish()
        let types = typeTexts.isEmpty ? nil : try typeTexts.map { try Parse.type($0) }
        if let types, Set(types).count != types.count { throw CLIError.usage("--type names a type twice") }
        if let other = types?.first(where: { !$0.isSampleType }) {
            throw CLIError.usage("--type \(other.identifier) has no samples (characteristics: profile; activity summaries: activity)")
        }
        let limit: ReplayLimit = try asOf.map { .instant(try LedgerAccess.instant($0)) } ?? .end
        guard wide == (by != nil) else { throw CLIError.usage("--wide and --by go together: --wide --by day") }
        if wide {
            guard by == "day" else { throw CLIError.usage("--by takes day (one row per day)") }
            let quantityTypes = try types.map { list in
                try list.map { type -> QuantityType in
                    guard case .quantity(let q) = type else { throw CLIError.usage("--wide takes quantity types; \(type.identifier) is not one") }
                    return q
                }
            }
            let file: DailyCSVFile
            do {
                defer { Progress.finish() }
                file = try global.reads.exportDailyCSV(as: identity.viewer, types: quantityTypes, limit: limit, timeZone: global.timeZoneOverride,
                                                       to: out, progress: Progress.replay())
            } catch RuleViolation.appNotRegistered(let bundle, _) {
                throw LedgerView.notRegistered(bundle)
            }
            if global.json {
                var o = JSONObject()
                o.set("file", file.path)
                o.set("rows", file.rows)
                o.setRaw("types", JSONObject.array(file.types.map { JSONObject.quote($0.identifier) }))
                Output.line(o.string)
            } else {
                Output.line("\(file.path)\t\(file.rows) rows")
            }
            return
        }
        let files: [CSVExportFile]
        do {
            defer { Progress.finish() }
            files = try global.reads.exportCSV(as: identity.viewer, types: types, limit: limit, to: out, progress: Progress.replay())
        } catch RuleViolation.appNotRegistered(let bundle, _) {
            throw LedgerView.notRegistered(bundle)
        }
        for file in files {
            if global.json {
                var o = JSONObject()
                o.set("type", file.type.identifier)
                o.set("file", file.path)
                o.set("rows", file.rows)
                Output.line(o.string)
            } else {
                Output.line("\(file.path)\t\(file.rows) rows")
            }
        }
    }
}
