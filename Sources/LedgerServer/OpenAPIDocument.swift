import LedgerHTTP
import LedgerReporting

/// `GET /openapi.json`: OpenAPI 3.1 for every route of `ServiceRoutes.all`, made from
/// that table and the descriptions below (a route without a description is a build
/// you cannot ship: `OpenAPIDocumentTests` checks both ways, and that every route
/// answers only with statuses it documents).
enum OpenAPIDocument {
    struct Parameter {
        let name: String
        let location: String  // path | query
        let schema: String    // JSON schema text
        let description: String
        var required: Bool { location == "path" }
    }

    struct Operation {
        let summary: String
        let parameters: [Parameter]
        /// A JSON schema text for `application/json` bodies.
        let body: String?
        /// Success status → (media type, description).
        let success: [(Int, String, String)]
        /// Refusals this route may answer (problem details), besides 401 and 429.
        let refusals: [Int]
    }

    static let string = ##"{"type":"string"}"##
    static let typeParam = Parameter(name: "type", location: "path", schema: string,
                                     description: "a type's identifier or short name (heartRate, HKQuantityTypeIdentifierStepCount)")
    static let date = ##"{"type":"string","description":"ISO 8601 date or date-time; a date alone is the start of that day in the owner's zone"}"##

    static let operations: [String: Operation] = [
        "openapi": Operation(summary: "This document", parameters: [], body: nil,
                             success: [(200, "application/json", "OpenAPI 3.1")], refusals: []),
        "saveSamples": Operation(
            summary: "Save one sample or an array of them (ingest's JSON form), all or nothing, as the calling app; 201 once durable",
            parameters: [], body: ##"{"oneOf":[{"$ref":"#/components/schemas/SampleInput"},{"type":"array","items":{"$ref":"#/components/schemas/SampleInput"}}]}"##,
            success: [(201, "application/json", "{\"uuids\":[…]}")], refusals: [400, 403, 404, 409, 413, 415, 422, 503]),
        "querySamples": Operation(
            summary: "HKSampleQuery as JSON Lines, streamed; a last line {\"next\":UUID} when limit cut the answer short",
            parameters: [typeParam,
                         Parameter(name: "from", location: "query", schema: date, description: "samples overlapping [from, to)"),
                         Parameter(name: "to", location: "query", schema: date, description: "see from"),
                         Parameter(name: "strictStart", location: "query", schema: ##"{"type":"boolean"}"##, description: "start inside"),
                         Parameter(name: "strictEnd", location: "query", schema: ##"{"type":"boolean"}"##, description: "end inside"),
                         Parameter(name: "limit", location: "query", schema: ##"{"type":"integer","minimum":0}"##, description: "0: all"),
                         Parameter(name: "after", location: "query", schema: ##"{"type":"string","format":"uuid"}"##, description: "the cursor a page's next line gave"),
                         Parameter(name: "sort", location: "query", schema: ##"{"enum":["start","end","duration","energy","distance"]}"##, description: "newest first unless ascending"),
                         Parameter(name: "ascending", location: "query", schema: ##"{"type":"boolean"}"##, description: "oldest first"),
                         Parameter(name: "source", location: "query", schema: string, description: "a bundle identifier (repeatable)"),
                         Parameter(name: "where", location: "query", schema: string, description: "the --where predicate language (healthledger query --help)")],
            body: nil, success: [(200, "application/x-ndjson", "one sample per line")], refusals: [400, 403, 404, 422, 503]),
        "deleteSample": Operation(
            summary: "Delete a sample: an app what it saved (while it may share the type), the owner anything",
            parameters: [Parameter(name: "uuid", location: "path", schema: ##"{"type":"string","format":"uuid"}"##, description: "the sample"),
                         Parameter(name: "reason", location: "query", schema: string, description: "kept in the tombstone's event")],
            body: nil, success: [(204, "", "deleted")], refusals: [400, 403, 404, 503]),
        "latestSample": Operation(
            summary: "The most recent sample the caller may see (not dated in the future)",
            parameters: [typeParam], body: nil, success: [(200, "application/json", "one sample")], refusals: [403, 404, 422, 503]),
        "statistics": Operation(
            summary: "HKStatisticsQuery, or with by an HKStatisticsCollectionQuery; JSON Lines, one per bucket, sources merged by priority",
            parameters: [typeParam,
                         Parameter(name: "options", location: "query", schema: string, description: "comma-separated: sum, average, min, max, mostRecent, duration"),
                         Parameter(name: "separateBySource", location: "query", schema: ##"{"type":"boolean"}"##, description: "each source's values too"),
                         Parameter(name: "by", location: "query", schema: ##"{"enum":["minute","hour","day","week","month","year"]}"##, description: "bucket unit"),
                         Parameter(name: "every", location: "query", schema: ##"{"type":"integer","minimum":1}"##, description: "units per bucket"),
                         Parameter(name: "anchor", location: "query", schema: date, description: "bucket anchor"),
                         Parameter(name: "from", location: "query", schema: date, description: "samples overlapping [from, to)"),
                         Parameter(name: "to", location: "query", schema: date, description: "see from"),
                         Parameter(name: "where", location: "query", schema: string, description: "the --where predicate language"),
                         Parameter(name: "unit", location: "query", schema: string, description: "values in this unit"),
                         Parameter(name: "tz", location: "query", schema: string, description: "the buckets' IANA zone (default: the owner's)")],
            body: nil, success: [(200, "application/x-ndjson", "one bucket per line")], refusals: [400, 403, 404, 422, 503]),
        "changes": Operation(
            summary: "The anchored change feed (HKAnchoredObjectQuery) as JSON Lines, the new anchor last; wait= makes it a long poll",
            parameters: [typeParam,
                         Parameter(name: "anchor", location: "query", schema: string, description: "the anchor a previous answer ended with"),
                         Parameter(name: "limit", location: "query", schema: ##"{"type":"integer","minimum":0}"##, description: "0: all"),
                         Parameter(name: "wait", location: "query", schema: ##"{"type":"number","minimum":0,"maximum":300}"##, description: "seconds to wait for a commit when nothing changed"),
                         Parameter(name: "where", location: "query", schema: string, description: "the --where predicate language")],
            body: nil, success: [(200, "application/x-ndjson", "changes, then {\"anchor\":…}")], refusals: [400, 403, 404, 409, 422, 503]),
        "requestAuthorization": Operation(
            summary: "The app asks to share and read types (HealthKit's requestAuthorization); says it was handled, not the answer",
            parameters: [], body: ##"{"type":"object","properties":{"share":{"type":"array","items":{"type":"string"}},"read":{"type":"array","items":{"type":"string"}}},"additionalProperties":false}"##,
            success: [(200, "application/json", "{\"requested\":true}")], refusals: [400, 403, 409, 415, 422, 503]),
        "authorizationStatus": Operation(
            summary: "Whether asking would show anything, and the sharing status of each share type (read permission is never revealed)",
            parameters: [Parameter(name: "share", location: "query", schema: string, description: "comma-separated types"),
                         Parameter(name: "read", location: "query", schema: string, description: "comma-separated types")],
            body: nil, success: [(200, "application/json", "{\"requestStatus\":…,\"sharing\":{…}}")], refusals: [400, 403, 422, 503]),
        "characteristics": Operation(
            summary: "The characteristics the caller may read, as one object",
            parameters: [], body: nil, success: [(200, "application/json", "{\"dateOfBirth\":…}")], refusals: [403, 503]),
        "healthAutoExport": Operation(
            summary: "A Health Auto Export push, as the app sends it; idempotent (the same points again are unchanged)",
            parameters: [], body: ##"{"type":"object","properties":{"data":{"type":"object","properties":{"metrics":{"type":"array"},"workouts":{"type":"array"}}}},"required":["data"]}"##,
            success: [(200, "application/json", "{\"new\":N,\"unchanged\":M,…}")], refusals: [400, 403, 409, 413, 415, 422, 503]),
        "report": Operation(
            summary: "The owner's HTML health and audit report",
            parameters: [Parameter(name: "from", location: "query", schema: date, description: "first day"),
                         Parameter(name: "to", location: "query", schema: date, description: "end"),
                         Parameter(name: "locale", location: "query", schema: string, description: "en_US, de_DE, …")],
            body: nil, success: [(200, "text/html", "the page")], refusals: [400, 403, 422, 503]),
        "listTokens": Operation(
            summary: "Every credential (never a secret)", parameters: [], body: nil,
            success: [(200, "application/x-ndjson", "one credential per line")], refusals: [403]),
        "createToken": Operation(
            summary: "Issue a credential for an app or the owner; the token appears in this answer only",
            parameters: [], body: ##"{"type":"object","properties":{"app":{"type":"string"},"owner":{"const":true},"expires":{"type":"string","description":"30d, 12h, …"},"name":{"type":"string"}},"additionalProperties":false}"##,
            success: [(201, "application/json", "{\"id\":…,\"token\":…}")], refusals: [400, 403, 404, 409, 415, 422, 503]),
        "revokeToken": Operation(
            summary: "Revoke a credential: refused from now on, on every connection",
            parameters: [Parameter(name: "id", location: "path", schema: ##"{"type":"string","pattern":"^[0-9a-f]{16}$"}"##, description: "the credential's id"),
                         Parameter(name: "reason", location: "query", schema: string, description: "kept in the revocation's event")],
            body: nil, success: [(204, "", "revoked")], refusals: [400, 403, 409, 503]),
    ]

    /// Every status a route may answer: its successes, its refusals, 401 and 429 for
    /// routes behind a token, and 400/405/408/413/414/431 the server itself may send.
    static func statuses(_ route: RouteSpec) -> Set<Int> {
        guard let op = operations[route.operationId] else { return [] }
        var out = Set(op.success.map(\.0)).union(op.refusals)
        if route.access != .anyone { out.formUnion([401, 429]) }
        out.formUnion([400, 408, 413, 414, 431, 500, 503])
        return out
    }

    static let text: String = {
        var paths: [String: [(String, String)]] = [:]
        var order: [String] = []
        for route in ServiceRoutes.all {
            guard let op = operations[route.operationId] else { preconditionFailure("route \(route.operationId) has no description") }
            var o = JSONObject()
            o.set("operationId", route.operationId)
            o.set("summary", op.summary)
            let access = switch route.access {
            case .anyone: "no token"
            case .app: "an app's token"
            case .owner: "the owner's token"
            case .appOrOwner: "an app's or the owner's token"
            }
            o.set("description", "\(op.summary). Needs \(access).\(route.reads ? " Recorded in the access log before it is answered." : "")")
            if route.access == .anyone { o.setRaw("security", "[]") }
            o.setRaw("parameters", JSONObject.array(op.parameters.map { p in
                var j = JSONObject()
                j.set("name", p.name)
                j.set("in", p.location)
                j.set("required", p.required)
                j.set("description", p.description)
                j.setRaw("schema", p.schema)
                return j.string
            }))
            if let body = op.body {
                o.setRaw("requestBody", ##"{"required":true,"content":{"application/json":{"schema":"## + body + "}}}")
            }
            var responses = JSONObject()
            for (status, media, description) in op.success {
                var r = JSONObject()
                r.set("description", description)
                if !media.isEmpty { r.setRaw("content", "{\(JSONObject.quote(media)):{}}") }
                responses.set(String(status), r)
            }
            for status in statuses(route).subtracting(op.success.map(\.0)).sorted() {
                responses.setRaw(String(status), ##"{"$ref":"#/components/responses/Problem"}"##)
            }
            o.set("responses", responses)
            if paths[route.template] == nil { order.append(route.template) }
            paths[route.template, default: []].append((route.method.lowercased(), o.string))
        }
        var p = JSONObject()
        for path in order {
            var item = JSONObject()
            for (method, op) in paths[path]! { item.setRaw(method, op) }
            p.set(path, item)
        }
        let sampleInput = ##"{"type":"object","required":["type","start"],"properties":{"type":{"type":"string"},"value":{"oneOf":[{"type":"number"},{"type":"string"}]},"unit":{"type":"string"},"start":{"type":"string"},"end":{"type":"string"},"uuid":{"type":"string","format":"uuid"},"metadata":{"type":"object"},"device":{"type":"object"}},"additionalProperties":false}"##
        let problem = ##"{"type":"object","properties":{"type":{"type":"string"},"title":{"type":"string"},"status":{"type":"integer"},"detail":{"type":"string"},"code":{"type":"string"},"rule":{"type":["string","null"]}}}"##
        return ##"{"openapi":"3.1.0","info":{"title":"HealthLedger","version":"1","description":"HealthKit's store on an append-only, tamper-evident ledger, over HTTP. A request's identity is its bearer token alone (healthledger token create). Errors are RFC 9457 problem details with the ledger's rule ID."},"##
            + ##""servers":[{"url":"http://127.0.0.1:8080"}],"security":[{"bearer":[]}],"paths":"## + p.string + ","
            + ##""components":{"securitySchemes":{"bearer":{"type":"http","scheme":"bearer"}},"schemas":{"SampleInput":"## + sampleInput
            + ##","Problem":"## + problem + ##"},"responses":{"Problem":{"description":"RFC 9457 problem details","content":{"application/problem+json":{"schema":{"$ref":"#/components/schemas/Problem"}}}}}}}"##
    }()

    static let response = HTTPResponse(status: 200, contentType: "application/json", body: Array((text + "\n").utf8))
}
