import Foundation
import HealthLedger
import LedgerHTTP
@testable import LedgerServer
import Testing
import TestSupport

/// Limits and their refusals, framing attacks, and the access log: every read
/// recorded before it is answered, and a read that cannot be recorded not answered.
@Suite struct ServiceLimitTests {
    @Test func oversizedAndSmuggledRequestsAreRefusedAndTheConnectionClosed() async throws {
        var limits = HTTPLimits()
        limits.bodyBytesMax = 1000
        limits.headSeconds = 0.5
        let f = try await ServiceFixture(limits: limits)
        let big = try await f.request("POST", "/v1/samples", token: f.appToken, body: String(repeating: " ", count: 1001))
        #expect(big.status == 413)
        #expect(big.header("content-type") == "application/problem+json")
        let c = try RawClient(f.server.address)
        c.send("POST /v1/samples HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(f.appToken)\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        let smuggled = try await c.response()
        #expect(smuggled.status == 400)
        #expect(smuggled.header("connection") == "close")
        #expect(await c.isClosedByServer())
        let slow = try RawClient(f.server.address)
        slow.send("GET /v1/latest/bodyMass HTTP/1.1\r\nHost: x\r\n")
        let timedOut = try await slow.response()
        #expect(timedOut.status == 408)
        #expect(try ServiceFixture.object(timedOut)["code"] as? String == "timeout")
        #expect(try await f.request("PUT", "/v1/samples", token: f.appToken).status == 405)
        #expect(try await f.request("GET", "/v2/nothing", token: f.appToken).status == 404)
        try await f.stop()
    }

    @Test func aTokenOverItsRateIsToldWhenToComeBack() async throws {
        try await OwnThreads.run {
            var options = ServiceOptions()
            options.requestsPerSecond = 0.01  // a burst of 1, then one a hundred seconds
            let f = try await ServiceFixture(options: options)
            let statuses = try await (0..<2).asyncMap { _ in try await f.request("GET", "/v1/characteristics", token: f.appToken) }
            #expect(statuses.map(\.status) == [200, 429])
            // A hundred seconds for the next token, less what the first request's time refilled.
            #expect((95...100).contains(Int(statuses[1].header("retry-after") ?? "") ?? 0))
            #expect(try ServiceFixture.object(statuses[1])["code"] as? String == "tooManyRequests")
            // Another token has its own bucket.
            #expect(try await f.request("GET", "/v1/characteristics", token: f.otherToken).status == 200)
            try await f.stop()
        }
    }

    @Test func everyReadIsInTheAccessLogWhichHoldsNoHealthData() async throws {
        let f = try await ServiceFixture()
        #expect(try await f.request("POST", "/v1/samples", token: f.appToken,
                                    body: ServiceFixture.weight(123.456, at: "2026-03-01T08:00:00Z", metadata: #"{"note":"ZZ-SECRET"}"#)).status == 201)
        _ = try await f.request("GET", "/v1/samples/bodyMass?where=value%20%3E%2060%20kg", token: f.appToken)
        _ = try await f.request("GET", "/v1/latest/bodyMass", token: f.otherToken)  // no read permission, none of its own: 404
        _ = try await f.request("GET", "/v1/latest/height", token: f.ownerToken)
        _ = try await f.request("GET", "/v1/characteristics", token: f.ownerToken)
        let entries = try AccessLog.entries(ledgerPath: f.dir.path).map(\.entry)
        #expect(entries.map(\.route) == ["GET /v1/samples/{type}", "GET /v1/latest/{type}", "GET /v1/latest/{type}", "GET /v1/characteristics"])
        #expect(entries.map(\.subject) == ["com.example.scale", "com.example.other", "owner", "owner"])
        #expect(entries.map(\.returned) == [1, 0, 0, 0])
        #expect(entries.map(\.status) == [200, 404, 404, 200])
        #expect(entries[0].types == ["HKQuantityTypeIdentifierBodyMass"])
        #expect(entries[0].predicate == "where=value%20%3E%2060%20kg")
        #expect(entries[0].peer.hasPrefix("127.0.0.1:"))
        #expect(entries.allSatisfy { $0.credential != nil && $0.ledgerSequence > 0 })
        // No value read is in it, as text or as a double.
        let bytes = try Data(contentsOf: f.dir.url.appendingPathComponent("access/ledger.log"))
        #expect(bytes.range(of: Data("ZZ-SECRET".utf8)) == nil)
        #expect(bytes.range(of: Data("123.456".utf8)) == nil)
        #expect(bytes.range(of: withUnsafeBytes(of: 123.456.bitPattern.littleEndian) { Data($0) }) == nil)
        #expect(try AccessLog.verify(ledgerPath: f.dir.path)?.isIntact == true)
        try await f.stop()
    }

    /// A2: recorded durably before any byte is sent, or not answered.
    @Test func aReadThatCannotBeRecordedIsNotAnswered() async throws {
        let f = try await ServiceFixture()
        #expect(try await f.request("POST", "/v1/samples", token: f.appToken,
                                    body: ServiceFixture.weight(70, at: "2026-03-01T08:00:00Z")).status == 201)
        f.accessLog.abandon()  // the access log can no longer be written
        let r = try await f.request("GET", "/v1/latest/bodyMass", token: f.appToken)
        #expect(r.status == 503)
        let p = try ServiceFixture.object(r)
        #expect(p["code"] as? String == "accessLogUnavailable")
        #expect(!r.text.contains("\"value\""))
        // Writes do not depend on it.
        #expect(try await f.request("POST", "/v1/samples", token: f.appToken,
                                    body: ServiceFixture.weight(71, at: "2026-03-02T08:00:00Z")).status == 201)
        await f.server.shutdown(grace: 5)
        try await f.ledger.close()
    }
}

extension Sequence {
    /// `map`, one element after another, awaiting each.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var out: [T] = []
        for e in self { out.append(try await transform(e)) }
        return out
    }
}
