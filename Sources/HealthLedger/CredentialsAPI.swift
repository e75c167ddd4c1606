import Foundation
import HealthModel
import LedgerCore

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
            guard let ordinal = await ledger.read({ $0.registry.ordinal(of: bundle) }) else {
                throw HealthStoreError.invalidArgument("\(bundle) is not registered")
            }
            subject = .app(ordinal)
        }
        let token = BearerToken.generate()
        let issue = CredentialIssue(id: token.id, subject: subject, secretSHA256: token.secretSHA256,
                                    expiresAt: expiresAt.map { Int64(($0.timeIntervalSince1970 * 1e9).rounded()) }, name: name)
        try await mappingRules { try await ledger.execute(.issueCredential(issue)) }
        guard let info = await credentials().first(where: { $0.id == token.id }) else {
            preconditionFailure("a credential just issued is in the projection")
        }
        return (info, token.text)
    }

    /// Revokes a credential: from this event on it is refused, on every connection.
    public func revokeCredential(_ id: CredentialID, reason: String? = nil) async throws {
        try await mappingRules { try await ledger.execute(.revokeCredential(id, reason: reason)) }
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
