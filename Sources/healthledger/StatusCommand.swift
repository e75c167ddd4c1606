import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

enum StatusCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] status --app ID [TYPE...] [--json]

        The sharing status of an app per type, exactly as HealthKit's
        authorizationStatus(for:) reports it: notDetermined, sharingDenied,
        sharingAuthorized. Read permission is never revealed to apps; `replay` shows it
        to the owner. Without TYPE: every type the app asked for or was answered on.

        \(ExitStatus.table)
        """

    static let command = Command(name: "status", abstract: "An app's sharing status per type (as HealthKit reports it)", help: help) { args, global in
        if handledHelp(&args, help) { return }
        guard let bundle = try args.option("--app") else { throw CLIError.usage("status needs --app ID") }
        var types = try args.remainingPositionals().map(Parse.type)
        try args.finish()
        let view = try LedgerView.read(global, as: .owner)
        let asked: [(type: ObjectType, permission: TypePermission)]
        do throws(RuleViolation) {
            asked = try view.permissions(ofApp: bundle)
        } catch .appNotRegistered {
            throw LedgerView.notRegistered(bundle)
        } catch {
            throw error
        }
        if types.isEmpty { types = asked.map(\.type) }
        for type in types {
            let status = try view.permission(ofApp: bundle, for: type).share
            if global.json {
                var o = JSONObject()
                o.set("app", bundle)
                o.set("type", type.identifier)
                o.set("status", status.name)
                o.set("rawValue", status.rawValue)
                Output.line(o.string)
            } else {
                Output.line("\(type.identifier)\t\(status.name)")
            }
        }
    }
}
