import Foundation
import HealthLedger
import LedgerReporting

/// `healthledger app register`: an app and its purpose strings.
enum AppCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] app register --app ID --name NAME
                                            [--share-purpose TEXT] [--read-purpose TEXT]

        Register an app (or update its name and purpose strings). The purpose strings
        are HealthKit's NSHealthUpdateUsageDescription (why it writes: --share-purpose)
        and NSHealthShareUsageDescription (why it reads: --read-purpose); requesting
        authorization without the one a request needs is refused.

        ID is a bundle identifier of HealthKit's kind: letters, digits, '.' and '-', at
        most 255 bytes (else exit 3, rule E14). `export:NAME` names a source an Apple
        Health import brought: only an import registers or renames those (exit 5,
        rule E13), and no one else saves or deletes as them.

        \(ExitStatus.table)
        """

    static let command = Command(name: "app", abstract: "Register an app and its purpose strings", help: help) { args, global in
        if handledHelp(&args, help) { return }
        guard args.positional() == "register" else { throw CLIError.usage("app needs a subcommand: register") }
        guard let bundle = try args.option("--app") else { throw CLIError.usage("app register needs --app ID") }
        guard let name = try args.option("--name") else { throw CLIError.usage("app register needs --name NAME") }
        let share = try args.option("--share-purpose"), read = try args.option("--read-purpose")
        try args.finish()
        let registration = AppRegistration(bundleIdentifier: bundle, name: name, readPurpose: read, sharePurpose: share)
        let ledger = try LedgerAccess.openForWriting(global)
        do {
            _ = try await HealthStore(ledger: ledger, app: registration)
            let ordinal = await ledger.ordinal(ofApp: bundle)
            try await ledger.close()
            if global.json {
                var o = JSONObject()
                o.set("app", bundle)
                o.set("ordinal", ordinal.map { Int($0) })
                Output.line(o.string)
            } else {
                Output.line("registered \(bundle) (\(name)) as app #\(ordinal ?? 0)")
            }
        } catch {
            ledger.abandon()  // refused: leave the ledger as it was
            throw error
        }
    }
}
