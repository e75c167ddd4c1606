import Foundation
import LedgerLog

/// The ledger's checkpoint key files: the Ed25519 private key
/// (`keys/checkpoint.key`, 0600, in a 0700 folder of the ledger's local folder, beside
/// the log and never in it) and its verifier key (`keys/checkpoint.pub`).
package enum CheckpointKeys {
    package static let keyFile = "keys/checkpoint.key"
    package static let verifierFile = "keys/checkpoint.pub"

    /// The signer: the key at `keyPath`, else the ledger's own key if there is one
    /// (nil when neither: checkpoints go out unsigned). A named file that is absent is
    /// `keyNotFound`; a key others may read is `unprotectedKey`.
    package static func signer(localFolder: String, keyPath: String?) throws(ToolError) -> SignedNote.Signer? {
        let path = keyPath ?? (localFolder as NSString).appendingPathComponent(keyFile)
        guard FileManager.default.fileExists(atPath: path) else {
            if keyPath != nil { throw .keyNotFound(path: path) }
            return nil
        }
        try refuseUnprotectedKey(path)
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw .unreadableKey(path: path) }
        do { return try SignedNote.Signer(privateKey: text) } catch {
            throw .malformedKey(path: path, reason: "\(error)")
        }
    }

    /// Refuses a private key file that anyone but its owner may read or write (any group
    /// or other permission bit, as ssh refuses an unprotected private key): a signature
    /// by a key others could have copied proves nothing.
    package static func refuseUnprotectedKey(_ path: String) throws(ToolError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .unreadableKey(path: path) }
        let mode = UInt32(info.st_mode) & 0o7777
        guard mode & 0o077 == 0 else { throw .unprotectedKey(path: path, mode: mode) }
    }

    /// The verifier key: `option` (the key's text, or a file holding it), else the
    /// ledger's `keys/checkpoint.pub`; nil when there is none.
    package static func verifier(localFolder: String, option: String?) throws(ToolError) -> SignedNote.Verifier? {
        var text = option
        if let o = option, FileManager.default.fileExists(atPath: o) {
            // A path that is there is the key's file: one that cannot be read (a folder,
            // no permission) is refused, never taken as "no verifier key".
            guard let read = try? String(contentsOfFile: o, encoding: .utf8) else { throw .unreadableKey(path: o) }
            text = read
        }
        if option == nil {
            text = try? String(contentsOfFile: (localFolder as NSString).appendingPathComponent(verifierFile), encoding: .utf8)
        }
        guard let text else { return nil }
        do { return try SignedNote.Verifier(verifierKey: text) } catch {
            throw .malformedVerifierKey(reason: "\(error)")
        }
    }

    /// Generates a key named `name` and writes it (`write`). A name with spaces or
    /// '+', or none, is `invalidKeyName`. Returns the verifier key.
    package static func generate(name: String, localFolder: String, out: String?, replacing: Bool) throws(ToolError) -> String {
        let signer: SignedNote.Signer
        do { signer = try SignedNote.Signer.generate(name: name) } catch { throw .invalidKeyName(name) }
        return try write(signer, localFolder: localFolder, out: out, replacing: replacing)
    }

    /// Writes a new signer's keys: the private key to `out` (default the ledger's own
    /// key file), mode 0600 from its creation, in a folder made 0700; the verifier key
    /// beside it in `keys/checkpoint.pub` when the ledger's own key was written. An
    /// existing key is kept unless `replacing`. Returns the verifier key.
    static func write(_ signer: SignedNote.Signer, localFolder: String, out: String?, replacing: Bool) throws(ToolError) -> String {
        let local = localFolder as NSString
        let path = out ?? local.appendingPathComponent(keyFile)
        if FileManager.default.fileExists(atPath: path) && !replacing { throw .keyExists(path: path) }
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty && !FileManager.default.fileExists(atPath: folder) {
            guard mkdir(folder, 0o700) == 0 else { throw .io(operation: "mkdir", path: folder, errno: errno) }
        }
        try writeFile(signer.privateKey + "\n", to: path, mode: 0o600)
        if out == nil {
            try writeFile(signer.verifierKey + "\n", to: local.appendingPathComponent(verifierFile), mode: 0o644)
        }
        return signer.verifierKey
    }

    /// Creates (or replaces) a file with `mode` from the start, synced, renamed into
    /// place: a key is never readable by others, nor seen half written.
    static func writeFile(_ text: String, to path: String, mode: mode_t) throws(ToolError) {
        let temporary = path + ".tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode)
        guard fd >= 0 else { throw .io(operation: "open", path: temporary, errno: errno) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == bytes.count, synced == 0, rename(temporary, path) == 0 else {
            let saved = errno
            unlink(temporary)
            throw .io(operation: "writing", path: path, errno: saved)
        }
    }
}
