import CLedgerAccel
import Foundation
import LedgerTools
#if canImport(Glibc)
import Glibc
#endif

/// Every subcommand, in the order `--help` lists them.
let commands: [Command] = [
    DemoCommand.command,
    InitCommand.command,
    AvailableCommand.command,
    AppCommand.command,
    RequestCommand.command,
    RequestCommand.statusCommand,
    AuthorizeCommand.command,
    StatusCommand.command,
    CharacteristicCommand.command,
    TimeZoneCommand.command,
    PreferredUnitCommand.command,
    SaveCommand.command,
    WorkoutCommand.command,
    IngestCommand.command,
    ImportAppleHealthCommand.command,
    LatestCommand.command,
    QueryCommand.command,
    StatisticsCommand.command,
    PriorityCommand.command,
    ChangesCommand.command,
    ProfileCommand.command,
    ActivityCommand.command,
    DeleteCommand.command,
    EraseCommand.command,
    AuditCommand.command,
    ExportCommand.command,
    DiffCommand.command,
    ReportCommand.command,
    StatsCommand.command,
    LogCommand.command,
    ReplayCommand.command,
    VerifyCommand.command,
    CheckpointCommand.command,
    ProveCommand.command,
    KeyCommand.command,
    UnitCommand.command,
    CopyCommand.command,
    EncryptCommand.command,
    LedgersCommand.command,
    TokenCommand.command,
    ServeCommand.command,
]

let topHelp = """
    USAGE: healthledger [--ledger PATH] [--key-file PATH] [--app ID | --owner] [--tz ZONE] [--json] COMMAND [OPTIONS]

    HealthKit's central repository on an append-only, tamper-evident event log.

    COMMANDS:
    \(commands.map { "  " + $0.name.padding(toLength: 20, withPad: " ", startingAt: 0) + $0.abstract }.joined(separator: "\n"))

    GLOBAL OPTIONS:
      --ledger PATH   the ledger folder (default: $HEALTHLEDGER_PATH, else ./health.ledger); in a
                      build with PostgreSQL also postgres://[user@]host[:port]/db?ledger=ID
      --store STORE   with no command: list the ledgers of a folder or postgres://host/db
      --json          machine output (JSON Lines where the output is a list)
      --app ID        act as an app (commands that read or write as one)
      --owner         act as the ledger's owner: sees everything, may delete anything
      --tz ZONE       the owner's time zone for this command (age, "today", day boundaries)
      --key-file PATH an encrypted ledger's key-encryption key (default: $HEALTHLEDGER_KEY_FILE;
                      `init --encrypt --key-file PATH` writes a new one)
    Each option takes its value as `--name value` or `--name=value`, before or after COMMAND.
      --help          help for healthledger or for any command

    \(ExitStatus.table)
    """

func runMain() async -> Int32 {
    var args = ArgumentList(Array(CommandLine.arguments.dropFirst()))
    var status = ExitStatus.success
    var outputFailureSaid = false
    var reads: ReadSession?
    do {
        let global = try GlobalOptions.read(&args)
        reads = global.reads
        if let name = args.positional() {
            if name == "help" || name == "--help" || name == "-h" {
                Output.line(topHelp)
            } else {
                guard let command = commands.first(where: { $0.name == name }) else {
                    throw CLIError.usage("unknown command '\(name)'; see healthledger --help")
                }
                try await command.run(&args, global)
                LedgerAccess.warnIfStoppedShort(reads)
                // A mapped snapshot whose checks failed while it was read fails the
                // command (exit 6): what was printed may rest on it (rule S8).
                if let problem = reads?.damageFound { throw problem }
            }
        } else if let store = try args.option("--store") {
            try args.finish()
            try LedgersCommand.list(store, global)
        } else {
            Output.line(topHelp)
            if !args.flag("--help", "-h") { status = ExitStatus.usage }
        }
    } catch let failure {
        LedgerAccess.warnIfStoppedShort(reads)  // e.g. "no data" from a read that stopped short
        // A mapped snapshot found damaged while the command ran (S8) is its outcome,
        // whatever it failed with: the failure may rest on a damaged block's zeros.
        let error: any Error = reads?.damageFound ?? failure
        let (code, message) = describe(error)
        Output.error("healthledger: " + message)
        status = code
        outputFailureSaid = error is Output.WriteFailed
    }
    reads?.setAsideDamagedSnapshots()
    // The one check of stdout: output that did not reach it fails the command (exit 1),
    // whatever else happened; a command that failed for its own reason keeps its status.
    do {
        try Output.finish()
    } catch {
        if !outputFailureSaid { Output.error("healthledger: " + error.description) }
        if status == ExitStatus.success { status = ExitStatus.failure }
    }
    return status
}

// glibc raises its mmap threshold each time a large block is freed (up to 32 MiB), so
// that after the first batches every batch-sized buffer comes from the heap, whose
// freed pieces are kept, not returned: an import's peak grew by ~25 MB that way. A
// fixed threshold keeps every buffer over 256 KiB mapped and returned when freed.
_ = hl_fix_mmap_threshold(256 << 10)
Output.prepare()
exit(await runMain())
