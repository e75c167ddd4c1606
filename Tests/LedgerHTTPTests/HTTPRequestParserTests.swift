import LedgerHTTP
import Testing

@Suite struct HTTPRequestParserTests {
    /// Every request the bytes hold, or the error that stopped the parser.
    static func parse(_ text: String, limits: HTTPLimits = HTTPLimits(), split: Int? = nil)
        -> (requests: [HTTPRequest], error: HTTPParseError?) {
        var parser = HTTPRequestParser(limits: limits)
        var out: [HTTPRequest] = []
        let bytes = Array(text.utf8)
        let step = split ?? bytes.count
        var i = 0
        repeat {
            parser.feed(Array(bytes[i..<min(bytes.count, i + max(1, step))]))
            i += max(1, step)
            do {
                while let r = try parser.next() { out.append(r) }
            } catch {
                return (out, error)
            }
        } while i < bytes.count
        return (out, nil)
    }

    @Test func aGetWithAQueryAndHeaders() throws {
        let r = Self.parse("GET /v1/samples/heart%20Rate?where=value+%3E+60&limit=10&limit=20 HTTP/1.1\r\nHost: x\r\nAuthorization:  Bearer abc \r\n\r\n")
        #expect(r.error == nil)
        let q = try #require(r.requests.first)
        #expect(q.method == "GET")
        #expect(q.path == "/v1/samples/heart Rate")
        #expect(q.queryValue("where") == "value > 60")
        #expect(q.queryValues("limit") == ["10", "20"])
        #expect(q.headers["authorization"] == "Bearer abc")
        #expect(q.keepAlive)
        #expect(q.body.isEmpty)
    }

    @Test(arguments: [1, 2, 3, 7, 1000])
    func bytesArrivingInPiecesGiveTheSameRequests(split: Int) {
        let text = "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloPOST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: t\r\n\r\nGET /c HTTP/1.0\r\n\r\n"
        let r = Self.parse(text, split: split)
        #expect(r.error == nil)
        #expect(r.requests.map(\.path) == ["/a", "/b", "/c"])
        #expect(r.requests.map { String(decoding: $0.body, as: UTF8.self) } == ["hello", "abcde", ""])
        #expect(r.requests.map(\.keepAlive) == [true, true, false])
    }

    @Test(arguments: [
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "both Content-Length and Transfer-Encoding"),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400, "both Content-Length and Transfer-Encoding"),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 400, "Content-Length given 2 times"),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc", 400, "is not a length"),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0x3\r\n\r\nabc", 400, "is not a length"),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n", 400, "is not a length"),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, "only chunked"),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 501, "only chunked"),
        ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "HTTP/1.0"),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length : 3\r\n\r\nabc", 400, "no space before its colon"),
        ("GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n", 400, "obs-fold"),
        ("GET / HTTP/1.1\nHost: x\n\n", 400, "bare LF"),
        ("GET / HTTP/1.1\r\nHost: x\rY: z\r\n\r\n", 400, "bare CR"),
        ("GET / HTTP/1.1\r\n\r\n", 400, "without Host"),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "Host given 2 times"),
        ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505, "not supported"),
        ("GET / HTTP/1.1 \r\nHost: x\r\n\r\n", 400, "METHOD SP TARGET SP VERSION"),
        ("GET / HTTP/1.x\r\nHost: x\r\n\r\n", 400, "not an HTTP version"),
        ("GET http://a/ HTTP/1.1\r\nHost: x\r\n\r\n", 400, "origin-form"),
        ("GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "percent-encoding"),
        ("GET /%FF HTTP/1.1\r\nHost: x\r\n\r\n", 400, "percent-encoding"),
        ("G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400, "not a token"),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, "hexadecimal"),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n", 400, "not followed by CRLF"),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n123456789\r\n", 413, "over 4 GiB"),
        ("GET / HTTP/1.1\r\nHost: x\r\nX: a\u{01}b\r\n\r\n", 400, "control character"),
    ] as [(String, Int, String)])
    func framingThatParsersCouldReadTwoWaysIsRefused(_ text: String, _ status: Int, _ reason: String) {
        let r = Self.parse(text)
        #expect(r.requests.isEmpty)
        let error = r.error
        #expect(error?.status == status, "\(text.debugDescription)")
        #expect(error?.reason.contains(reason) == true, "\(String(describing: error))")
    }

    @Test func aFailedParserStaysFailed() {
        var p = HTTPRequestParser()
        p.feed(Array("GET / HTTP/1.1\nHost: x\n\n".utf8))
        #expect(throws: HTTPParseError.self) { try p.next() }
        p.feed(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(throws: HTTPParseError.self) { try p.next() }
    }

    @Test func limitsAreRefusedWithTheirStatus() {
        var limits = HTTPLimits()
        limits.requestLineMax = 64
        limits.headBytesMax = 256
        limits.headerCountMax = 5
        limits.bodyBytesMax = 10
        let longTarget = "GET /" + String(repeating: "a", count: 100) + " HTTP/1.1\r\nHost: x\r\n\r\n"
        #expect(Self.parse(longTarget, limits: limits).error?.status == 414)
        // The request line's limit holds before the line has ended (no waiting for CRLF).
        #expect(Self.parse("GET /" + String(repeating: "a", count: 100), limits: limits).error?.status == 414)
        let manyHeaders = "GET / HTTP/1.1\r\nHost: x\r\n" + (0..<6).map { "X-\($0): y\r\n" }.joined() + "\r\n"
        #expect(Self.parse(manyHeaders, limits: limits).error?.status == 431)
        let bigHeader = "GET / HTTP/1.1\r\nHost: x\r\nX: " + String(repeating: "b", count: 300) + "\r\n\r\n"
        #expect(Self.parse(bigHeader, limits: limits).error?.status == 431)
        // A head that never ends is refused once it passes the limit.
        #expect(Self.parse("GET / HTTP/1.1\r\nHost: x\r\nX: " + String(repeating: "b", count: 300), limits: limits).error?.status == 431)
        #expect(Self.parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n", limits: limits).error?.status == 413)
        let chunked = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\nabcdef\r\n0\r\n\r\n"
        #expect(Self.parse(chunked, limits: limits).error?.status == 413)
        let exactly = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789"
        #expect(Self.parse(exactly, limits: limits).requests.first?.body.count == 10)
    }

    @Test func expectContinueIsReportedBeforeTheBody() throws {
        var p = HTTPRequestParser()
        p.feed(Array("PUT / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n".utf8))
        let none = try p.next()
        #expect(none == nil)
        #expect(p.headInfo?.expectsContinue == true)
        #expect(p.headInfo?.declaredLength == 4)
        p.feed(Array("data".utf8))
        let whole = try p.next()
        #expect(whole?.body == Array("data".utf8))
        #expect(p.headInfo == nil)
        #expect(!p.isMidRequest)
    }
}
