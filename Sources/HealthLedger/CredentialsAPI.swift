import Foundation
import HealthModel
import LedgerCore
import LedgerReporting

/// Whom a credential acts for.
public enum CredentialHolder: Sendable, Hashable, CustomStringConvertible {
    case owner
    /// A registered app, by bundle identifier.
    case app(String)

    public var description: String {
        switch self {
        case .owner: "owner"
        case .app(let bundle): bundle
        }
    }
}

/// A credential as the owner sees it (`token list`): never its secret.
public struct CredentialInfo: Sendable, Equatable {
    public let id: CredentialID
    public let holder: CredentialHolder
    public let name: String?
    /// The event that issued it, and when.
    public let issuedAt: UInt64
    public let issuedDate: Date
    public let expiresAt: Date?
    /// The event that revoked it, when and why (nil while it stands).
    public let revokedAt: UInt64?
    public let revokedDate: Date?
    public let revocationReason: String?

    /// As JSON (`token list --json`, `GET /v1/tokens`): id, holder, name, status,
    /// issuedAt (and its event's sequence), expiresAt, revokedAt, revocationReason.
    package func json(now: Date) -> JSONObject {
        var o = JSONObject()
        o.set("id", id.description)
        o.set("holder", holder.description)
        o.set("name", name)
        o.set("status", status(at: now))
        o.set("issuedAt", ISO8601.string(issuedDate))
        o.set("issuedAtSequence", issuedAt)
        o.set("expiresAt", expiresAt.map { ISO8601.string($0) })
        o.set("revokedAt", revokedDate.map { ISO8601.string($0) })
        o.set("revocationReason", revocationReason)
        return o
    }

    /// `valid`, `revoked` or `expired`, at `now`.
    public func status(at now: Date) -> String {
        if revokedAt != nil { return "revoked" }
        if let expiresAt, now >= expiresAt { return "expired" }
        return "valid"
    }
}

/// Who a presented bearer token says the caller is, or why it is refused.
public enum Authentication: Sendable, Equatable {
    case owner(CredentialID)
    case app(bundleIdentifier: String, CredentialID)
    /// No such token (or not one of ours), revoked, or expired: the reason says which,
    /// without telling an unknown id from a wrong secret.
    case refused(reason: String)
}

extension OwnerStore {
    /// Issues a bearer credential for the owner or a registered app (not an imported
    /// source): a `credentialIssued` event holding the SHA-256 of its 256-bit secret.
    /// Returns the token's text, which exists nowhere else: show it once.
    public func issueCredential(for holder: CredentialHolder, expiresAt: Date? = nil, name: String? = nil,
                                now: Date = Date()) async throws -> (info: CredentialInfo, token: String) {
        if let expiresAt, expiresAt <= now {
            throw HealthStoreError.invalidArgument("a credential must expire after it is issued")
        }
        let subject: ActorID
        switch holder {
        case .owner: subject = .owner
        case .app(let bundle):
            guard let ordinal = await ledger.ordinal(ofApp: bundle) else {
                throw HealthStoreError.notRegistered(bundle)
            }
            subject = .app(ordinal)
        }
        let token = BearerToken.generate()
        let issue = CredentialIssue(id: token.id, subject: subject, secretSHA256: token.secretSHA256,
                                    expiresAt: expiresAt.map { Int64(($0.timeIntervalSince1970 * 1e9).rounded()) }, name: name)
        try await mappingRules { try await ledger.append(.issueCredential(issue)) }
        guard let info = await credentials().first(where: { $0.id == token.id }) else {
            preconditionFailure("a credential just issued is in the projection")
        }
        return (info, token.text)
    }

    /// Revokes a credential: from this event on it is refused, on every connection.
    public func revokeCredential(_ id: CredentialID, reason: String? = nil) async throws {
        try await mappingRules { try await ledger.append(.revokeCredential(id, reason: reason)) }
    }

    /// The store a registered app reaches the ledger through (its door: nothing of the
    /// ledger's write path or raw state). Appends nothing.
    public func store(forApp bundle: String) async throws -> HealthStore {
        guard let registration = await ledger.registration(ofApp: bundle) else { throw HealthStoreError.notRegistered(bundle) }
        return try await HealthStore(ledger: ledger, app: registration)
    }

    /// Every credential issued, by id.
    public func credentials() async -> [CredentialInfo] {
        await ledger.read { state in
            state.credentials.all.map { CredentialInfo($0, registry: state.registry) }
        }
    }

    /// Checks a presented token against the credentials as they stand now.
    public func authenticate(_ token: some StringProtocol & Sendable, at now: Date = Date()) async -> Authentication {
        let nanoseconds = Int64((now.timeIntervalSince1970 * 1e9).rounded())
        return await ledger.read { state in
            switch state.credentials.authenticate(token, now: nanoseconds) {
            case .valid(.owner, let id): return .owner(id)
            case .valid(.app(let ordinal), let id):
                guard let bundle = state.registry.registration(ordinal)?.bundleIdentifier else {
                    return .refused(reason: "the credential's app is not registered")
                }
                return .app(bundleIdentifier: bundle, id)
            case .malformed: return .refused(reason: "not a bearer token of this ledger (hl_…)")
            case .unknown: return .refused(reason: "unknown token")
            case .revoked(let id): return .refused(reason: "credential \(id) was revoked")
            case .expired(let id): return .refused(reason: "credential \(id) has expired")
            }
        }
    }
}

extension CredentialInfo {
    init(_ entry: CredentialRegistry.Entry, registry: AppRegistry) {
        func date(_ ns: Int64) -> Date { Date(timeIntervalSince1970: Double(ns) / 1e9) }
        id = entry.issue.id
        switch entry.issue.subject {
        case .owner: holder = .owner
        case .app(let ordinal): holder = .app(registry.label(ordinal))
        }
        name = entry.issue.name
        issuedAt = entry.issuedAt
        issuedDate = date(entry.issuedRecordedAt)
        expiresAt = entry.issue.expiresAt.map(date)
        revokedAt = entry.revokedAt
        revokedDate = entry.revokedRecordedAt.map(date)
        revocationReason = entry.revocationReason
    }
}

/// A credential's lifetime as people write it: a whole number and a unit — `90s`,
/// `30m`, `12h`, `30d`, `8w` — at most ten years.
public enum CredentialLifetime {
    public static let maxSeconds: Double = 10 * 366 * 86_400

    public static func seconds(_ text: String) throws -> Double {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        guard let last = text.last, let unit = units[last], text.count >= 2, text.count <= 12,
              text.dropLast().allSatisfy({ $0.isASCII && $0.isNumber }), let n = Double(text.dropLast()), n >= 1 else {
            throw HealthStoreError.invalidArgument("a lifetime is a whole number and s, m, h, d or w (30d, 12h), not '\(text.prefix(40))'")
        }
        guard n * unit <= maxSeconds else { throw HealthStoreError.invalidArgument("a lifetime is at most ten years, not \(text)") }
        return n * unit
    }
}
