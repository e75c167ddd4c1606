import Foundation
import HealthLedger
import LedgerHTTP
@testable import LedgerServer
import Testing
import TestSupport

/// A request's identity is its token alone: none, a malformed one, an
/// unknown one, a revoked one (even on a kept-alive connection), an expired one,
/// another app's — each refused or confined as the library's rules say.
@Suite struct ServiceAuthTests {
    @Test func withoutAValidTokenNothingIsAnsweredButTheDocument() async throws {
        let f = try await ServiceFixture()
        let cases: [(String?, String)] = [
            (nil, "this route needs Authorization: Bearer TOKEN"),
            ("hl_nonsense", "not a bearer token of this ledger (hl_…)"),
            (BearerToken.generate().text, "unknown token"),
        ]
        for (token, detail) in cases {
            let r = try await f.request("GET", "/v1/latest/bodyMass", token: token)
            #expect(r.status == 401)
            #expect(r.header("www-authenticate") == "Bearer realm=\"healthledger\"")
            #expect(r.header("content-type") == "application/problem+json")
            let p = try ServiceFixture.object(r)
            #expect(p["detail"] as? String == detail)
            #expect(p["code"] as? String == "unauthenticated")
            #expect(p["status"] as? Int == 401)
        }
        // A wrong secret under a real id answers exactly as an unknown token.
        var chars = Array(f.appToken)
        chars[30] = chars[30] == "A" ? "B" : "A"  // inside the secret (which starts at 20)
        let forged = try await f.request("GET", "/v1/latest/bodyMass", token: String(chars))
        #expect(forged.status == 401)
        #expect(try ServiceFixture.object(forged)["detail"] as? String == "unknown token")
        let doc = try await f.request("GET", "/openapi.json", token: nil)
        #expect(doc.status == 200)
        try await f.stop()
    }

    @Test func aRevokedTokenIsRefusedAtOnceEvenOnAKeptAliveConnection() async throws {
        let f = try await ServiceFixture()
        let kept = try RawClient(f.server.address)
        #expect(try await f.request("POST", "/v1/samples", token: f.appToken,
                                    body: ServiceFixture.weight(70, at: "2026-03-01T08:00:00Z"), on: kept).status == 201)
        #expect(try await f.request("GET", "/v1/latest/bodyMass", token: f.appToken, on: kept).status == 200)
        let revoke = try await f.request("DELETE", "/v1/tokens/\(f.appTokenID)?reason=lost", token: f.ownerToken)
        #expect(revoke.status == 204)
        let after = try await f.request("GET", "/v1/latest/bodyMass", token: f.appToken, on: kept)
        #expect(after.status == 401)
        #expect(try ServiceFixture.object(after)["detail"] as? String == "credential \(f.appTokenID) was revoked")
        // Revoking twice is a conflict with the ledger's history (E15).
        let again = try await f.request("DELETE", "/v1/tokens/\(f.appTokenID)", token: f.ownerToken)
        #expect(again.status == 409)
        #expect(try ServiceFixture.object(again)["rule"] as? String == "E15")
        try await f.stop()
    }

    @Test func anExpiredTokenIsRefused() async throws {
        let f = try await ServiceFixture()
        // (Valid until the instant it expires: CredentialTests, to the nanosecond.)
        let (info, token) = try await f.owner.issueCredential(for: .app(ServiceFixture.app.bundleIdentifier),
                                                              expiresAt: Date().addingTimeInterval(0.3))
        try await Task.sleep(for: .milliseconds(400))
        let r = try await f.request("GET", "/v1/characteristics", token: token)
        #expect(r.status == 401)
        #expect(try ServiceFixture.object(r)["detail"] as? String == "credential \(info.id) has expired")
        try await f.stop()
    }

    @Test func routesAreForAppsOrTheOwnerAsTheyAreMeant() async throws {
        let f = try await ServiceFixture()
        let ownerSave = try await f.request("POST", "/v1/samples", token: f.ownerToken, body: ServiceFixture.weight(70, at: "2026-03-01T08:00:00Z"))
        #expect(ownerSave.status == 403)
        #expect(try ServiceFixture.object(ownerSave)["code"] as? String == "appOnly")
        for (method, path) in [("GET", "/v1/report"), ("GET", "/v1/tokens"), ("POST", "/v1/tokens"), ("DELETE", "/v1/tokens/0000000000000001")] {
            let r = try await f.request(method, path, token: f.appToken, body: method == "POST" ? "{\"owner\":true}" : nil)
            #expect(r.status == 403, "\(method) \(path)")
            #expect(try ServiceFixture.object(r)["code"] as? String == "ownerOnly")
        }
        try await f.stop()
    }

    @Test func anAppSeesOnlyWhatItMayReadAndDeletesOnlyItsOwn() async throws {
        let f = try await ServiceFixture()
        let saved = try await f.request("POST", "/v1/samples", token: f.otherToken, body: ServiceFixture.weight(80, at: "2026-03-01T08:00:00Z"))
        #expect(saved.status == 201)
        let uuid = try #require((try ServiceFixture.object(saved)["uuids"] as? [String])?.first)
        // `other` has no read permission: it sees its own; the scale app may read bodyMass.
        let scale = try await f.request("GET", "/v1/samples/bodyMass", token: f.appToken)
        #expect(try ServiceFixture.lines(scale).count == 1)
        let delete = try await f.request("DELETE", "/v1/samples/\(uuid)", token: f.appToken)
        #expect(delete.status == 403)
        #expect(try ServiceFixture.object(delete)["code"] as? String == "authorizationDenied")
        // The owner may delete anything; then nobody sees it.
        #expect(try await f.request("DELETE", "/v1/samples/\(uuid)", token: f.ownerToken).status == 204)
        #expect(try await f.request("GET", "/v1/samples/bodyMass", token: f.otherToken).text == "")
        #expect(try await f.request("DELETE", "/v1/samples/\(uuid)", token: f.ownerToken).status == 404)
        try await f.stop()
    }
}
