import Foundation
import LedgerChecksums

/// A tree head in the transparency-dev checkpoint format (the body of a signed note):
/// the origin line, the tree size in decimal, the root hash in standard base64, each
/// ending in a newline. Extension lines after the root are allowed and ignored.
public struct TreeCheckpoint: Sendable, Equatable {
    /// Names the log: for a ledger, `healthledger/<ledger id>`.
    public let origin: String
    /// Records covered.
    public let size: UInt64
    /// RFC 9162 root of the first `size` records.
    public let root: SHA256Digest

    public init(origin: String, size: UInt64, root: SHA256Digest) {
        self.origin = origin
        self.size = size
        self.root = root
    }

    /// The checkpoint's text (the note body that is signed).
    public var text: String { "\(origin)\n\(size)\n\(Data(root.array).base64EncodedString())\n" }

    /// Parses a checkpoint note (signed or not); also returns its signatures.
    public static func parse(_ note: String) throws -> (checkpoint: TreeCheckpoint, signatures: [SignedNote.Signature]) {
        let (text, signatures) = try SignedNote.parse(note)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count >= 4, !lines[0].isEmpty else { throw SignedNote.Failure.malformedNote("a checkpoint has an origin, a size and a root") }
        guard let size = UInt64(lines[1]), String(size) == lines[1] else { throw SignedNote.Failure.malformedNote("bad tree size '\(lines[1])'") }
        guard let root = Data(base64Encoded: lines[2]), root.count == 32 else { throw SignedNote.Failure.malformedNote("bad root hash '\(lines[2])'") }
        return (TreeCheckpoint(origin: lines[0], size: size, root: SHA256Digest(Array(root))), signatures)
    }
}
