import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

/// `healthledger erase`: the right to erasure on an encrypted ledger (issue 32).
enum EraseCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] --key-file PATH erase (--source ID | --import ID | --type T | --all) --reason TEXT [--json]

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
          --all         every health record (apps, grants and settings stay)
          --reason TEXT why (1 to 1,000 bytes), kept in the erased event
          --json        {"sequence":N,"scope":…,"keysDestroyed":N,"samplesErased":N,…}

        Nothing to erase (no live key holds the scope) is exit 4; a plain ledger is exit 2.

        \(ExitStatus.table)
        """

    static let command = Command(name: "erase", abstract: "Erase a source, an import, a type or everything (destroys keys)", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let source = try args.option("--source")
        let importText = try args.option("--import")
        let typeText = try args.option("--type")
        let all = args.flag("--all")
        guard let reason = try args.option("--reason") else { throw CLIError.usage("erase needs --reason TEXT") }
        try args.finish()
        let given = [source != nil, importText != nil, typeText != nil, all].filter { $0 }.count
        guard given == 1 else { throw CLIError.usage("give exactly one of --source ID, --import ID, --type T, --all") }
        let scope: Erasure.Scope
        if let source {
            scope = .source(bundleIdentifier: source)
        } else if let importText {
            guard let id = UUIDText.parse(importText) else { throw CLIError.invalidInput("invalidUUID: '\(importText)'") }
            scope = .importRun(id)
        } else if let typeText {
            scope = .type(code: try Parse.type(typeText).code)
        } else {
            scope = .all
        }
        let outcome = try await withStore(global, .owner) { _, _, owner in try await owner.erase(scope, reason: reason) }
        let e = outcome.erasure
        if global.json {
            var o = JSONObject()
            o.set("sequence", outcome.sequence)
            o.set("scope", e.scope.description)
            o.set("keysDestroyed", e.keyIds.count)
            o.set("samplesErased", e.liveAtErasure)
            o.set("samplesSealed", e.samples.count)
            o.set("recordsReplaced", e.replacements.count)
            o.set("snapshot", outcome.snapshot)
            Output.line(o.string)
        } else {
            Output.line("erased \(e.scope) at event \(outcome.sequence): \(e.liveAtErasure) sample\(e.liveAtErasure == 1 ? "" : "s")"
                        + " (\(e.samples.count) sealed in all), \(e.keyIds.count) key\(e.keyIds.count == 1 ? "" : "s") destroyed")
        }
    }
}
