import Foundation
import HealthLedger

/// What the owner's tools refuse, each with the kind of failure it is (so that every
/// front end reports it with the status the one table, `FailureKind`, gives it).
package enum ToolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `--key FILE` names no file.
    case keyNotFound(path: String)
    /// The key file cannot be read.
    case unreadableKey(path: String)
    /// The key file is not a private key (the parser's reason).
    case malformedKey(path: String, reason: String)
    /// A private key file others may read or write (any group or other bit).
    case unprotectedKey(path: String, mode: UInt32)
    /// A verifier key that does not parse.
    case malformedVerifierKey(reason: String)
    /// A key name that is empty or holds spaces or '+'.
    case invalidKeyName(String)
    /// A key is already there (generation keeps it unless told to replace it).
    case keyExists(path: String)
    /// The checkpoint file named does not exist or cannot be read.
    case checkpointNotFound(path: String)
    /// The checkpoint file is not a checkpoint note.
    case malformedCheckpoint(path: String, reason: String)
    /// A checkpoint of another ledger.
    case wrongLedger(checkpointOrigin: String, ledgerOrigin: String)
    /// The ledger does not extend the checkpoint: it holds fewer events …
    case fewerEventsThanCheckpoint(checkpoint: UInt64, ledger: UInt64)
    /// … or its first events hash to another root (base64).
    case rootDiffers(size: UInt64, ledgerRoot: String, checkpointRoot: String)
    /// An export's folder holds files already (or is not a folder).
    case outputNotEmpty(path: String)
    /// A copy's destination already holds a ledger.
    case ledgerExists(path: String)
    /// An event past the tree's end.
    case sequenceNotFound(UInt64, treeSize: UInt64)
    /// A file of the tools' own could not be written (errno).
    case io(operation: String, path: String, errno: Int32)
    /// `encrypt`'s source ends inside an import transaction still open (rule E11).
    case sourceOpenImport(importId: UUID)
    /// `encrypt` stopped part way: what it made was removed.
    case incompleteCopy(path: String, cause: String)
    /// `encrypt`'s destination lies inside its source's folder.
    case destinationInsideSource(source: String, destination: String)
    /// `encrypt`'s new key file is there already (a link too: never followed).
    case keyFileExists(path: String)
    /// `encrypt`'s destination is not an empty folder (a file, or a folder with files).
    case destinationNotEmpty(path: String)

    /// Which kind of failure it is.
    package var kind: FailureKind {
        switch self {
        case .invalidKeyName: .usage
        case .keyNotFound, .checkpointNotFound, .sequenceNotFound: .notFound
        case .unreadableKey, .malformedKey, .malformedVerifierKey, .malformedCheckpoint, .wrongLedger: .invalidInput
        case .unprotectedKey: .forbidden
        case .keyExists, .ledgerExists, .outputNotEmpty: .conflict
        case .fewerEventsThanCheckpoint, .rootDiffers: .damaged
        case .io, .incompleteCopy: .failure
        case .sourceOpenImport, .keyFileExists, .destinationNotEmpty: .conflict
        case .destinationInsideSource: .usage
        }
    }

    package var description: String {
        switch self {
        case .keyNotFound(let path): "keyNotFound: \(path)"
        case .unreadableKey(let path): "unreadableKey: \(path)"
        case .malformedKey(let path, let reason): "malformedKey: \(path): \(reason)"
        case .unprotectedKey(let path, let mode):
            "unprotectedKey: \(path) has mode \(String(mode, radix: 8).leftPadded(to: 4)): "
                + "a private key must be readable by its owner alone (chmod 600 \(path))"
        case .malformedVerifierKey(let reason): "malformedVerifierKey: \(reason)"
        case .invalidKeyName(let name): "invalidKeyName: '\(name)' (a key's name is non-empty, without spaces or '+')"
        case .outputNotEmpty(let path): "outputNotEmpty: \(path) holds files already; an export writes into a new or empty folder"
        case .ledgerExists(let path): "ledgerExists: \(path) already holds a ledger; copy and encrypt write only to an empty destination"
        case .keyExists(let path): "keyExists: \(path) already holds a key (--force replaces it)"
        case .checkpointNotFound(let path): "checkpointNotFound: \(path)"
        case .malformedCheckpoint(let path, let reason): "malformedCheckpoint: \(path): \(reason)"
        case .wrongLedger(let theirs, let ours): "wrongLedger: the checkpoint is of \(theirs), this ledger is \(ours)"
        case .fewerEventsThanCheckpoint(let checkpoint, let ledger):
            "notExtended: the checkpoint covers \(checkpoint) events, the ledger has \(ledger)"
        case .rootDiffers(let size, let ledgerRoot, let checkpointRoot):
            "notExtended: the ledger's first \(size) events hash to \(ledgerRoot), the checkpoint says \(checkpointRoot)"
        case .sequenceNotFound(let sequence, let size): "sequenceNotFound: event \(sequence) (the ledger has \(size))"
        case .io(let operation, let path, let errno): "io: \(operation) \(path): errno \(errno)"
        case .sourceOpenImport(let id):
            "sourceOpenImport: the source ends inside import \(id.uuidString), still open; open it for writing once (its writer aborts the import), then encrypt it"
        case .incompleteCopy(let path, let cause):
            "incompleteCopy: the copy into \(path) stopped (\(cause)); what it made was removed"
        case .destinationInsideSource(let source, let destination):
            "usage: \(destination) lies inside \(source): encrypt reads the source, never writes it (and its folder is what you may delete after)"
        case .keyFileExists(let path):
            "keyFileExists: \(path) already exists; a new key-encryption key is never written over a file"
        case .destinationNotEmpty(let path):
            "destinationNotEmpty: \(path) is not an empty folder; encrypt writes only into a new or empty one"
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
