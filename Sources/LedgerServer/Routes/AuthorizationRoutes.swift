import Foundation
import HealthLedger
import HealthModel
import LedgerHTTP
import LedgerReporting

extension LedgerService {
    /// `POST /v1/authorization/request` `{"share":[types],"read":[types]}`: the app asks
    /// (HealthKit's requestAuthorization) → `{"requested":true}`. As in HealthKit, this
    /// says the request was handled, not what the owner answered.
    func requestAuthorization(_ call: Call) async throws -> HTTPResponse {
        try call.only([])
        let store = try await appStore(call)
        let body = try call.jsonBody()
        guard case .object(let members) = body else { throw Problem.usage("the body is an object {\"share\":[…],\"read\":[…]}") }
        for (name, _) in members where name != "share" && name != "read" {
            throw Problem.usage("unknownField: \"\(name.prefix(40))\" (fields: share, read)")
        }
        func list(_ name: String) throws -> Set<ObjectType> {
            guard let value = body[name] else { return [] }
            guard case .array(let items) = value else { throw Problem.usage("\"\(name)\" is an array of type names") }
            var out = Set<ObjectType>()
            for item in items {
                guard case .string(let text) = item else { throw Problem.usage("\"\(name)\" is an array of type names") }
                do { out.insert(try ObjectType(identifier: text)) } catch { throw Problem(error) }
            }
            return out
        }
        try await store.requestAuthorization(toShare: try list("share"), read: try list("read"))
        return Self.json(200, "{\"requested\":true}")
    }

    /// `GET /v1/authorization/status?share=…&read=…`: whether asking would show the
    /// person anything (`shouldRequest` or `unnecessary`) and the sharing status of each
    /// share type. Read permission is never revealed, as in HealthKit.
    func authorizationStatus(_ call: Call) async throws -> HTTPResponse {
        try call.only(["share", "read"])
        let store = try await appStore(call)
        let share = try call.types("share"), read = try call.types("read")
        let status = try await store.requestStatus(toShare: Set(share), read: Set(read))
        var sharing = JSONObject()
        for type in share { sharing.set(type.identifier, try await store.authorizationStatus(for: type).name) }
        var o = JSONObject()
        o.set("requestStatus", status.name)
        o.set("sharing", sharing)
        return Self.json(200, o.string)
    }
}
