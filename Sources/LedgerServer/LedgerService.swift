import Foundation
import HealthLedger
import HealthModel
import LedgerHTTP
import LedgerReporting

/// How the service behaves beyond the HTTP limits.
public struct ServiceOptions: Sendable {
    /// Requests per second per credential (0: no limit); bursts up to twice that.
    public var requestsPerSecond: Double = 1000
    /// The longest long poll a client may ask for (`wait=`), in seconds.
    public var longPollMaxSeconds: Double = 300
    /// Samples per page of a streamed answer (each page is one access-log entry).
    public var pageSize: Int = 4096

    public init() {}
}

/// Who a request acts as: decided by its bearer token alone.
enum Principal: Sendable {
    case owner(CredentialID)
    case app(String, CredentialID)

    var credential: CredentialID {
        switch self {
        case .owner(let id), .app(_, let id): id
        }
    }

    /// `owner` or the bundle identifier, as the access log names it.
    var subject: String {
        switch self {
        case .owner: "owner"
        case .app(let bundle, _): bundle
        }
    }
}

/// One request on its way through the service.
struct Call: Sendable {
    let request: HTTPRequest
    let peer: HTTPPeer
    let route: RouteSpec
    let params: [String: String]
    let principal: Principal
}

/// The ledger as a service: the second front end beside the command line, over the
/// same store API (`OwnerStore`, `HealthStore`) and the same rules — no second policy.
///
/// Each request: route → bearer token (its credential, checked on every request, so a
/// revocation holds at once, even on a kept-alive connection) → who may call the
/// route → rate limit → the store call. A read of health data is written to the
/// access log, durably, before its answer is sent; a read that cannot be recorded is
/// answered 503 instead. Errors are RFC 9457 problem details whose status carries
/// the meaning of the command line's exit status (`FailureKind`).
public final class LedgerService: Sendable {
    let ledger: Ledger
    let owner: OwnerStore
    let accessLog: AccessLog
    let options: ServiceOptions
    let limiter: RateLimiter
    let apps: AppStores

    package init(ledger: Ledger, accessLog: AccessLog, options: ServiceOptions = ServiceOptions()) {
        self.ledger = ledger
        owner = OwnerStore(ledger: ledger)
        self.accessLog = accessLog
        self.options = options
        limiter = RateLimiter(rate: options.requestsPerSecond)
        apps = AppStores(owner: owner)
    }

    /// The HTTP server's handler.
    public func handle(_ request: HTTPRequest, _ peer: HTTPPeer) async -> HTTPResponse {
        do {
            let (route, params) = try ServiceRoutes.match(request.method, request.path)
            if route.access == .anyone { return OpenAPIDocument.response }
            let principal = try await authenticate(request)
            try Self.check(principal, may: route)
            if let wait = limiter.admit(principal.credential) {
                throw Problem(429, "tooManyRequests", "more than \(Int(limiter.rate)) requests a second with credential \(principal.credential)",
                              headers: [("Retry-After", String(wait))])
            }
            let call = Call(request: request, peer: peer, route: route, params: params, principal: principal)
            do {
                return try await dispatch(call)
            } catch {
                let problem = Problem(error)
                if route.reads { try? await record(call, returned: 0, status: problem.status, types: [], durable: false) }
                return problem.response
            }
        } catch {
            return Problem(error).response
        }
    }

    /// A refusal the HTTP server makes itself (framing, limits, timeouts), as problem
    /// details; the connection closes after it.
    public static let refusal: HTTPServer.RefusalResponder = { status, reason in
        var p = Problem(status, status == 408 ? "timeout" : status == 503 ? "unavailable" : "badRequest", reason)
        p.close = true
        return p.response
    }

