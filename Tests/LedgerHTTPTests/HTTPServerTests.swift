#if canImport(Glibc)
import Glibc
#endif
import Foundation
import LedgerHTTP
import TestSupport
import Synchronization
import Testing

/// The server on 127.0.0.1 (a free port) with handlers that echo, stream and wait.
@Suite struct HTTPServerTests {
    static func server(limits: HTTPLimits = HTTPLimits(), _ handler: @escaping HTTPServer.Handler = echo) throws -> HTTPServer {
        let s = try HTTPServer(listen: .tcp(host: "127.0.0.1", port: 0), limits: limits, handler: handler)
        s.start()
        return s
    }

    static let echo: HTTPServer.Handler = { request, _ in
        let text = "\(request.method) \(request.path) \(request.body.count) \(String(decoding: request.body, as: UTF8.self))"
        return HTTPResponse(status: 200, contentType: "text/plain", body: Array(text.utf8))
    }

    /// Runs a client's scenario on a thread of its own, blocking I/O and sleeps
    /// included: its timing is the server's and the client's alone, never that of the
    /// test process's shared pool (which the suite's other tests may hold for a minute).
    static func scenario<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await RawClient.onThread(body)
    }

    @Test func keptAliveConnectionsAnswerRequestAfterRequestAndPipelinedOnesInOrder() async throws {
        let s = try Self.server()
        let address = s.address
        let (texts, closeHeader, closed) = try await Self.scenario { () throws -> ([String], String?, Bool) in
            let c = try RawClient(address)
            var texts: [String] = []
            c.send("GET /one HTTP/1.1\r\nHost: x\r\n\r\n")
            texts.append(try c.readResponse().text)
            c.send("POST /two HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /three HTTP/1.1\r\nHost: x\r\n\r\n")
            texts.append(try c.readResponse().text)
            texts.append(try c.readResponse().text)
            c.send("POST /four HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\nhi\r\n0\r\n\r\n")
            let last = try c.readResponse()
            texts.append(last.text)
            return (texts, last.header("connection"), c.readUntilClosed())
        }
        #expect(texts == ["GET /one 0 ", "POST /two 3 abc", "GET /three 0 ", "POST /four 2 hi"])
        #expect(closeHeader == "close")
        #expect(closed)
        await s.shutdown()
    }

    @Test func smugglingFramingIsRefusedWith400AndTheConnectionClosed() async throws {
        let s = try Self.server()
        let address = s.address
        let (r, closed) = try await Self.scenario {
            let c = try RawClient(address)
            c.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n")
            return (try c.readResponse(), c.readUntilClosed())
        }
        #expect(r.status == 400)
        #expect(r.text.contains("both Content-Length and Transfer-Encoding"))
        #expect(r.header("connection") == "close")
        #expect(closed)  // the smuggled request is never answered
        await s.shutdown()
    }

    @Test func expectContinueGets100ThenTheAnswer() async throws {
        let s = try Self.server()
        let address = s.address
        let (interim, final) = try await Self.scenario {
            let c = try RawClient(address)
            c.send("PUT /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
            let interim = try c.readResponse()
            c.send("ok")
            return (interim, try c.readResponse())
        }
        #expect(interim.status == 100)
        #expect(final.text == "PUT /x 2 ok")
        await s.shutdown()
    }

    @Test func aBodyDeclaredOverTheLimitIsRefusedBeforeItIsSent() async throws {
        var limits = HTTPLimits()
        limits.bodyBytesMax = 1000
        let s = try Self.server(limits: limits)
        let address = s.address
        let (r, closed) = try await Self.scenario {
            let c = try RawClient(address)
            c.send("POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 1001\r\n\r\n")
            return (try c.readResponse(), c.readUntilClosed())
        }
        #expect(r.status == 413)
        #expect(closed)
        await s.shutdown()
    }

    @Test func aSlowlorisClientIsCutAtTheHeadDeadline() async throws {
        var limits = HTTPLimits()
        limits.headSeconds = 0.5
        limits.idleSeconds = 600  // so that a close can only be the head deadline
        let s = try Self.server(limits: limits)
        let address = s.address
        let (r, closed, elapsed) = try await Self.scenario { () throws -> (RawClient.Response, Bool, Double) in
            let c = try RawClient(address)
            let start = Date()
            c.send("GET / HTTP/1.1\r\nHost: x\r\n")
            // One byte now and then, as slowloris does: the deadline counts from the first.
            for _ in 0..<3 {
                usleep(200_000)
                c.send("X")
            }
            let r = try c.readResponse()
            return (r, c.readUntilClosed(), r.receivedAt.timeIntervalSince(start))
        }
        #expect(r.status == 408)
        #expect(closed)
        #expect(elapsed < 5.0, "cut after \(elapsed) s (the deadline is 0.5 s)")
        #expect(s.connectionCount == 0)
        await s.shutdown()
    }

    @Test func anIdleConnectionIsClosedAndOverTheConnectionLimitIsRefused() async throws {
        var limits = HTTPLimits()
        limits.idleSeconds = 0.4
        limits.connectionsMax = 2
        let s = try Self.server(limits: limits)
        let address = s.address
        let statuses = try await Self.scenario { () throws -> [Int] in
            let a = try RawClient(address), b = try RawClient(address)
            a.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            b.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            let first = [try a.readResponse().status, try b.readResponse().status]
            let third = try RawClient(address)
            let refused = try third.readResponse().status
            // Idle past the limit: closed by the server.
            return first + [refused, third.readUntilClosed() ? 1 : 0, a.readUntilClosed() ? 1 : 0, b.readUntilClosed() ? 1 : 0]
        }
        #expect(statuses == [200, 200, 503, 1, 1, 1])
        #expect(s.connectionCount == 0)
        await s.shutdown()
    }

    @Test func aStreamedBodyArrivesWholeInChunksAndWaitsForASlowReader() async throws {
        let produced = Atomic<Int>(0)
        let piece = [UInt8](repeating: 0x61, count: 256 << 10)
        let s = try Self.server { _, _ in
            HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/x-ndjson")]), body: .stream { writer in
                for _ in 0..<64 {
                    try await writer.write(piece)
                    produced.add(1, ordering: .relaxed)
                }
            })
        }
        let address = s.address
        let (early, r) = try await Self.scenario {
            let c = try RawClient(address)
            c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            // Not reading: the producer stops once the socket buffers and the high-water
            // mark are full, far short of 64 pieces (16 MiB).
            usleep(500_000)
            let early = produced.load(ordering: .relaxed)
            return (early, try c.readResponse())
        }
        #expect(early < 64, "the producer ran \(early) pieces ahead of a reader that reads nothing")
        #expect(r.status == 200)
        #expect(r.header("transfer-encoding") == "chunked")
        #expect(r.body.count == 64 * piece.count)
        let total = produced.load(ordering: .relaxed)
        #expect(total == 64)
        await s.shutdown()
    }

    @Test func aClientThatGoesAwayCancelsItsHandler() async throws {
        let cancelled = Atomic<Bool>(false)
        let s = try Self.server { _, _ in
            do {
                try await Task.sleep(for: .seconds(300))
            } catch {
                cancelled.store(true, ordering: .relaxed)
            }
            return HTTPResponse(status: 200)
        }
        let address = s.address
        let wasCancelled = try await Self.scenario { () throws -> Bool in
            do {
                let c = try RawClient(address)
                c.send("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
                usleep(100_000)
                _ = c  // closed at the end of this scope
            }
            let deadline = Date().addingTimeInterval(60)
            while !cancelled.load(ordering: .relaxed) && Date() < deadline { usleep(10_000) }
            return cancelled.load(ordering: .relaxed)
        }
        #expect(wasCancelled)
        await s.shutdown()
    }

    @Test func shutdownFinishesTheRequestInFlightAndClosesIdleOnes() async throws {
        let s = try Self.server { _, _ in
            try? await Task.sleep(for: .milliseconds(300))
            return HTTPResponse(status: 200, contentType: "text/plain", body: Array("done".utf8))
        }
        let address = s.address
        let (r, idleClosed) = try await Self.scenario { () throws -> (RawClient.Response, Bool) in
            let busy = try RawClient(address), idle = try RawClient(address)
            busy.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            usleep(50_000)
            s.beginShutdown()  // the request is in flight: its handler sleeps 300 ms
            return (try busy.readResponse(), idle.readUntilClosed())
        }
        #expect(r.text == "done")
        #expect(r.header("connection") == "close")
        #expect(idleClosed)
        await s.shutdown()
        #expect(throws: RawClient.Failure.self) { try RawClient(address) }  // no longer listening
    }

    @Test func aUnixSocketIsTheOwnersOnly() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hl-http-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.path + "/s.sock"
        let s = try HTTPServer(listen: .unix(path: path), handler: Self.echo)
        s.start()
        var st = stat()
        #expect(stat(path, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o600)
        let c = try RawClient(.unix(path: path))
        c.send("GET /u HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try await c.response().text == "GET /u 0 ")
        await s.shutdown()
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func listenAddressesParseAndSayWhetherTheyAreLoopback() throws {
        #expect(try ListenAddress(parsing: "127.0.0.1:8080") == .tcp(host: "127.0.0.1", port: 8080))
        #expect(try ListenAddress(parsing: "localhost:80") == .tcp(host: "127.0.0.1", port: 80))
        #expect(try ListenAddress(parsing: "[::1]:0") == .tcp(host: "::1", port: 0))
        #expect(try ListenAddress(parsing: "unix:/tmp/x.sock") == .unix(path: "/tmp/x.sock"))
        #expect(try ListenAddress(parsing: "127.0.0.1:8080").isLoopback)
        #expect(try ListenAddress(parsing: "127.1.2.3:1").isLoopback)
        #expect(try ListenAddress(parsing: "[::1]:1").isLoopback)
        #expect(try !ListenAddress(parsing: "0.0.0.0:8080").isLoopback)
        #expect(try !ListenAddress(parsing: "192.168.1.2:8080").isLoopback)
        for bad in ["8080", "host:80", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:", "unix:", "[::1:80"] {
            #expect(throws: ListenAddress.Invalid.self, "\(bad)") { try ListenAddress(parsing: bad) }
        }
    }
}
