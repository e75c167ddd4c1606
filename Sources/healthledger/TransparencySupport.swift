import Foundation
import LedgerChecksums
import LedgerLog

/// What `checkpoint`, `prove`, `key` and `verify --checkpoint` share: the tree file,
/// the ledger's origin line and its checkpoint key (`keys/checkpoint.key`, 0600, in the
/// ledger folder beside the log, never inside it).
enum Transparency {
    static let keyFile = "keys/checkpoint.key"
    static let verifierFile = "keys/checkpoint.pub"

    static func origin(_ reader: LogReader) -> String {
        "healthledger/\(reader.header.ledgerId.uuidString.lowercased())"
    }

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

    static func b64(_ d: SHA256Digest) -> String { Data(d.array).base64EncodedString() }

    /// `verify --checkpoint`: problems when the ledger does not extend the checkpoint
    /// (checked against a tree built from the log alone, not the tree file), or when its
    /// signature by the known verifier key fails.
    static func checkExtends(note: String, checkpoint: TreeCheckpoint, fresh: MerkleTreeFile, reader: LogReader,
                             verifier: SignedNote.Verifier?) -> (problems: [String], notes: [String]) {
        var problems: [String] = [], notes: [String] = []
        if checkpoint.origin != origin(reader) {
            problems.append("the checkpoint is of \(checkpoint.origin), this ledger is \(origin(reader))")
        }
        if let verifier {
            do {
                switch try SignedNote.verify(note, by: verifier) {
                case true?: notes.append("checkpoint signature by \(verifier.name) verifies")
                default: problems.append("the checkpoint carries no signature by \(verifier.name)+\(String(format: "%08x", verifier.keyHash))")
                }
            } catch { problems.append("checkpoint: \(error)") }
        } else {
            notes.append("checkpoint signature not checked (no verifier key)")
        }
        if checkpoint.size > fresh.size {
            problems.append("the checkpoint covers \(checkpoint.size) events, the ledger has only \(fresh.size): events were removed")
        } else if let root = try? fresh.root(size: checkpoint.size) {
            if root != checkpoint.root {
                problems.append("the ledger's first \(checkpoint.size) events hash to \(b64(root)), the checkpoint says \(b64(checkpoint.root)): history up to event \(checkpoint.size) was rewritten")
            } else {
                notes.append("the ledger extends the checkpoint of \(checkpoint.size) events (\(fresh.size) now)")
            }
        } else {
            problems.append("the tree of the first \(checkpoint.size) events could not be computed from the log")
        }
        return (problems, notes)
    }
}

extension Transparency {
    /// `verify`'s part: the tree file (when present) against a tree built from the log, and
    /// with `--checkpoint`, that the ledger extends the checkpoint. Returns problems as
    /// (check, sequence, offset, what) and lines to show.
    static func verifyProblems(_ global: GlobalOptions, checkpointPath: String?, verifierKey: String?)
        throws -> (problems: [(String, UInt64?, UInt64?, String)], notes: [String]) {
        let fs = try LedgerAccess.fileSystem(global)
        let checkpoint = try checkpointPath.map { try readCheckpoint($0) }
        let verifier = try checkpoint == nil ? nil : Transparency.verifier(global, verifierKey)
        guard checkpoint != nil || fs.exists(MerkleTreeFile.fileName) else { return ([], []) }
        let reader = try LogReader(fs)
        guard let fresh = try? MerkleTreeFile.build(reader: reader) else {
            return (checkpoint == nil ? [] : [("checkpoint", nil, nil, "the log could not be read to its end to rebuild the tree")], [])
        }
        var problems: [(String, UInt64?, UInt64?, String)] = []
        var notes: [String] = []
        if let what = MerkleTreeFile.check(fs, reader: reader, against: fresh) { problems.append(("tree", nil, nil, what)) }
        notes.append("merkle tree: \(fresh.size) events, root \(b64(fresh.root))")
        if let (note, cp) = checkpoint {
            let r = checkExtends(note: note, checkpoint: cp, fresh: fresh, reader: reader, verifier: verifier)
            problems += r.problems.map { ("checkpoint", nil, nil, $0) }
            notes += r.notes
        }
        return (problems, notes)
    }
}
