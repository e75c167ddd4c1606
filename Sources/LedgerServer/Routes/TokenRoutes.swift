import Foundation
import HealthLedger
import HealthModel
import LedgerHTTP
import LedgerReporting

extension LedgerService {
    /// `GET /v1/tokens` (owner): every credential, JSON Lines.
    func listTokens(_ call: Call) async throws -> HTTPResponse {
        try call.only([])
        let lines = await owner.credentials().map { $0.json(now: Date()).string + "\n" }.joined()
        return Self.jsonLines(Array(lines.utf8))
    }

    /// `POST /v1/tokens` (owner) `{"app":ID}` or `{"owner":true}`, with `"expires"`
    /// (`30d`) and `"name"` → `201 {"id":…,"token":…}`: the token's only appearance.
    func createToken(_ call: Call) async throws -> HTTPResponse {
        try call.only([])
        let body = try call.jsonBody()
        guard case .object(let members) = body else { throw Problem.usage("the body is an object {\"app\":ID} or {\"owner\":true}") }
        for (name, _) in members where !["app", "owner", "expires", "name"].contains(name) {
            throw Problem.usage("unknownField: \"\(name.prefix(40))\" (fields: app, owner, expires, name)")
        }
        func string(_ name: String) throws -> String? {
            guard let v = body[name] else { return nil }
            guard case .string(let s) = v else { throw Problem.usage("\"\(name)\" is a string") }
            return s
        }
        let holder: CredentialHolder
        switch (try string("app"), body["owner"]) {
        case (let app?, nil): holder = .app(app)
        case (nil, .bool(true)?): holder = .owner
        default: throw Problem.usage("give \"app\": ID or \"owner\": true, one of them")
        }
        let now = Date()
        let expires = try string("expires").map { now.addingTimeInterval(try CredentialLifetime.seconds($0)) }
        let (info, token) = try await owner.issueCredential(for: holder, expiresAt: expires, name: try string("name"), now: now)
        var o = info.json(now: now)
        o.set("token", token)
        return Self.json(201, o.string)
    }

    /// `DELETE /v1/tokens/{id}` (owner): revokes it at once → 204.
    func revokeToken(_ call: Call) async throws -> HTTPResponse {
        try call.only(["reason"])
        guard let id = CredentialID(call.params["id"] ?? "") else { throw Problem.usage("a credential id is 16 hex digits") }
        try await owner.revokeCredential(id, reason: try call.query("reason"))
        return HTTPResponse(status: 204)
    }
}
