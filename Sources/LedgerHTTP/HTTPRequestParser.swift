/// Why a request cannot be read: answered with `status` and the connection closed
/// (after a framing error the next request's start is unknown).
public struct HTTPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 400, 413, 414, 431, 501 or 505.
    public let status: Int
    public let reason: String

    public init(_ status: Int, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    public var description: String { "\(status): \(reason)" }
}

/// An incremental HTTP/1.1 request parser (RFC 9112): bytes in as they arrive,
/// whole requests out, one at a time.
///
/// Strict where leniency lets two parsers disagree about where a request ends
/// (request smuggling): lines end in CRLF only; a header name is a token with no
/// space before its colon; no obs-fold; `Content-Length` is digits, given once;
/// `Transfer-Encoding` is `chunked` alone and never beside `Content-Length`; a
/// chunk size is hex within the body limit. Every count read from the wire is
/// range-checked before use. After an error the parser stays failed.
public struct HTTPRequestParser: Sendable {
    public let limits: HTTPLimits
    private var buffer: [UInt8] = []
    /// Bytes of `buffer` already consumed.
    private var start = 0
    private var state: State = .head
    private var failed: HTTPParseError?

    private enum State: Sendable {
        case head
        case fixedBody(Head, remaining: Int)
        case chunkSize(Head)
        case chunkData(Head, remaining: Int)
        case chunkDataEnd(Head)
        case trailers(Head, bytes: Int)
    }

    private struct Head: Sendable {
        var method: String
        var target: String
        var path: String
        var query: [(name: String, value: String)]
        var minorVersion: Int
        var headers: HTTPHeaders
        var body: [UInt8] = []
    }

    /// What the head of the request being read says, once it is read.
    public struct HeadInfo: Sendable {
        public let expectsContinue: Bool
        public let declaredLength: Int?
    }

    public init(limits: HTTPLimits = HTTPLimits()) { self.limits = limits }

    /// Bytes received and not yet consumed by a request.
    public var bufferedCount: Int { buffer.count - start }

    /// Whether a request has begun but not ended (bytes of it are buffered or its
    /// body is being read).
    public var isMidRequest: Bool {
        if case .head = state { return bufferedCount > 0 }
        return true
    }

    /// Whether the head of the request being read is complete and its body not yet:
    /// with its `Expect: 100-continue` and declared length.
    public var headInfo: HeadInfo? {
        switch state {
        case .head: return nil
        case .fixedBody(let h, _), .chunkSize(let h), .chunkData(let h, _), .chunkDataEnd(let h), .trailers(let h, _):
            let expects = h.headers.values("expect").contains { $0.lowercased() == "100-continue" }
            return HeadInfo(expectsContinue: expects && h.body.isEmpty,
                            declaredLength: h.headers["content-length"].flatMap { Int($0) })
        }
    }

