import HealthLedger
import LedgerHTTP
import LedgerReporting

/// An error answered as RFC 9457 problem details (`application/problem+json`):
/// `type` (a tag URI naming the problem), `title`, `status`, `detail`, and our
/// extensions `code` (the error's code, as the CLI prints it) and `rule` (the
/// events/FORMAT.md rule, e.g. `E3`, when one says why).
struct Problem: Error, Sendable {
    let status: Int
    let code: String
    let detail: String
    var rule: String?
    /// Extra header fields (`WWW-Authenticate`, `Retry-After`, `Allow`).
    var headers: [(String, String)] = []
    /// Close the connection after answering (a framing error leaves the stream unknown).
    var close = false

    init(_ status: Int, _ code: String, _ detail: String, rule: String? = nil, headers: [(String, String)] = []) {
        self.status = status
        self.code = code
        self.detail = detail
        self.rule = rule
        self.headers = headers
    }

    /// The problem for any error: the store's and the engine's by their `Failure`
    /// kind (the same table the command line's exit statuses come from).
    init(_ error: any Error) {
        if let p = error as? Problem {
            self = p
        } else if let f = Failure(error) {
            self.init(f.kind.httpStatus, f.code, f.message, rule: f.rule)
        } else {
            self.init(500, "failure", String(describing: error))
        }
    }

    static func usage(_ detail: String) -> Problem { Problem(400, "usage", detail) }
    static func invalid(_ detail: String) -> Problem { Problem(422, String(detail.prefix { $0 != ":" }), detail) }

    var response: HTTPResponse {
        var o = JSONObject()
        o.set("type", "tag:healthledger,2026:problem:\(code)")
        o.set("title", HTTPResponse.reason(status))
        o.set("status", status)
        o.set("detail", detail)
        o.set("code", code)
        o.set("rule", rule)
        var response = HTTPResponse(status: status, contentType: "application/problem+json", body: Array((o.string + "\n").utf8),
                                    headers: headers)
        response.closeAfter = close
        return response
    }
}
