import Foundation
import HealthLedger
import LedgerHTTP
@testable import LedgerServer
import Testing
import TestSupport

/// `openapi.json` describes exactly the routes the service serves, and every route
/// answers only with statuses it documents (a tour of each, valid and refused).
@Suite struct OpenAPIDocumentTests {
    @Test func theDocumentListsEveryRouteAndNothingElse() async throws {
        let f = try await ServiceFixture()
        let doc = try ServiceFixture.object(try await f.request("GET", "/openapi.json", token: nil))
        #expect(doc["openapi"] as? String == "3.1.0")
        let paths = try #require(doc["paths"] as? [String: [String: Any]])
        var described = Set<String>()
        for (path, item) in paths { for method in item.keys { described.insert("\(method.uppercased()) \(path)") } }
        #expect(described == Set(ServiceRoutes.all.map { "\($0.method) \($0.template)" }))
        for route in ServiceRoutes.all {
            let op = try #require(paths[route.template]?[route.method.lowercased()] as? [String: Any])
            #expect(op["operationId"] as? String == route.operationId)
            let responses = try #require(op["responses"] as? [String: Any])
            #expect(Set(responses.keys.compactMap(Int.init)) == OpenAPIDocument.statuses(route), "\(route.operationId)")
        }
        try await f.stop()
    }

    /// Calls every route (as the one allowed and as one not), with good and bad input,
    /// and checks each status is one the document lists for that route.
    @Test func everyRouteAnswersOnlyWithStatusesItDocuments() async throws {
        let f = try await ServiceFixture()
        let uuid = "00000000-0000-4000-8000-0000000000B1"
        let calls: [(String, String, String?, String?)] = [
            ("GET", "/openapi.json", nil, nil),
            ("POST", "/v1/samples", f.appToken, ServiceFixture.weight(70, at: "2026-03-01T08:00:00Z", uuid: uuid)),
            ("POST", "/v1/samples", f.appToken, ServiceFixture.weight(70, at: "2026-03-01T08:00:00Z", uuid: uuid)),
            ("POST", "/v1/samples", f.ownerToken, "{}"),
            ("POST", "/v1/samples", nil, "{}"),
            ("GET", "/v1/samples/bodyMass?limit=1", f.appToken, nil),
            ("GET", "/v1/samples/bodyMass?where=bad", f.appToken, nil),
            ("GET", "/v1/latest/bodyMass", f.otherToken, nil),
            ("GET", "/v1/latest/height", f.appToken, nil),
            ("GET", "/v1/statistics/bodyMass?by=day", f.appToken, nil),
            ("GET", "/v1/statistics/stepCount?options=average", f.appToken, nil),
            ("GET", "/v1/changes/bodyMass?limit=1", f.appToken, nil),
            ("GET", "/v1/changes/bodyMass?anchor=x", f.appToken, nil),
            ("POST", "/v1/authorization/request", f.appToken, #"{"read":["height"]}"#),
            ("POST", "/v1/authorization/request", f.appToken, #"{"share":["bloodPressure"]}"#),
            ("GET", "/v1/authorization/status?share=bodyMass", f.appToken, nil),
            ("GET", "/v1/authorization/status", f.ownerToken, nil),
            ("GET", "/v1/characteristics", f.appToken, nil),
            ("POST", "/v1/health-auto-export", f.appToken, #"{"data":{"metrics":[]}}"#),
            ("POST", "/v1/health-auto-export", f.appToken, "[]"),
            ("GET", "/v1/report", f.ownerToken, nil),
            ("GET", "/v1/report", f.appToken, nil),
            ("GET", "/v1/tokens", f.ownerToken, nil),
            ("POST", "/v1/tokens", f.ownerToken, #"{"app":"com.example.other"}"#),
            ("POST", "/v1/tokens", f.ownerToken, #"{"nobody":1}"#),
            ("DELETE", "/v1/samples/\(uuid)", f.otherToken, nil),
            ("DELETE", "/v1/samples/\(uuid)", f.appToken, nil),
            ("DELETE", "/v1/samples/not-a-uuid", f.appToken, nil),
            ("DELETE", "/v1/tokens/0123456789abcdef", f.ownerToken, nil),
            ("DELETE", "/v1/tokens/\(f.appTokenID)", f.ownerToken, nil),
        ]
        var seen = Set<String>()
        for (method, target, token, body) in calls {
            let r = try await f.request(method, target, token: token, body: body)
            let path = String(target.prefix { $0 != "?" })
            let (route, _) = try ServiceRoutes.match(method, path)
            seen.insert(route.operationId)
            #expect(OpenAPIDocument.statuses(route).contains(r.status), "\(method) \(target) answered \(r.status): \(r.text.prefix(200))")
            if r.status >= 400 { #expect(r.header("content-type") == "application/problem+json", "\(method) \(target)") }
        }
        #expect(seen == Set(ServiceRoutes.all.map(\.operationId)))
        try await f.stop()
    }
}
