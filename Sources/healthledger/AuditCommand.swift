import Foundation
import HealthLedger
import LedgerTools
import HealthModel
import LedgerReporting

/// `healthledger audit TYPE|UUID`.
enum AuditCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] audit TYPE|UUID|raw:IDENTIFIER [--json]
               healthledger [--ledger PATH] audit --reads [--app ID] [TYPE] [--json]

        The history of a type or of one object: every event that touched it — requests
        and decisions about the type, saves, replacements, deletions — with who did it,
        when, and the acting app's authorization in force at that moment. Records kept
        raw (an identifier this version does not know, such as
        HKDataTypeSleepDurationGoal, or `raw:IDENTIFIER` for raw records of a known
        type) are traced by their identifier as written, with value, unit and reason.

        --reads: who read what through `serve` (the access log beside the ledger, never
        part of its history): when, which credential and app, the route, the types and
        the predicate asked, how many objects came back, the status, and the ledger's
        event the answer was read at. --app ID (or `owner`) and TYPE narrow it.

        \(ExitStatus.table)
        """

    static let command = Command(name: "audit", abstract: "Every event that touched a type or an object", help: help) { args, global in
        if handledHelp(&args, help) { return }
        if args.flag("--reads") {
            try reads(&args, global)
            return
        }
        let text = try args.required("TYPE or UUID")
        try args.finish()
        let subject: LedgerAudit.Subject
        if let uuid = UUIDText.parse(text) {
            subject = .object(uuid)
        } else if text.hasPrefix("raw:") {
            subject = .raw(String(text.dropFirst(4)))
        } else {
            do {
                subject = .type(try Parse.type(text))
            } catch let error as HealthModelError {
                // an identifier this version does not know: records kept raw may carry it
                guard case .dataTypeNotAvailable = error else { throw error }
                subject = .raw(text)
            }
        }
        let entries = try global.reads.history(of: subject)
        if entries.isEmpty, case .object = subject { throw CLIError.notFound("objectNotFound: no event touched \(text)") }
        if entries.isEmpty, case .raw(let identifier) = subject, !text.hasPrefix("raw:") {
            throw HealthModelError.dataTypeNotAvailable(identifier: identifier)
        }
        for e in entries {
            if global.json {
                var o = JSONObject()
                o.set("seq", e.sequence)
                o.set("recordedAt", ISO8601.string(e.recordedDate))
                o.set("kind", e.kind.name)
                o.set("actor", e.actor)
                o.set("what", e.what)
                o.set("authorization", e.authorization)
                Output.line(o.string)
            } else {
                Output.line("\(e.sequence)\t\(ISO8601.string(e.recordedDate))\t\(e.actor)\t\(e.what)" + (e.authorization.map { "\t[\($0)]" } ?? ""))
            }
        }
    }
}

extension AuditCommand {
    /// `audit --reads`: the access log, narrowed by app and type.
    static func reads(_ args: inout ArgumentList, _ global: GlobalOptions) throws {
        let app = try args.option("--app")
        let typeText = args.positional()
        try args.finish()
        let type = try typeText.map { try Parse.type($0).identifier }
        let folder = try LedgerAccess.localFolder(global)
        guard AccessLog.exists(ledgerPath: folder) else {
            throw CLIError.notFound("noAccessLog: nothing was read through serve at \(global.ledgerPath) (no access log)")
        }
        for stored in try AccessLog.entries(ledgerPath: folder) {
            let e = stored.entry
            if let app, e.subject != app { continue }
            if let type, !e.types.contains(type) { continue }
            if global.json {
                var o = JSONObject()
                o.set("seq", stored.sequence)
                o.set("recordedAt", ISO8601.string(stored.recordedDate))
                o.set("credential", e.credential?.description)
                o.set("subject", e.subject)
                o.set("route", e.route)
                o.setRaw("types", JSONObject.array(e.types.map { JSONObject.quote($0) }))
                o.set("predicate", e.predicate)
                o.set("returned", e.returned)
                o.set("status", e.status)
                o.set("ledgerSequence", e.ledgerSequence)
                o.set("peer", e.peer)
                Output.line(o.string)
            } else {
                Output.line([String(stored.sequence), ISO8601.string(stored.recordedDate), e.subject, e.credential.map { "credential \($0)" } ?? "-",
                              e.route, e.types.joined(separator: ","), e.predicate ?? "", "\(e.returned) returned", "status \(e.status)",
                              "at event #\(e.ledgerSequence)", e.peer].joined(separator: "\t"))
            }
        }
    }
}
