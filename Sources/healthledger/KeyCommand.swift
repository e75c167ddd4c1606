import Foundation
import HealthLedger
import LedgerTools

/// `healthledger key generate`: the Ed25519 key that signs checkpoints.
enum KeyCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] key generate [--name NAME] [--out FILE] [--force]

        Make an Ed25519 checkpoint key. The private key (sumdb/note format,
        PRIVATE+KEY+name+hash+base64) goes to FILE, default <ledger>/keys/checkpoint.key,
        mode 0600 in a 0700 folder, beside the log and never in it; the verifier key
        (name+hash+base64, also written to keys/checkpoint.pub) is printed: give it to
        whoever checks your checkpoints. NAME defaults to the ledger's origin
        (healthledger/<ledger id>). An existing key is kept unless --force.

        \(ExitStatus.table)
        """

    static let command = Command(name: "key", abstract: "Generate the checkpoint signing key", help: help) { args, global in
        if handledHelp(&args, help) { return }
        guard args.positional() == "generate" else { throw CLIError.usage("key generate [--name NAME] [--out FILE]") }
        let nameOption = try args.option("--name")
        let out = try args.option("--out")
        let force = args.flag("--force")
        try args.finish()
        let origin = try global.reads.origin()  // first: a key is for a ledger that exists
        let name = nameOption ?? origin
        do {
            Output.line(try CheckpointKeys.generate(name: name, localFolder: LedgerAccess.localFolder(global), out: out, replacing: force))
        } catch ToolError.invalidKeyName {
            throw CLIError.usage("--name must be non-empty, without spaces or '+'")
        }
    }

}