    /// The credential behind `Authorization: Bearer …`, as the ledger holds it now.
    func authenticate(_ request: HTTPRequest) async throws -> Principal {
        let challenge = [("WWW-Authenticate", "Bearer realm=\"healthledger\"")]
        let fields = request.headers.values("authorization")
        guard fields.count == 1, let field = fields.first else {
            throw Problem(401, "unauthenticated", fields.isEmpty ? "this route needs Authorization: Bearer TOKEN"
                                                                  : "Authorization is given \(fields.count) times", headers: challenge)
        }
        let parts = field.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw Problem(401, "unauthenticated", "Authorization must be Bearer TOKEN", headers: challenge)
        }
        switch await owner.authenticate(String(parts[1])) {
        case .owner(let id): return .owner(id)
        case .app(let bundle, let id): return .app(bundle, id)
        case .refused(let reason): throw Problem(401, "unauthenticated", reason, headers: challenge)
        }
    }

    static func check(_ principal: Principal, may route: RouteSpec) throws(Problem) {
        switch (route.access, principal) {
        case (.anyone, _), (.appOrOwner, _), (.app, .app), (.owner, .owner): return
        case (.app, .owner):
            throw Problem(403, "appOnly", "\(route.method) \(route.template) acts as an app: use an app's token (the owner saves no samples)")
        case (.owner, .app):
            throw Problem(403, "ownerOnly", "only the ledger's owner may \(route.method) \(route.template)")
        }
    }

    func dispatch(_ call: Call) async throws -> HTTPResponse {
        switch call.route.operationId {
        case "saveSamples": try await saveSamples(call)
        case "querySamples": try await querySamples(call)
        case "deleteSample": try await deleteSample(call)
        case "latestSample": try await latestSample(call)
        case "statistics": try await statistics(call)
        case "changes": try await changes(call)
        case "requestAuthorization": try await requestAuthorization(call)
        case "authorizationStatus": try await authorizationStatus(call)
        case "characteristics": try await characteristics(call)
        case "healthAutoExport": try await healthAutoExport(call)
        case "report": try await report(call)
        case "listTokens": try await listTokens(call)
        case "createToken": try await createToken(call)
        case "revokeToken": try await revokeToken(call)
        default: throw Problem(404, "notFound", "no route \(call.request.path)")
        }
    }

    /// The store of the calling app.
    func appStore(_ call: Call) async throws -> HealthStore {
        guard case .app(let bundle, _) = call.principal else { throw Problem(403, "appOnly", "an app's token is needed") }
        return try await apps.store(bundle)
    }

    /// Writes a read to the access log; returns once it is durable. A failure here
    /// means the read is not answered (the caller throws 503).
    func record(_ call: Call, returned: Int, status: Int, types: [String], durable: Bool = true) async throws {
        let query = call.request.target.firstIndex(of: "?").map { String(call.request.target[call.request.target.index(after: $0)...]) }
        let entry = AccessEntry(credential: call.principal.credential, subject: call.principal.subject,
                                route: "\(call.route.method) \(call.route.template)", types: types, predicate: query,
                                returned: returned, status: status, ledgerSequence: await ledger.lastCommittedSequence,
                                peer: call.peer.address)
        do {
            try await accessLog.record(entry)
        } catch {
            throw Problem(503, "accessLogUnavailable", "the read could not be recorded in the access log, so it is not answered: \(error)")
        }
    }

    /// A whole JSON body.
    static func json(_ status: Int, _ text: String, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", body: Array((text + "\n").utf8), headers: headers)
    }

    /// JSON Lines, whole.
    static func jsonLines(_ bytes: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: "application/x-ndjson", body: bytes)
    }
}

/// One `HealthStore` per registered app, made on first use (appending nothing).
actor AppStores {
    let owner: OwnerStore
    private var stores: [String: HealthStore] = [:]

    init(owner: OwnerStore) { self.owner = owner }

    func store(_ bundle: String) async throws -> HealthStore {
        if let s = stores[bundle] { return s }
        let s = try await owner.store(forApp: bundle)
        stores[bundle] = s
        return s
    }
}
