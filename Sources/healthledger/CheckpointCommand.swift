import Foundation
import HealthLedger
import LedgerTools
import LedgerReporting

/// `healthledger checkpoint`: the Merkle tree head as a (signed) checkpoint note.
enum CheckpointCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] checkpoint [--key FILE] [--size N] [--json]

        Print the ledger's tree head in the transparency-dev checkpoint format:
          healthledger/<ledger id>
          <number of events>
          <base64 RFC 9162 root hash of every event's record bytes>
        followed, when the ledger has a key (keys/checkpoint.key, see `key generate`)
        or --key FILE is given, by a blank line and an Ed25519 signature line
        (`— name base64(keyhash ‖ signature)`, golang.org/x/mod/sumdb/note).
        A key file that anyone but its owner may read or write is refused (exit 5, as
        ssh refuses an unprotected private key): chmod 600 it.
        Keep the output: `verify --checkpoint FILE` later proves the ledger still
        extends it, and `prove --from-checkpoint FILE` proves it to someone else.
        --size N: the checkpoint of the first N events instead of all.
        --json: {"origin", "size", "root" (base64), "note"}.

        \(ExitStatus.table)
        """

    static let command = Command(name: "checkpoint", abstract: "Print the signed Merkle tree head", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let keyPath = try args.option("--key")
        let sizeText = try args.option("--size")
        try args.finish()
        let log = try global.reads.transparencyLog()
        var size = log.size
        if let sizeText {
            guard let s = UInt64(sizeText), s <= log.size else {
                throw CLIError.usage("--size takes a number of events from 0 to \(log.size)")
            }
            size = s
        }
        let signer = try CheckpointKeys.signer(localFolder: LedgerAccess.localFolder(global), keyPath: keyPath)
        let note = try log.note(size: size, signer: signer)
        if global.json {
            var o = JSONObject()
            o.set("origin", log.origin)
            o.set("size", size)
            o.set("root", TransparencyLog.base64(try log.tree.root(size: size)))
            o.set("note", note)
            Output.line(o.string)
        } else {
            Output.line(String(note.dropLast()))
        }
    }
}
