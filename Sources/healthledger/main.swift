import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Every subcommand, in the order `--help` lists them.
let commands: [Command] = [
    DemoCommand.command,
    InitCommand.command,
    AppCommand.command,
    AuthorizeCommand.command,
    StatusCommand.command,
    CharacteristicCommand.command,
    SaveCommand.command,
    WorkoutCommand.command,
    IngestCommand.command,
    ImportAppleHealthCommand.command,
    LatestCommand.command,
    QueryCommand.command,
    ProfileCommand.command,
    DeleteCommand.command,
    AuditCommand.command,
    StatsCommand.command,
    LogCommand.command,
    ReplayCommand.command,
    VerifyCommand.command,
    CheckpointCommand.command,
    ProveCommand.command,
    KeyCommand.command,
    UnitCommand.command,
]

let topHelp = """
    USAGE: healthledger [--ledger PATH] [--json] COMMAND [OPTIONS]

    HealthKit's central repository on an append-only, tamper-evident event log.

    COMMANDS:
    \(commands.map { "  " + $0.name.padding(toLength: 20, withPad: " ", startingAt: 0) + $0.abstract }.joined(separator: "\n"))

    GLOBAL OPTIONS:
      --ledger PATH   the ledger folder (default: $HEALTHLEDGER_PATH, else ./health.ledger)
      --json          machine output (JSON Lines where the output is a list)
      --app ID        act as an app (commands that read or write as one)
      --owner         act as the ledger's owner: sees everything, may delete anything
      --help          help for healthledger or for any command

    \(ExitStatus.table)
    """

func runMain() async -> Int32 {
    var args = ArgumentList(Array(CommandLine.arguments.dropFirst()))
    do {
        let global = try GlobalOptions.read(&args)
        guard let name = args.positional() else {
            Output.line(topHelp)
            return args.flag("--help", "-h") ? ExitStatus.success : ExitStatus.usage
        }
        if name == "help" || name == "--help" {
            Output.line(topHelp)
            return ExitStatus.success
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            throw CLIError.usage("unknown command '\(name)'; see healthledger --help")
        }
        try await command.run(&args, global)
        Output.flush()
        return ExitStatus.success
    } catch {
        let (status, message) = describe(error)
        Output.error("healthledger: " + message)
        return status
    }
}

if CommandLine.arguments.count == 2, ["--help", "-h"].contains(CommandLine.arguments[1]) {
    Output.line(topHelp)
    Output.flush()
    exit(0)
}
let status = await runMain()
Output.flush()
exit(status)
