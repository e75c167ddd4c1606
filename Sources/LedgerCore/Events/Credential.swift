import Foundation
import LedgerChecksums

/// A credential's number: 64 random bits, shown as 16 lowercase hex digits. It is
/// package (printed by `token list`, written in the access log); the secret is not.
public struct CredentialID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let value: UInt64

    public init(_ value: UInt64) { self.value = value }

    /// Parses 16 hex digits (either case).
    public init?(_ text: some StringProtocol) {
        guard text.utf8.count == 16, text.utf8.allSatisfy({ Self.hexDigit($0) != nil }), let v = UInt64(text, radix: 16) else { return nil }
        value = v
    }

    public var description: String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    public static func < (a: CredentialID, b: CredentialID) -> Bool { a.value < b.value }

    static func hexDigit(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - 48
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - 87
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - 55
        default: nil
        }
    }
}

/// A bearer credential as issued (event kind 25, `credentialIssued`): which
/// credential, whom it acts as, the SHA-256 of its secret (never the secret), when it
/// expires, and the owner's note. Actor: the owner.
package struct CredentialIssue: Hashable, Sendable {
    package let id: CredentialID
    /// The owner, or a registered app (never an imported source).
    package let subject: ActorID
    /// SHA-256 of the token's 32 secret bytes.
    package let secretSHA256: [UInt8]
    /// When it stops being accepted (ns since the epoch); nil: never.
    package let expiresAt: Int64?
    /// The owner's note ("Health Auto Export on my phone").
    package let name: String?

    package init(id: CredentialID, subject: ActorID, secretSHA256: [UInt8], expiresAt: Int64?, name: String?) {
        precondition(secretSHA256.count == 32, "a secret's SHA-256 is 32 bytes")
        self.id = id
        self.subject = subject
        self.secretSHA256 = secretSHA256
        self.expiresAt = expiresAt
        self.name = name
    }

    /// The longest note, in UTF-8 bytes.
    package static let nameBytesMax = 255
}

/// A bearer token: `hl_` · the credential's id (16 hex digits) · `_` · 32 random
/// bytes in unpadded base64url (43 characters). 256 bits of secret; the id lets the
/// server find the one credential to compare with, so the comparison is of one hash
/// against one hash, in constant time.
package struct BearerToken: Sendable, Equatable {
    package let id: CredentialID
    /// The 32 secret bytes.
    package let secret: [UInt8]

    /// A new token from the system's cryptographic random source (`getrandom`).
    package static func generate() -> BearerToken {
        var rng = SystemRandomNumberGenerator()
        var secret: [UInt8] = []
        secret.reserveCapacity(32)
        for _ in 0..<4 { withUnsafeBytes(of: rng.next() as UInt64) { secret.append(contentsOf: $0) } }
        return BearerToken(id: CredentialID(rng.next()), secret: secret)
    }

    init(id: CredentialID, secret: [UInt8]) {
        self.id = id
        self.secret = secret
    }

    /// Parses a token's text; nil for anything not exactly in the format.
    package init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count == 3 + 16 + 1 + 43, bytes.starts(with: Array("hl_".utf8)), bytes[19] == UInt8(ascii: "_"),
              let id = CredentialID(String(decoding: bytes[3..<19], as: UTF8.self)),
              let secret = Base64URL.decode(bytes[20...]), secret.count == 32 else { return nil }
        self.id = id
        self.secret = secret
    }

    /// The token as given to its holder (printed once, never stored).
    package var text: String { "hl_\(id)_" + Base64URL.encode(secret) }

    /// What the ledger stores.
    package var secretSHA256: [UInt8] { SHA256.hash(secret).array }
}

/// Unpadded base64url (RFC 4648 §5).
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int(n >> UInt32(shift) & 63)]) }
            i += 3
        }
        let rest = bytes.count - i
        if rest > 0 {
            let n = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            if rest == 2 { out.append(alphabet[Int(n >> 6 & 63)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// nil for a character outside the alphabet or a length no encoding has.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        var acc: UInt32 = 0, bits = 0
        for c in text {
            let v: UInt32
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - 65)
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - 97 + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - 48 + 52)
            case UInt8(ascii: "-"): v = 62
            case UInt8(ascii: "_"): v = 63
            default: return nil
            }
            acc = acc << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        // The bits left over must be zero (one encoding per byte string).
        guard acc & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }
}

/// The credentials projection: every credential issued, with its revocation.
package struct CredentialRegistry: Sendable, Equatable {
    /// A credential and what became of it.
    package struct Entry: Sendable, Equatable {
        package let issue: CredentialIssue
        /// The event that issued it, and when.
        package let issuedAt: UInt64
        package let issuedRecordedAt: Int64
        /// The event that revoked it, when, and why (nil while it stands).
        package var revokedAt: UInt64?
        package var revokedRecordedAt: Int64?
        package var revocationReason: String?

        /// Whether a request at `now` (ns since the epoch) is served under it.
        package func isValid(at now: Int64) -> Bool {
            revokedAt == nil && (issue.expiresAt.map { now < $0 } ?? true)
        }
    }

    private(set) var entries: [CredentialID: Entry] = [:]

    package init() {}

    /// Every credential, by id.
    package var all: [Entry] { entries.values.sorted { $0.issue.id < $1.issue.id } }

    package var isEmpty: Bool { entries.isEmpty }

    package subscript(id: CredentialID) -> Entry? { entries[id] }

    mutating func issue(_ issue: CredentialIssue, sequence: UInt64, recordedAt: Int64) {
        entries[issue.id] = Entry(issue: issue, issuedAt: sequence, issuedRecordedAt: recordedAt)
    }

    mutating func revoke(_ id: CredentialID, reason: String?, sequence: UInt64, recordedAt: Int64) {
        entries[id]?.revokedAt = sequence
        entries[id]?.revokedRecordedAt = recordedAt
        entries[id]?.revocationReason = reason
    }

    /// Restores an entry from a snapshot.
    mutating func restore(_ entry: Entry) { entries[entry.issue.id] = entry }

    /// What a presented token is.
    package enum Check: Sendable, Equatable {
        case valid(subject: ActorID, id: CredentialID)
        /// Not a token of this format.
        case malformed
        /// No credential has its id, or its secret is not that credential's.
        case unknown
        case revoked(CredentialID)
        case expired(CredentialID)
    }

    /// Checks a presented token at `now` (ns since the epoch). The secret's hash is
    /// compared with the one stored for the token's id in constant time; an unknown id
    /// and a wrong secret are told apart to no one (both `.unknown`).
    package func authenticate(_ text: some StringProtocol, now: Int64) -> Check {
        guard let token = BearerToken(text) else { return .malformed }
        let presented = token.secretSHA256
        guard let entry = entries[token.id] else {
            _ = Self.constantTimeEqual(presented, presented)  // the same work either way
            return .unknown
        }
        guard Self.constantTimeEqual(presented, entry.issue.secretSHA256) else { return .unknown }
        if entry.revokedAt != nil { return .revoked(token.id) }
        if let expiry = entry.issue.expiresAt, now >= expiry { return .expired(token.id) }
        return .valid(subject: entry.issue.subject, id: token.id)
    }

    /// Equal lengths and bytes, in time that depends on the length only.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<a.count { diff |= a[i] ^ b[i] }
        return diff == 0
    }
}