    /// Adds received bytes.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 64 << 10 && start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Adds received bytes.
    public mutating func feed(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// The next whole request, nil when more bytes are needed.
    public mutating func next() throws(HTTPParseError) -> HTTPRequest? {
        if let failed { throw failed }
        do {
            return try step()
        } catch {
            failed = error
            throw error
        }
    }

    private mutating func step() throws(HTTPParseError) -> HTTPRequest? {
        while true {
            switch state {
            case .head:
                guard let head = try readHead() else { return nil }
                let lengths = head.headers.values("content-length")
                let codings = head.headers.values("transfer-encoding")
                if !codings.isEmpty {
                    guard lengths.isEmpty else {
                        throw HTTPParseError(400, "both Content-Length and Transfer-Encoding: refused (request smuggling)")
                    }
                    guard head.minorVersion >= 1 else { throw HTTPParseError(400, "Transfer-Encoding in an HTTP/1.0 request") }
                    let list = codings.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: " \t").lowercased() }
                    guard list == ["chunked"] else {
                        throw HTTPParseError(501, "Transfer-Encoding \(codings.joined(separator: ", ")): only chunked is supported")
                    }
                    state = .chunkSize(head)
                } else if !lengths.isEmpty {
                    guard lengths.count == 1 else { throw HTTPParseError(400, "Content-Length given \(lengths.count) times") }
                    let text = lengths[0]
                    guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                          let n = Int(text) else {
                        throw HTTPParseError(400, "Content-Length '\(Self.shown(text))' is not a length")
                    }
                    guard n <= limits.bodyBytesMax else {
                        throw HTTPParseError(413, "a body of \(n) bytes is over the limit of \(limits.bodyBytesMax)")
                    }
                    if n == 0 { return finish(head) }
                    state = .fixedBody(head, remaining: n)
                } else {
                    return finish(head)
                }
            case .fixedBody(var head, let remaining):
                let available = buffer.count - start
                guard available > 0 else { return nil }
                let take = min(available, remaining)
                head.body.append(contentsOf: buffer[start..<start + take])
                start += take
                if take == remaining { state = .head; return finish(head) }
                state = .fixedBody(head, remaining: remaining - take)
                return nil
            case .chunkSize(let head):
                guard let line = try readLine(max: limits.chunkLineMax, what: "a chunk-size line") else { return nil }
                // chunk-size [ chunk-ext ]: the size is 1*HEXDIG; extensions are ignored.
                let sizeBytes = line.prefix { Self.hexValue($0) != nil }
                let rest = line.dropFirst(sizeBytes.count)
                guard !sizeBytes.isEmpty, rest.isEmpty || rest.first == UInt8(ascii: ";") || rest.first == UInt8(ascii: " ")
                        || rest.first == UInt8(ascii: "\t") else {
                    throw HTTPParseError(400, "a chunk size is hexadecimal digits")
                }
                guard sizeBytes.count <= 8 else { throw HTTPParseError(413, "a chunk of over 4 GiB") }
                let size = sizeBytes.reduce(0) { $0 * 16 + Int(Self.hexValue($1)!) }
                guard head.body.count + size <= limits.bodyBytesMax else {
                    throw HTTPParseError(413, "a body of over \(limits.bodyBytesMax) bytes")
                }
                state = size == 0 ? .trailers(head, bytes: 0) : .chunkData(head, remaining: size)
            case .chunkData(var head, let remaining):
                let available = buffer.count - start
                guard available > 0 else { return nil }
                let take = min(available, remaining)
                head.body.append(contentsOf: buffer[start..<start + take])
                start += take
                state = take == remaining ? .chunkDataEnd(head) : .chunkData(head, remaining: remaining - take)
                if take < remaining { return nil }
            case .chunkDataEnd(let head):
                guard buffer.count - start >= 2 else { return nil }
                guard buffer[start] == 13 && buffer[start + 1] == 10 else { throw HTTPParseError(400, "a chunk's data is not followed by CRLF") }
                start += 2
                state = .chunkSize(head)
            case .trailers(let head, let bytes):
                guard let line = try readLine(max: limits.headBytesMax, what: "a trailer field") else { return nil }
                if line.isEmpty {
                    state = .head
                    return finish(head)
                }
                let total = bytes + line.count + 2
                guard total <= limits.headBytesMax else { throw HTTPParseError(431, "trailer fields over \(limits.headBytesMax) bytes") }
                // Trailers are read and checked like header fields, then dropped (no
                // route needs one; none may change the framing).
                _ = try Self.field(line)
                state = .trailers(head, bytes: total)
            }
        }
    }

    private mutating func finish(_ head: Head) -> HTTPRequest {
        state = .head
        return HTTPRequest(method: head.method, path: head.path, query: head.query, target: head.target,
                           minorVersion: head.minorVersion, headers: head.headers, body: head.body)
    }

    /// One CRLF-terminated line without its CRLF; nil when it has not all arrived.
    private mutating func readLine(max: Int, what: String) throws(HTTPParseError) -> ArraySlice<UInt8>? {
        var i = start
        let end = buffer.count
        while i < end {
            let b = buffer[i]
            if b == 10 { throw HTTPParseError(400, "\(what) ends in a bare LF (CRLF required)") }
            if b == 13 {
                guard i + 1 < end else { return nil }
                guard buffer[i + 1] == 10 else { throw HTTPParseError(400, "\(what) holds a bare CR") }
                let line = buffer[start..<i]
                start = i + 2
                return line
            }
            i += 1
            if i - start > max { throw HTTPParseError(what == "a trailer field" ? 431 : 400, "\(what) longer than \(max) bytes") }
        }
        return nil
    }

    /// The request line and header fields, once the empty line after them arrived.
    private mutating func readHead() throws(HTTPParseError) -> Head? {
        // RFC 9112 §2.2: empty lines before a request line are ignored (at most a few).
        var skipped = 0
        while buffer.count - start >= 2 && buffer[start] == 13 && buffer[start + 1] == 10 && skipped < 4 {
            start += 2
            skipped += 1
        }
        // Find the end of the head without consuming anything.
        let headStart = start
        var i = start, lineStart = start, lines = 0
        let end = buffer.count
        var headEnd: Int?
        while i < end {
            let b = buffer[i]
            if b == 10 { throw HTTPParseError(400, "a line of the head ends in a bare LF (CRLF required)") }
            if b == 13 {
                guard i + 1 < end else { break }
                guard buffer[i + 1] == 10 else { throw HTTPParseError(400, "a bare CR in the head") }
                if lines == 0 && i - lineStart > limits.requestLineMax {
                    throw HTTPParseError(414, "a request line longer than \(limits.requestLineMax) bytes")
                }
                if i == lineStart && lines > 0 { headEnd = i + 2; break }
                if i == lineStart && lines == 0 { throw HTTPParseError(400, "an empty request line") }
                lines += 1
                if lines - 1 > limits.headerCountMax { throw HTTPParseError(431, "more than \(limits.headerCountMax) header fields") }
                i += 2
                lineStart = i
                continue
            }
            i += 1
            if lines == 0 && i - lineStart > limits.requestLineMax {
                throw HTTPParseError(414, "a request line longer than \(limits.requestLineMax) bytes")
            }
            if i - headStart > limits.headBytesMax {
                throw HTTPParseError(431, "a request head longer than \(limits.headBytesMax) bytes")
            }
        }
        guard let headEnd else {
            if buffer.count - headStart > limits.headBytesMax {
                throw HTTPParseError(431, "a request head longer than \(limits.headBytesMax) bytes")
            }
            return nil
        }
        guard headEnd - headStart <= limits.headBytesMax + 4 else {
            throw HTTPParseError(431, "a request head longer than \(limits.headBytesMax) bytes")
        }
        // Split into lines (each known to end in CRLF).
        var lineRanges: [Range<Int>] = []
        var s = headStart, j = headStart
        while j < headEnd - 2 {
            if buffer[j] == 13 { lineRanges.append(s..<j); j += 2; s = j } else { j += 1 }
        }
        start = headEnd
        let requestLine = buffer[lineRanges[0]]
        var head = try Self.requestLine(requestLine)
        for r in lineRanges.dropFirst() {
            let (name, value) = try Self.field(buffer[r])
            head.headers.append(name, value)
        }
        if head.minorVersion >= 1 {
            let hosts = head.headers.values("host")
            guard hosts.count == 1 else {
                throw HTTPParseError(400, hosts.isEmpty ? "an HTTP/1.1 request without Host" : "Host given \(hosts.count) times")
            }
        }
        return head
    }

    private static func requestLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> Head {
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw HTTPParseError(400, "a request line is METHOD SP TARGET SP VERSION")
        }
        guard parts[0].allSatisfy(isTokenByte) else { throw HTTPParseError(400, "the method is not a token") }
        let version = Array(parts[2])
        guard version.count == 8, version.starts(with: Array("HTTP/".utf8)), version[6] == UInt8(ascii: "."),
              (0x30...0x39).contains(version[5]), (0x30...0x39).contains(version[7]) else {
            throw HTTPParseError(400, "'\(shown(String(decoding: version, as: UTF8.self)))' is not an HTTP version")
        }
        guard version[5] == UInt8(ascii: "1") else { throw HTTPParseError(505, "HTTP/\(Character(UnicodeScalar(version[5]))).x is not supported") }
        let minor = Int(version[7] - 0x30)
        let target = Array(parts[1])
        // Visible ASCII only (RFC 3986 characters); no fragment.
        guard target.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") }) else {
            throw HTTPParseError(400, "the request target holds a character outside visible ASCII or a fragment")
        }
        let method = String(decoding: parts[0], as: UTF8.self)
        let targetText = String(decoding: target, as: UTF8.self)
        if target == [UInt8(ascii: "*")] {
            guard method == "OPTIONS" else { throw HTTPParseError(400, "the target * is for OPTIONS only") }
            return Head(method: method, target: targetText, path: "*", query: [], minorVersion: minor, headers: HTTPHeaders())
        }
        guard target.first == UInt8(ascii: "/") else { throw HTTPParseError(400, "the request target must be a path (origin-form)") }
        let q = target.firstIndex(of: UInt8(ascii: "?"))
        let pathBytes = target[..<(q ?? target.endIndex)]
        guard let path = percentDecoded(pathBytes, plusIsSpace: false) else {
            throw HTTPParseError(400, "the path has a bad percent-encoding")
        }
        var query: [(name: String, value: String)] = []
        if let q {
            for pair in target[(q + 1)...].split(separator: UInt8(ascii: "&")) {
                let eq = pair.firstIndex(of: UInt8(ascii: "="))
                guard let name = percentDecoded(pair[..<(eq ?? pair.endIndex)], plusIsSpace: true),
                      let value = percentDecoded(eq.map { pair[($0 + 1)...] } ?? [], plusIsSpace: true) else {
                    throw HTTPParseError(400, "the query has a bad percent-encoding")
                }
                query.append((name, value))
            }
        }
        return Head(method: method, target: targetText, path: path, query: query, minorVersion: minor, headers: HTTPHeaders())
    }

    private static func field(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> (String, String) {
        guard let first = line.first else { throw HTTPParseError(400, "an empty header line") }
        guard first != 0x20 && first != 0x09 else { throw HTTPParseError(400, "obs-fold (a header line starting with whitespace) is refused") }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw HTTPParseError(400, "a header line without a colon") }
        let name = line[..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
            throw HTTPParseError(400, "a header name is a token, with no space before its colon")
        }
        var value = line[(colon + 1)...]
        while let f = value.first, f == 0x20 || f == 0x09 { value = value.dropFirst() }
        while let l = value.last, l == 0x20 || l == 0x09 { value = value.dropLast() }
        guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
            throw HTTPParseError(400, "a header value holds a control character")
        }
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    /// RFC 9110 tchar.
    static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(b)
        }
    }

    static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - 0x30
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - 0x61 + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - 0x41 + 10
        default: nil
        }
    }

    /// Percent-decoding to UTF-8 text; nil for a bad escape or bytes that are not UTF-8.
    static func percentDecoded(_ bytes: some Collection<UInt8>, plusIsSpace: Bool) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var it = bytes.makeIterator()
        while let b = it.next() {
            if b == UInt8(ascii: "%") {
                guard let h = it.next().flatMap(hexValue), let l = it.next().flatMap(hexValue) else { return nil }
                out.append(h << 4 | l)
            } else if b == UInt8(ascii: "+") && plusIsSpace {
                out.append(0x20)
            } else {
                out.append(b)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    /// At most 40 characters of untrusted text, for an error message.
    static func shown(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(40)) + "…"
    }
}
