/// One HTTP/1.1 request as the parser delivers it: the head (method, target,
/// version, header fields) and the whole body, de-chunked.
///
/// Invariants (the parser establishes them; nothing else makes one):
/// - `method` is a token (RFC 9110 §5.6.2), `path` starts with `/` (origin-form) or is `*`;
/// - every header name is a token, every value is free of CR, LF and NUL;
/// - `body.count` is within the server's body limit.
public struct HTTPRequest: Sendable {
    /// The method, as sent (methods are case-sensitive: `get` is not `GET`).
    public let method: String
    /// The request target's path, percent-decoded, without the query (`/v1/samples/heartRate`).
    public let path: String
    /// The query's parameters, percent-decoded (`+` is a space), in order; a name may repeat.
    public let query: [(name: String, value: String)]
    /// The request target exactly as sent (for logs and errors).
    public let target: String
    /// 1.0 or 1.1 (the minor version).
    public let minorVersion: Int
    /// The header fields in the order sent.
    public let headers: HTTPHeaders
    /// The body (empty when none).
    public let body: [UInt8]

    public init(method: String, path: String, query: [(name: String, value: String)] = [], target: String? = nil,
                minorVersion: Int = 1, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.target = target ?? path
        self.minorVersion = minorVersion
        self.headers = headers
        self.body = body
    }

    /// The first value of query parameter `name`.
    public func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }

    /// Every value of query parameter `name`, in order.
    public func queryValues(_ name: String) -> [String] { query.filter { $0.name == name }.map(\.value) }

    /// Whether the connection stays open after the response (RFC 9112 §9.3): HTTP/1.1
    /// unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
    public var keepAlive: Bool {
        let tokens = headers.values("connection").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: " \t").lowercased() }
        if tokens.contains("close") { return false }
        return minorVersion >= 1 || tokens.contains("keep-alive")
    }
}

/// Header fields in the order received; names compare without regard to case.
public struct HTTPHeaders: Sendable, Sequence {
    private var fields: [(name: String, value: String)] = []

    public init() {}

    public init(_ fields: [(String, String)]) {
        for (name, value) in fields { append(name, value) }
    }

    public mutating func append(_ name: String, _ value: String) { fields.append((name, value)) }

    /// The first value of `name` (any case).
    public subscript(_ name: String) -> String? {
        let lower = name.lowercased()
        return fields.first { $0.name.lowercased() == lower }?.value
    }

    /// Every value of `name` (any case), in order.
    public func values(_ name: String) -> [String] {
        let lower = name.lowercased()
        return fields.filter { $0.name.lowercased() == lower }.map(\.value)
    }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}

extension String {
    /// The string without leading and trailing characters of `set` (ASCII only).
    func trimmingCharacters(in set: String) -> String {
        let chars = Set(set.unicodeScalars)
        var scalars = Substring(self).unicodeScalars[...]
        while let f = scalars.first, chars.contains(f) { scalars = scalars.dropFirst() }
        while let l = scalars.last, chars.contains(l) { scalars = scalars.dropLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> String { String(self).trimmingCharacters(in: set) }
}
