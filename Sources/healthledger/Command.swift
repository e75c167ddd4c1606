import Foundation
import LedgerTools

/// Options every command understands.
struct GlobalOptions: Sendable {
    /// The ledger folder: `--ledger PATH`, else `$HEALTHLEDGER_PATH`, else `./health.ledger`.
    var ledgerPath: String
    /// `--json`: machine output (JSON Lines where the output is a list).
    var json: Bool
    /// `--tz ZONE`: the owner's time zone for this command only (age, "today", day
    /// boundaries), over the one the ledger keeps.
    var timeZoneOverride: TimeZone?
    /// This command's reads of the ledger: what they must tell after the command
    /// (a read that stopped short, a damaged snapshot) is asked of it by `main`.
    var reads: ReadSession

    /// The owner's time zone for this command: `--tz`, else the ledger's
    /// (`ownerTimeZoneSet`), else UTC.
    func timeZone(ledgerZone: String?) -> TimeZone {
        timeZoneOverride ?? ledgerZone.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
    }

    /// `$TZ` when it names a zone (a leading `:` dropped): the default zone of a new ledger.
    static var environmentTimeZone: String? {
        guard var zone = ProcessInfo.processInfo.environment["TZ"] else { return nil }
        if zone.hasPrefix(":") { zone.removeFirst() }
        return !zone.isEmpty && TimeZone(identifier: zone) != nil ? zone : nil
    }

    /// The global options that take a value, in either form, before or after the command.
    static let valueOptions: Set<String> = ["--ledger", "--app", "--tz", "--store", "--key-file"]

    static func read(_ args: inout ArgumentList) throws -> GlobalOptions {
        args.joinValues(of: valueOptions)
        let environment = ProcessInfo.processInfo.environment["HEALTHLEDGER_PATH"]
        let path = try args.option("--ledger") ?? environment ?? "./health.ledger"
        // An encrypted ledger's key-encryption key: `--key-file`, else the environment
        // (an empty value counts as absent, rule F4).
        let keyFile = [try args.option("--key-file"), ProcessInfo.processInfo.environment["HEALTHLEDGER_KEY_FILE"]]
            .compactMap { $0 }.first { !$0.isEmpty }
        let reads = ReadSession(LedgerLocation(path, keyFile: keyFile), note: { note in
            Progress.finish()  // a note never runs into the progress line
            Output.error("healthledger: " + note)
        })
        var options = GlobalOptions(ledgerPath: path, json: args.flag("--json"), reads: reads)
        if let zone = try args.option("--tz") {
            guard let tz = TimeZone(identifier: zone) else {
                throw CLIError.invalidInput("invalidTimeZone: --tz '\(zone)' names no time zone (an IANA name such as Pacific/Honolulu)")
            }
            options.timeZoneOverride = tz
        }
        return options
    }
}

/// One subcommand of `healthledger`: a name, a one-line abstract, its help text, and
/// what it does. `run` reads its own options from the argument list.
struct Command: Sendable {
    let name: String
    let abstract: String
    let help: String
    let run: @Sendable (inout ArgumentList, GlobalOptions) async throws -> Void
}

/// Prints `help` when `--help`/`-h` is among the words; true when it did.
func handledHelp(_ args: inout ArgumentList, _ help: String) -> Bool {
    guard args.flag("--help", "-h") else { return false }
    Output.line(help)
    return true
}
