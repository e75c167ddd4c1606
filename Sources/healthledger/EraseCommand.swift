import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

/// `healthledger erase`: the right to erasure on an encrypted ledger (issue 32).
enum EraseCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] --key-file PATH erase (--source ID | --import ID | --type T [--from D --to D] | --all)
                                                                  --reason TEXT [--json]

        Erase for good, by destroying the data keys that sealed it (an encrypted ledger's
        owner only): every record of one source (an app, itself and as brought by any
        import), of one import, of one type, or every health record of the person.

        It appends an `erased` event (which scope, when, why; the destroyed key ids and
        the erased samples' UUIDs; no content), destroys the keys so that no key store
        written afterwards holds them, and rewrites every snapshot. The log stays
        append-only: `verify`, `verify --checkpoint` taken before and `prove --seq N`
        still pass, and `audit UUID` says when a sample was erased and why. Apps stay
        registered and keep their grants (their names are kept: later events name them).

        Erasure reaches every copy of the ledger folder made without the key file, and
        every key store written from now on; not a copy of `keys/` taken before, together
        with the key file (DESIGN.md, "What erasure cannot reach").

          --source ID   a registered app's bundle identifier
          --import ID   an import's id (as `log` and `audit` show it)
          --type T      a type identifier (HKQuantityTypeIdentifierBodyMass, bodyMass, …)
          --from D --to D  with --type: only the samples that start on the days D to D
                        (inclusive, in the owner's time zone or --tz; or instants, the
                        end excluded). Keys are per month: the samples of a month the
                        range cuts that stay are saved again under a new key first
                        (same UUIDs), then the month's old key is destroyed
          --all         every health record (apps, grants and settings stay)
          --reason TEXT why (1 to 1,000 bytes), kept in the erased event
          --json        {"sequence":N,"scope":…,"keysDestroyed":N,"samplesErased":N,…}

        A type erasure reaches samples of that type saved on their own; a correlation's
        members (a blood pressure's systolic and diastolic values) go with the
        correlation's type.

        Nothing to erase (no live key holds the scope) is exit 4; a plain ledger is exit 2.

        \(ExitStatus.table)
        """

    static let command = Command(name: "erase", abstract: "Erase a source, an import, a type or everything (destroys keys)", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let source = try args.option("--source")
        let importText = try args.option("--import")
        let typeText = try args.option("--type")
        let all = args.flag("--all")
        let fromText = try args.option("--from"), toText = try args.option("--to")
        guard let reason = try args.option("--reason") else { throw CLIError.usage("erase needs --reason TEXT") }
        try args.finish()
        let given = [source != nil, importText != nil, typeText != nil, all].filter { $0 }.count
        guard given == 1 else { throw CLIError.usage("give exactly one of --source ID, --import ID, --type T, --all") }
        guard (fromText == nil) == (toText == nil) else { throw CLIError.usage("give --from D and --to D together") }
        guard fromText == nil || typeText != nil else { throw CLIError.usage("--from and --to go with --type T") }
        let outcome = try await withStore(global, .owner) { _, _, owner in
            let scope: Erasure.Scope
            if let source {
                scope = .source(bundleIdentifier: source)
            } else if let importText {
                guard let id = UUIDText.parse(importText) else { throw CLIError.invalidInput("invalidUUID: '\(importText)'") }
                scope = .importRun(id)
            } else if let typeText, let fromText, let toText {
                let ledgerZone = await owner.timeZone()
                let zone = global.timeZoneOverride ?? ledgerZone
                let from = try Parse.date(fromText, "--from", zone: zone), to = try Self.dayAfter(toText, zone: zone)
                guard from < to else { throw CLIError.invalidInput("invalidRange: --from \(fromText) is after --to \(toText)") }
                scope = .typeRange(code: try Parse.type(typeText).code, from: from, to: to)
            } else if let typeText {
                scope = .type(code: try Parse.type(typeText).code)
            } else {
                scope = .all
            }
            return try await owner.erase(scope, reason: reason)
        }
        if global.json {
            var o = JSONObject()
            o.set("sequence", outcome.sequence)
            o.set("scope", outcome.scope.description)
            o.set("keysDestroyed", outcome.keyIds.count)
            o.set("samplesErased", outcome.samplesErased)
            o.set("samplesSealed", outcome.samplesSealed)
            o.set("samplesKept", outcome.samplesKept)
            o.set("recordsReplaced", outcome.erasures[0].replacements.count)
            o.set("snapshot", outcome.snapshot)
            Output.line(o.string)
        } else {
            let n = outcome.samplesErased, keys = outcome.keyIds.count
            Output.line("erased \(outcome.scope) at event \(outcome.sequence): \(n) sample\(n == 1 ? "" : "s")"
                        + " (\(outcome.samplesSealed) sealed in all), \(keys) key\(keys == 1 ? "" : "s") destroyed"
                        + (outcome.samplesKept > 0 ? ", \(outcome.samplesKept) sample\(outcome.samplesKept == 1 ? "" : "s") of the cut months kept under new keys" : ""))
        }
    }

    /// `--to`'s end: a date alone is the whole day (the start of the next one); an
    /// instant is itself (excluded).
    static func dayAfter(_ text: String, zone: TimeZone) throws -> Date {
        let start = try Parse.date(text, "--to", zone: zone)
        guard !text.contains("T") else { return start }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        // The last day there is ends where the valid range does (D1).
        return min(calendar.date(byAdding: .day, value: 1, to: start) ?? start, ISO8601.validRange.upperBound)
    }
}
