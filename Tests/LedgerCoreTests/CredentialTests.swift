import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerLog
import TestSupport

/// Bearer credentials: the token format, the events' rules (E15), authentication,
/// and the projection through replay and snapshots.
struct CredentialTests {
    // RFC 4648 §10's vectors, in the base64url alphabet without padding.
    @Test(arguments: [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
                      ("foobar", "Zm9vYmFy")])
    func base64URLMatchesRFC4648(_ plain: String, _ encoded: String) {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(Base64URL.decode(Array(encoded.utf8)) == Array(plain.utf8))
    }

    @Test func base64URLUsesItsOwnAlphabetAndRefusesEverythingElse() {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.decode(Array("-_-_".utf8)) == [0xFB, 0xFF, 0xBF])
        for bad in ["+/+/", "Zg==", "Z", "Zh", "Zm9=", "Zm 9"] {  // "Zh": nonzero leftover bits
            #expect(Base64URL.decode(Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    @Test func aTokenPrintsAndParsesBackAndItsSecretIsNeverInTheIssue() {
        let token = BearerToken.generate()
        #expect(token.secret.count == 32)
        #expect(token.text.count == 63)
        #expect(token.text.hasPrefix("hl_\(token.id)_"))
        #expect(BearerToken(token.text) == token)
        #expect(token.secretSHA256.count == 32)
        #expect(token.secretSHA256 != token.secret)
        // Another token differs in id and secret (256 random bits).
        let other = BearerToken.generate()
        #expect(other.id != token.id && other.secret != token.secret)
    }

    @Test(arguments: ["", "hl_", "hl_0123456789abcdef_", "HL_0123456789abcdef_" + String(repeating: "A", count: 43),
                      "hl_0123456789abcdeg_" + String(repeating: "A", count: 43), "hl_0123456789abcdef-" + String(repeating: "A", count: 43),
                      "hl_0123456789abcdef_" + String(repeating: "A", count: 42), "hl_0123456789abcdef_" + String(repeating: "A", count: 44),
                      "hl_0123456789abcdef_" + String(repeating: "A", count: 42) + "B",  // leftover bits
                      "hl_0123456789abcdef_" + String(repeating: "A", count: 42) + "="])
    func malformedTokensAreRefused(_ text: String) {
        #expect(BearerToken(text) == nil)
        #expect(CredentialRegistry().authenticate(text, now: 0) == .malformed)
    }

    static func issue(_ token: BearerToken, to subject: ActorID, expiresAt: Int64? = nil, name: String? = nil) -> LedgerCommand {
        .issueCredential(CredentialIssue(id: token.id, subject: subject, secretSHA256: token.secretSHA256, expiresAt: expiresAt, name: name))
    }

    // E15: issued once, to the owner or a registered app that is not imported; revoked once.
    @Test func credentialsFollowRuleE15() async throws {
        let ledger = try makeLedger()
        let token = BearerToken.generate()
        await #expect(throws: RuleViolation.invalidCredential("app #1 is not registered")) {
            try await ledger.append(Self.issue(token, to: .app(1)))
        }
        try await ledger.append(.registerApp(appA))
        let imported = AppRegistration(bundleIdentifier: "export:Watch", name: "Watch", readPurpose: nil, sharePurpose: nil, imported: true)
        try await ledger.importing([.registerApp(imported)])  // only an import registers one (E13)
        await #expect(throws: RuleViolation.invalidCredential("export:Watch is an imported source: it acts only through imports")) {
            try await ledger.append(Self.issue(token, to: .app(2)))
        }
        await #expect(throws: RuleViolation.invalidCredential("a credential's name has at most 255 bytes")) {
            try await ledger.append(Self.issue(token, to: .app(1), name: String(repeating: "n", count: 256)))
        }
        try await ledger.append(Self.issue(token, to: .app(1), name: String(repeating: "n", count: 255)))
        await #expect(throws: RuleViolation.invalidCredential("credential \(token.id) was already issued")) {
            try await ledger.append(Self.issue(token, to: .owner))
        }
        let unknown = CredentialID(token.id.value &+ 1)
        await #expect(throws: RuleViolation.invalidCredential("no credential \(unknown) was issued")) {
            try await ledger.append(.revokeCredential(unknown, reason: nil))
        }
        let before = await ledger.state.lastSequence
        try await ledger.append(.revokeCredential(token.id, reason: "lost"))
        await #expect(throws: RuleViolation.invalidCredential("credential \(token.id) was already revoked at event #\(before + 1)")) {
            try await ledger.append(.revokeCredential(token.id, reason: nil))
        }
        #expect(RuleViolation.invalidCredential("x").description == "invalidCredential: x [E15]")
    }

    @Test func aTokenIsValidUntilRevokedOrExpiredAndAWrongSecretIsUnknown() async throws {
        let ledger = try makeLedger()
        try await ledger.append(.registerApp(appA))
        let app = BearerToken.generate(), owner = BearerToken.generate(), expiring = BearerToken.generate()
        try await ledger.append(Self.issue(app, to: .app(1), name: "phone"))
        try await ledger.append(Self.issue(owner, to: .owner))
        try await ledger.append(Self.issue(expiring, to: .app(1), expiresAt: 2_000))
        let credentials = await ledger.state.credentials
        #expect(credentials.authenticate(app.text, now: 0) == .valid(subject: .app(1), id: app.id))
        #expect(credentials.authenticate(owner.text, now: .max) == .valid(subject: .owner, id: owner.id))
        #expect(credentials.authenticate(expiring.text, now: 1_999) == .valid(subject: .app(1), id: expiring.id))
        #expect(credentials.authenticate(expiring.text, now: 2_000) == .expired(expiring.id))
        // The right id with another secret, and a secret under an id never issued: the same answer.
        var wrong = app.secret
        wrong[31] ^= 1
        #expect(credentials.authenticate(BearerToken(id: app.id, secret: wrong).text, now: 0) == .unknown)
        #expect(credentials.authenticate(BearerToken(id: CredentialID(app.id.value &+ 1), secret: app.secret).text, now: 0) == .unknown)
        try await ledger.append(.revokeCredential(app.id, reason: nil))
        #expect(await ledger.state.credentials.authenticate(app.text, now: 0) == .revoked(app.id))
        #expect(await ledger.state.credentials.authenticate(owner.text, now: 0) == .valid(subject: .owner, id: owner.id))
    }

    @Test func credentialsSurviveReplayAndASnapshotWithTheSameDigest() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        try await ledger.append(.registerApp(appA))
        let a = BearerToken.generate(), b = BearerToken.generate()
        try await ledger.append(Self.issue(a, to: .app(1), expiresAt: 1_900_000_000_000_000_000, name: "Health Auto Export"))
        try await ledger.append(Self.issue(b, to: .owner))
        try await ledger.append(.revokeCredential(b.id, reason: "rotated"))
        let live = await ledger.state
        try await ledger.snapshot()
        try await ledger.close()
        let reader = try LogReader(fs)
        let replayed = try StateLoader.load(fs, reader: reader, useSnapshots: false)
        let loaded = try StateLoader.load(fs, reader: reader)
        #expect(loaded.snapshot != nil)
        #expect(replayed.state.credentials == live.credentials)
        #expect(loaded.state.credentials == live.credentials)
        #expect(replayed.state.digest() == live.digest())
        #expect(loaded.state.digest() == live.digest())
        let entry = try #require(loaded.state.credentials[b.id])
        #expect(entry.revocationReason == "rotated")
        #expect(entry.revokedAt == 4)
        #expect(loaded.state.credentials[a.id]?.issue.name == "Health Auto Export")
    }
}
