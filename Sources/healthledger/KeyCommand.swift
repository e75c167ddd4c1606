import Foundation
import HealthLedger
import LedgerLog

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
        let (_, reader) = try LedgerAccess.reader(global)
        let name = nameOption ?? Transparency.origin(reader)
        let signer: SignedNote.Signer
        do { signer = try SignedNote.Signer.generate(name: name) } catch {
            throw CLIError.usage("--name must be non-empty, without spaces or '+'")
        }
        let local = try LedgerAccess.localFolder(global) as NSString
        let keysFolder = local.appendingPathComponent("keys")
        let path = out ?? local.appendingPathComponent(Transparency.keyFile)
        if FileManager.default.fileExists(atPath: path) && !force {
            throw CLIError(status: ExitStatus.refused, message: "keyExists: \(path) already holds a key (--force replaces it)")
        }
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty && !FileManager.default.fileExists(atPath: folder) {
            guard mkdir(folder, 0o700) == 0 else { throw CLIError(status: ExitStatus.failure, message: "io: mkdir \(folder): errno \(errno)") }
        }
        try write(signer.privateKey + "\n", to: path, mode: 0o600)
        if out == nil {
            try write(signer.verifierKey + "\n", to: (keysFolder as NSString).appendingPathComponent("checkpoint.pub"), mode: 0o644)
        }
        Output.line(signer.verifierKey)
    }

    /// Creates (or replaces) a file with `mode` from the start: the key is never readable by others.
    static func write(_ text: String, to path: String, mode: mode_t) throws {
        let temporary = path + ".tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode)
        guard fd >= 0 else { throw CLIError(status: ExitStatus.failure, message: "io: open \(temporary): errno \(errno)") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == bytes.count, synced == 0, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw CLIError(status: ExitStatus.failure, message: "io: writing \(path): errno \(errno)")
        }
    }
}
