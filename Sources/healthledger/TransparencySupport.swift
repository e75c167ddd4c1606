import Foundation
import HealthLedger
import LedgerLog

/// What `checkpoint`, `prove`, `key` and `verify --checkpoint` share: the tree file,
/// the ledger's origin line and its checkpoint key (`keys/checkpoint.key`, 0600, in the
/// ledger folder beside the log, never inside it).
enum Transparency {
    static let keyFile = "keys/checkpoint.key"
    static let verifierFile = "keys/checkpoint.pub"

    static func origin(_ reader: LogReader) -> String { TreeCheckpoint.origin(of: reader) }

    /// The tree, brought up to the log's end; the file is written when it can be (a
    /// read-only folder still gets proofs, computed in memory).
    static func tree(_ fs: any LogFileSystem, _ reader: LogReader) throws -> MerkleTreeFile {
        let opened: (tree: MerkleTreeFile, found: MerkleTreeFile.Found)
        do { opened = try MerkleTreeFile.open(fs, reader: reader) } catch let e as LogError where isIO(e) {
            opened = try MerkleTreeFile.open(fs, reader: reader, save: false)
        }
        if case .rebuilt(let why) = opened.found { Output.error("healthledger: warning: \(MerkleTreeFile.fileName) rebuilt (\(why))") }
        return opened.tree
    }

    static func isIO(_ e: LogError) -> Bool {
        if case .io = e { return true }
        return false
    }

    /// The signer: `--key FILE`, else the ledger's `keys/checkpoint.key` if present.
    static func signer(_ global: GlobalOptions, keyPath: String?) throws -> SignedNote.Signer? {
        let local = try LedgerAccess.localFolder(global) as NSString
        let path = keyPath ?? local.appendingPathComponent(keyFile)
        guard FileManager.default.fileExists(atPath: path) else {
            if keyPath != nil { throw CLIError.notFound("keyNotFound: \(path)") }
            return nil
        }
        try refuseUnprotectedKey(path)
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw CLIError.invalidInput("unreadableKey: \(path)") }
        do { return try SignedNote.Signer(privateKey: text) } catch {
            throw CLIError.invalidInput("malformedKey: \(path): \(error)")
        }
    }

    /// Refuses a private key file that anyone but its owner may read or write (any group
    /// or other permission bit, as ssh refuses an unprotected private key): a signature
    /// by a key others could have copied proves nothing. Exit 5, naming the file, its
    /// mode and the fix.
    static func refuseUnprotectedKey(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { throw CLIError.invalidInput("unreadableKey: \(path)") }
        let mode = info.st_mode & 0o7777
        guard mode & 0o077 == 0 else {
            throw CLIError(status: ExitStatus.refused, message: "unprotectedKey: \(path) has mode \(String(format: "%04o", mode)): "
                           + "a private key must be readable by its owner alone (chmod 600 \(path))")
        }
    }

    /// The verifier key: `--verifier-key KEY-OR-FILE`, else the ledger's `keys/checkpoint.pub`.
    static func verifier(_ global: GlobalOptions, _ option: String?) throws -> SignedNote.Verifier? {
        var text = option
        if let o = option, FileManager.default.fileExists(atPath: o) { text = try? String(contentsOfFile: o, encoding: .utf8) }
        if option == nil {
            let path = (try LedgerAccess.localFolder(global) as NSString).appendingPathComponent(verifierFile)
            text = try? String(contentsOfFile: path, encoding: .utf8)
        }
        guard let text else { return nil }
        do { return try SignedNote.Verifier(verifierKey: text) } catch {
            throw CLIError.invalidInput("malformedVerifierKey: \(error)")
        }
    }

    /// The checkpoint note of the first `size` records, signed when there is a signer.
    static func note(_ tree: MerkleTreeFile, _ reader: LogReader, size: UInt64, signer: SignedNote.Signer?) throws -> String {
        let text = TreeCheckpoint(origin: origin(reader), size: size, root: try tree.root(size: size)).text
        return signer.map { $0.sign(text) } ?? text
    }

    /// Reads a checkpoint file given on the command line.
    static func readCheckpoint(_ path: String) throws -> (note: String, checkpoint: TreeCheckpoint) {
        guard let note = try? String(contentsOfFile: path, encoding: .utf8) else { throw CLIError.notFound("checkpointNotFound: \(path)") }
        do { return (note, try TreeCheckpoint.parse(note).checkpoint) } catch {
            throw CLIError.invalidInput("malformedCheckpoint: \(path): \(error)")
        }
    }
}
