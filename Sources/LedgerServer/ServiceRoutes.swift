import LedgerHTTP

/// Every route of the service, in one table: the router matches requests against it
/// and `openapi.json` is checked against it (a route is served exactly when it is
/// described).
struct RouteSpec: Sendable {
    /// Who may call it.
    enum Access: Sendable { case anyone, app, owner, appOrOwner }

    let method: String
    /// `/v1/samples/{type}`: segments in braces are parameters.
    let template: String
    let operationId: String
    let access: Access
    /// Reads health data (samples, characteristics, statistics, changes, the report):
    /// each such request is written to the access log before it is answered.
    let reads: Bool

    var segments: [Substring] { template.split(separator: "/") }
}

enum ServiceRoutes {
    static let all: [RouteSpec] = [
        RouteSpec(method: "GET", template: "/openapi.json", operationId: "openapi", access: .anyone, reads: false),
        RouteSpec(method: "POST", template: "/v1/samples", operationId: "saveSamples", access: .app, reads: false),
        RouteSpec(method: "GET", template: "/v1/samples/{type}", operationId: "querySamples", access: .appOrOwner, reads: true),
        RouteSpec(method: "DELETE", template: "/v1/samples/{uuid}", operationId: "deleteSample", access: .appOrOwner, reads: false),
        RouteSpec(method: "GET", template: "/v1/latest/{type}", operationId: "latestSample", access: .appOrOwner, reads: true),
        RouteSpec(method: "GET", template: "/v1/statistics/{type}", operationId: "statistics", access: .appOrOwner, reads: true),
        RouteSpec(method: "GET", template: "/v1/changes/{type}", operationId: "changes", access: .appOrOwner, reads: true),
        RouteSpec(method: "POST", template: "/v1/authorization/request", operationId: "requestAuthorization", access: .app, reads: false),
        RouteSpec(method: "GET", template: "/v1/authorization/status", operationId: "authorizationStatus", access: .app, reads: false),
        RouteSpec(method: "GET", template: "/v1/characteristics", operationId: "characteristics", access: .appOrOwner, reads: true),
        RouteSpec(method: "POST", template: "/v1/health-auto-export", operationId: "healthAutoExport", access: .app, reads: false),
        RouteSpec(method: "GET", template: "/v1/report", operationId: "report", access: .owner, reads: true),
        RouteSpec(method: "GET", template: "/v1/tokens", operationId: "listTokens", access: .owner, reads: false),
        RouteSpec(method: "POST", template: "/v1/tokens", operationId: "createToken", access: .owner, reads: false),
        RouteSpec(method: "DELETE", template: "/v1/tokens/{id}", operationId: "revokeToken", access: .owner, reads: false),
    ]

    /// The route a request names and its path parameters; a path no route has is 404,
    /// a known path with another method 405 (with `Allow`).
    static func match(_ method: String, _ path: String) throws(Problem) -> (RouteSpec, [String: String]) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard !parts.contains(where: \.isEmpty) || parts.count == 1 else { throw Problem(404, "notFound", "no route \(path)") }
        var allowed: [String] = []
        for route in all {
            let segments = route.segments
            guard segments.count == parts.count else { continue }
            var params: [String: String] = [:]
            var fits = true
            for (s, p) in zip(segments, parts) {
                if s.hasPrefix("{") { params[String(s.dropFirst().dropLast())] = String(p) } else if s != p { fits = false; break }
            }
            guard fits else { continue }
            // `/v1/samples/{uuid}` and `/v1/samples/{type}` share a shape: the method decides.
            if route.method == method { return (route, params) }
            allowed.append(route.method)
        }
        guard allowed.isEmpty else {
            throw Problem(405, "methodNotAllowed", "\(method) is not allowed on \(path)", headers: [("Allow", allowed.joined(separator: ", "))])
        }
        throw Problem(404, "notFound", "no route \(path)")
    }
}
