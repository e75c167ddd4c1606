import Foundation
import LedgerChecksums

/// Signed notes in the format of golang.org/x/mod/sumdb/note (and the transparency-dev
/// checkpoint): the text, a blank line, then one line per signature
/// `— name base64(keyHash ‖ signature)`. The key hash is the first four bytes
/// (big-endian) of SHA-256(name ‖ "\n" ‖ 0x01 ‖ publicKey); 0x01 marks Ed25519.
public enum SignedNote {
    /// Why a key, note or signature was refused.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        case malformedKey(String)
        case malformedNote(String)
        case badSignature(name: String)

        public var description: String {
            switch self {
            case .malformedKey(let why): "malformed key: \(why)"
            case .malformedNote(let why): "malformed signed note: \(why)"
            case .badSignature(let name): "the signature of \(name) does not verify"
            }
        }
    }

    /// The key hash of an Ed25519 key with `name`.
    public static func keyHash(name: String, publicKey: [UInt8]) -> UInt32 {
        let digest = SHA256.hash(Array(name.utf8) + [0x0A, 0x01] + publicKey).array
        return UInt32(digest[0]) << 24 | UInt32(digest[1]) << 16 | UInt32(digest[2]) << 8 | UInt32(digest[3])
    }

    static func validName(_ name: String) -> Bool {
        !name.isEmpty && !name.contains(where: { $0 == "+" || $0 == " " || $0 == "\n" || $0.isWhitespace })
    }

    /// A signer: a key name and an Ed25519 seed.
    public struct Signer: Sendable {
        public let name: String
        public let keyHash: UInt32
        public let publicKey: [UInt8]
        private let seed: [UInt8]

        /// From a private key `PRIVATE+KEY+name+hash+base64(0x01 ‖ seed)`.
        public init(privateKey text: String) throws {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            let parts = trimmed.split(separator: "+", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 5, parts[0] == "PRIVATE", parts[1] == "KEY" else { throw Failure.malformedKey("not PRIVATE+KEY+name+hash+key") }
            guard Self.isValidName(parts[2]) else { throw Failure.malformedKey("bad name") }
            guard let data = Data(base64Encoded: parts[4]), data.count == 33, data.first == 1 else {
                throw Failure.malformedKey("not an Ed25519 seed")
            }
            try self.init(name: parts[2], seed: Array(data.dropFirst()))
            guard parts[3] == String(format: "%08x", keyHash) else { throw Failure.malformedKey("key hash \(parts[3]) does not match the key") }
        }

        /// From a name and a 32-byte seed.
        public init(name: String, seed: [UInt8]) throws {
            guard Self.isValidName(name) else { throw Failure.malformedKey("bad name") }
            guard seed.count == 32 else { throw Failure.malformedKey("a seed is 32 bytes") }
            self.name = name
            self.seed = seed
            publicKey = Ed25519.publicKey(seed: seed)
            keyHash = SignedNote.keyHash(name: name, publicKey: publicKey)
        }

        static func isValidName(_ s: String) -> Bool { SignedNote.validName(s) }

        /// The private key text (keep it secret).
        public var privateKey: String {
            "PRIVATE+KEY+\(name)+\(String(format: "%08x", keyHash))+\(Data([1] + seed).base64EncodedString())"
        }

        /// The verifier key text `name+hash+base64(0x01 ‖ publicKey)`: give it to verifiers.
        public var verifierKey: String {
            "\(name)+\(String(format: "%08x", keyHash))+\(Data([1] + publicKey).base64EncodedString())"
        }

        /// The signature line for `text` (which ends in a newline).
        public func signatureLine(_ text: String) -> String {
            var hash: [UInt8] = [UInt8(keyHash >> 24), UInt8(keyHash >> 16 & 0xFF), UInt8(keyHash >> 8 & 0xFF), UInt8(keyHash & 0xFF)]
            hash += Ed25519.sign(Array(text.utf8), seed: seed)
            return "— \(name) \(Data(hash).base64EncodedString())\n"
        }

        /// The signed note: text, a blank line, the signature line.
        public func sign(_ text: String) -> String {
            text + "\n" + signatureLine(text)
        }

        /// A new key from the system's random number generator.
        public static func generate(name: String) throws -> Signer {
            var rng = SystemRandomNumberGenerator()
            return try Signer(name: name, seed: (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) })
        }
    }

    /// A verifier: a key name, its hash and an Ed25519 public key.
    public struct Verifier: Sendable, Equatable {
        public let name: String
        public let keyHash: UInt32
        public let publicKey: [UInt8]

        /// From a verifier key `name+hash+base64(0x01 ‖ publicKey)`.
        public init(verifierKey text: String) throws {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            let parts = trimmed.split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, validName(parts[0]) else { throw Failure.malformedKey("not name+hash+key") }
            guard let data = Data(base64Encoded: parts[2]), data.count == 33, data.first == 1 else {
                throw Failure.malformedKey("not an Ed25519 public key")
            }
            name = parts[0]
            publicKey = Array(data.dropFirst())
            keyHash = SignedNote.keyHash(name: name, publicKey: publicKey)
            guard parts[1] == String(format: "%08x", keyHash) else { throw Failure.malformedKey("key hash \(parts[1]) does not match the key") }
        }
    }

    /// One signature line of a note.
    public struct Signature: Sendable, Equatable {
        public let name: String
        public let keyHash: UInt32
        public let signature: [UInt8]
    }

    /// Splits a signed note into its text (ending in a newline) and signatures. A note
    /// with no blank line is text alone (an unsigned checkpoint).
    public static func parse(_ message: String) throws -> (text: String, signatures: [Signature]) {
        guard message.hasSuffix("\n") else { throw Failure.malformedNote("does not end in a newline") }
        guard let split = message.range(of: "\n\n", options: .backwards) else { return (message, []) }
        let text = String(message[..<split.lowerBound]) + "\n"
        var signatures: [Signature] = []
        for line in message[split.upperBound...].split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            guard line.hasPrefix("— ") else { throw Failure.malformedNote("a signature line must start with '— '") }
            let fields = line.dropFirst(2).split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 2, validName(String(fields[0])),
                  let data = Data(base64Encoded: String(fields[1])), data.count >= 5 else {
                throw Failure.malformedNote("bad signature line")
            }
            let b = Array(data)
            signatures.append(Signature(name: String(fields[0]),
                                        keyHash: UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3]),
                                        signature: Array(b[4...])))
        }
        guard !signatures.isEmpty else { throw Failure.malformedNote("a blank line with no signature after it") }
        return (text, signatures)
    }

    /// Checks the signature of `verifier` on `message`: nil when the note has none by that
    /// key; throws when it has one that does not verify; true when one verifies.
    public static func verify(_ message: String, by verifier: Verifier) throws -> Bool? {
        let (text, signatures) = try parse(message)
        let mine = signatures.filter { $0.name == verifier.name && $0.keyHash == verifier.keyHash }
        guard !mine.isEmpty else { return nil }
        for s in mine where !Ed25519.verify(s.signature, message: Array(text.utf8), publicKey: verifier.publicKey) {
            throw Failure.badSignature(name: verifier.name)
        }
        return true
    }
}
