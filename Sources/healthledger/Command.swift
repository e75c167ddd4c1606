import Foundation

/// Options every command understands.
struct GlobalOptions: Sendable {
    /// The ledger folder: `--ledger PATH`, else `$HEALTHLEDGER_PATH`, else `./health.ledger`.
    var ledgerPath: String
    /// `--json`: machine output (JSON Lines where the output is a list).
    var json: Bool
    /// The owner's time zone for this command (age, "today", day boundaries):
    /// `--tz ZONE`, else `$TZ` when it names a zone, else UTC.
    var timeZone: TimeZone = TimeZone(identifier: "UTC")!

    /// The global options that take a value, in either form, before or after the command.
    static let valueOptions: Set<String> = ["--ledger", "--app", "--tz"]

    static func read(_ args: inout ArgumentList) throws -> GlobalOptions {
        args.joinValues(of: valueOptions)
        let environment = ProcessInfo.processInfo.environment["HEALTHLEDGER_PATH"]
        let path = try args.option("--ledger") ?? environment ?? "./health.ledger"
        var options = GlobalOptions(ledgerPath: path, json: args.flag("--json"))
        if let zone = try args.option("--tz") {
            guard let tz = TimeZone(identifier: zone) else {
                throw CLIError.invalidInput("invalidTimeZone: --tz '\(zone)' names no time zone (an IANA name such as Pacific/Honolulu)")
            }
            options.timeZone = tz
        } else if let zone = ProcessInfo.processInfo.environment["TZ"].map({ $0.hasPrefix(":") ? String($0.dropFirst()) : $0 }),
                  !zone.isEmpty, let tz = TimeZone(identifier: zone) {
            options.timeZone = tz
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
