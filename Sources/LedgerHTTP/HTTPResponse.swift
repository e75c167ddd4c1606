/// A response: a status, header fields, and a body that is either whole or written
/// piece by piece (sent with chunked transfer coding, so memory stays one piece).
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: Body
    /// Close the connection after this response (whatever the request asked).
    public var closeAfter: Bool

    /// The body of a response.
    public enum Body: Sendable {
        case bytes([UInt8])
        /// Written by `produce` through the writer it is given; each write waits while
        /// the client is behind (backpressure). A throw ends the response early: the
        /// connection is closed without the last chunk, so the client sees it cut.
        case stream(@Sendable (HTTPBodyWriter) async throws -> Void)
    }

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: Body = .bytes([]), closeAfter: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        self.closeAfter = closeAfter
    }

    /// A whole body with its content type.
    public init(status: Int, contentType: String, body: [UInt8], headers extra: [(String, String)] = []) {
        var h = HTTPHeaders([("Content-Type", contentType)])
        for (n, v) in extra { h.append(n, v) }
        self.init(status: status, headers: h, body: .bytes(body))
    }

    /// The reason phrase for a status this server sends.
    public static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }

    /// The status line and header fields, with the framing header this server owns
    /// (`Content-Length` for a whole body, `Transfer-Encoding: chunked` for a stream)
    /// and `Connection: close` when the connection ends after it.
    func head(keepAlive: Bool, bodyLength: Int?) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for (name, value) in headers {
            let lower = name.lowercased()
            if lower == "content-length" || lower == "transfer-encoding" || lower == "connection" { continue }
            text += "\(name): \(value)\r\n"
        }
        if let bodyLength { text += "Content-Length: \(bodyLength)\r\n" } else { text += "Transfer-Encoding: chunked\r\n" }
        if !keepAlive { text += "Connection: close\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }
}

/// Where a streamed body's pieces go. `write` returns once the piece is queued for
/// the client and the queue is short enough; it throws `HTTPBodyWriter.Closed`
/// when the client has gone.
public protocol HTTPBodyWriter: Sendable {
    func write(_ bytes: [UInt8]) async throws
}

/// The client went away while a body was being written.
public struct HTTPClientGone: Error, Sendable {}
