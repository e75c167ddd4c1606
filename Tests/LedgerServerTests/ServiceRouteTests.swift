import Foundation
import HealthLedger
import LedgerHTTP
@testable import LedgerServer
import Synchronization
import Testing
import TestSupport

/// The store API over JSON: saves, queries with the where grammar and the paging
/// cursor, latest, statistics, the change feed as a long poll, authorization,
/// characteristics — with the library's rules and their IDs in the refusals.
@Suite struct ServiceRouteTests {
    @Test func savesAreAllOrNothingAndRefusalsCarryTheRule() async throws {
        let f = try await ServiceFixture()
        let uuid = "00000000-0000-4000-8000-0000000000A1"
        let batch = "[" + ServiceFixture.weight(70, at: "2026-03-01T08:00:00Z", uuid: uuid) + ","
            + ServiceFixture.weight(71, at: "2026-03-02T08:00:00Z") + "]"
        let r = try await f.request("POST", "/v1/samples", token: f.appToken, body: batch)
        #expect(r.status == 201)
        let uuids = try #require(try ServiceFixture.object(r)["uuids"] as? [String])
        #expect(uuids.count == 2 && uuids[0] == uuid)
        // The same UUID again: the whole save is refused (E3), nothing written.
        let again = try await f.request("POST", "/v1/samples", token: f.appToken,
                                        body: "[" + ServiceFixture.weight(72, at: "2026-03-03T08:00:00Z") + ","
                                            + ServiceFixture.weight(70, at: "2026-03-01T08:00:00Z", uuid: uuid) + "]")
        #expect(again.status == 409)
        let problem = try ServiceFixture.object(again)
        #expect(problem["rule"] as? String == "E3")
        #expect(problem["code"] as? String == "duplicateUUID")
        #expect(problem["type"] as? String == "tag:healthledger,2026:problem:duplicateUUID")
        #expect(try ServiceFixture.lines(try await f.request("GET", "/v1/samples/bodyMass", token: f.ownerToken)).count == 2)
        // A type the app may not share (E2), an Apple-only type (E6), a bad value, a bad field.
        let height = try await f.request("POST", "/v1/samples", token: f.appToken,
                                         body: #"{"type":"height","value":1.8,"unit":"m","start":"2026-03-01T08:00:00Z"}"#)
        #expect(height.status == 403)
        #expect(try ServiceFixture.object(height)["code"] as? String == "authorizationNotDetermined")
        let apple = try await f.request("POST", "/v1/samples", token: f.appToken,
                                        body: #"{"type":"appleExerciseTime","value":30,"unit":"min","start":"2026-03-01T08:00:00Z"}"#)
        #expect(apple.status == 403)
        let wrongUnit = try await f.request("POST", "/v1/samples", token: f.appToken,
                                            body: #"{"type":"bodyMass","value":70,"unit":"m","start":"2026-03-01T08:00:00Z"}"#)
        #expect(wrongUnit.status == 422)
        let unknown = try await f.request("POST", "/v1/samples", token: f.appToken,
                                          body: #"[{"type":"bodyMass","value":70,"unit":"kg","start":"2026-03-01T08:00:00Z","metdata":{}}]"#)
        #expect(unknown.status == 422)
        #expect((try ServiceFixture.object(unknown)["detail"] as? String)?.hasPrefix("unknownField: samples[0]: \"metdata\"") == true)
        let notJSON = try await f.request("POST", "/v1/samples", token: f.appToken, body: "{", contentType: "application/json")
        #expect(notJSON.status == 400)
        let text = try await f.request("POST", "/v1/samples", token: f.appToken, body: "x", contentType: "text/plain")
        #expect(text.status == 415)
        #expect(try ServiceFixture.lines(try await f.request("GET", "/v1/samples/bodyMass", token: f.ownerToken)).count == 2)
        try await f.stop()
    }

    @Test func aQueryStreamsPagesWithTheWhereGrammarAndAResumableCursor() async throws {
        var options = ServiceOptions()
        options.pageSize = 2
        let f = try await ServiceFixture(options: options)
        var body: [String] = []
        for day in 1...7 {
            body.append(ServiceFixture.weight(69 + Double(day), at: "2026-03-0\(day)T08:00:00Z",
                                              metadata: day % 2 == 0 ? #"{"HKWasUserEntered":true}"# : nil))
        }
        #expect(try await f.request("POST", "/v1/samples", token: f.appToken, body: "[" + body.joined(separator: ",") + "]").status == 201)
        let all = try await f.request("GET", "/v1/samples/bodyMass?ascending=true", token: f.appToken)
        #expect(all.header("transfer-encoding") == "chunked")
        #expect(try ServiceFixture.lines(all).compactMap { $0["value"] as? Double } == [70, 71, 72, 73, 74, 75, 76])
        let page = try ServiceFixture.lines(try await f.request("GET", "/v1/samples/bodyMass?limit=3", token: f.appToken))
        #expect(page.count == 4)
        #expect(page.prefix(3).compactMap { $0["value"] as? Double } == [76, 75, 74])
        let next = try #require(page.last?["next"] as? String)
        let rest = try ServiceFixture.lines(try await f.request("GET", "/v1/samples/bodyMass?after=\(next)", token: f.appToken))
        #expect(rest.compactMap { $0["value"] as? Double } == [73, 72, 71, 70])
        let filtered = try await f.request("GET", "/v1/samples/bodyMass?where=metadata.HKWasUserEntered%20%3D%20true%20and%20value%20%3E%2071.5%20kg",
                                           token: f.appToken)
        #expect(try ServiceFixture.lines(filtered).compactMap { $0["value"] as? Double } == [75, 73])
        let bad = try await f.request("GET", "/v1/samples/bodyMass?where=value%20%3E%201", token: f.appToken)
        #expect(bad.status == 422)
        let detail = try ServiceFixture.object(bad)["detail"] as? String
        #expect(detail == "column 10: bodyMass values have a unit: write one after 1 (kg or another unit of mass)")
        let misspelt = try await f.request("GET", "/v1/samples/bodyMass?limt=3", token: f.appToken)
        #expect(misspelt.status == 400)
        let cursor = try await f.request("GET", "/v1/samples/bodyMass?after=00000000-0000-4000-8000-000000000000", token: f.appToken)
        #expect(cursor.status == 422)
        #expect(try await f.request("GET", "/v1/samples/notAType", token: f.appToken).status == 422)
        try await f.stop()
    }

    @Test func latestStatisticsCharacteristicsAndAuthorization() async throws {
        let f = try await ServiceFixture()
        #expect(try await f.request("GET", "/v1/latest/bodyMass", token: f.appToken).status == 404)
        for (day, kg) in [(1, 70.0), (2, 72.0), (3, 71.0)] {
            #expect(try await f.request("POST", "/v1/samples", token: f.appToken,
                                        body: ServiceFixture.weight(kg, at: "2026-03-0\(day)T08:00:00Z")).status == 201)
        }
        let latest = try ServiceFixture.object(try await f.request("GET", "/v1/latest/bodyMass", token: f.appToken))
        #expect(latest["value"] as? Double == 71)
        #expect(latest["source"] as? String == "com.example.scale")
        let stats = try ServiceFixture.lines(try await f.request("GET", "/v1/statistics/bodyMass?options=average,min,max", token: f.appToken))
        #expect(stats.count == 1)
        let values = try #require(stats.first?["values"] as? [String: Any])
        #expect(values["min"] as? Double == 70 && values["max"] as? Double == 72)
        let days = try ServiceFixture.lines(try await f.request(
            "GET", "/v1/statistics/bodyMass?options=max&by=day&from=2026-03-01&to=2026-03-04&unit=g&tz=UTC", token: f.appToken))
        #expect(days.compactMap { ($0["values"] as? [String: Any])?["max"] as? Double } == [70_000, 72_000, 71_000])
        #expect(try await f.request("GET", "/v1/statistics/bodyMass?options=sum", token: f.appToken).status == 422)
        #expect(try await f.request("GET", "/v1/statistics/bodyMass?by=fortnight", token: f.appToken).status == 400)
        // Characteristics: the owner sets one; the app reads it only once allowed.
        try await f.owner.setCharacteristic(.bloodType(.oPositive))
        #expect(try ServiceFixture.object(try await f.request("GET", "/v1/characteristics", token: f.appToken)).isEmpty)
        #expect(try ServiceFixture.object(try await f.request("GET", "/v1/characteristics", token: f.ownerToken))["bloodType"] != nil)
        // Authorization: asking, then the status (never read permission).
        let status = try ServiceFixture.object(try await f.request("GET", "/v1/authorization/status?share=bodyMass,height&read=bloodType",
                                                                   token: f.appToken))
        #expect(status["requestStatus"] as? String == "shouldRequest")
        #expect((status["sharing"] as? [String: String])?["HKQuantityTypeIdentifierBodyMass"] == "sharingAuthorized")
        #expect((status["sharing"] as? [String: String])?["HKQuantityTypeIdentifierHeight"] == "notDetermined")
        let ask = try await f.request("POST", "/v1/authorization/request", token: f.appToken, body: #"{"share":["height"],"read":["bloodType"]}"#)
        #expect(ask.status == 200)
        try await f.owner.grantRequested(app: ServiceFixture.app.bundleIdentifier)
        let after = try ServiceFixture.object(try await f.request("GET", "/v1/authorization/status?share=height&read=bloodType", token: f.appToken))
        #expect(after["requestStatus"] as? String == "unnecessary")
        #expect(try ServiceFixture.object(try await f.request("GET", "/v1/characteristics", token: f.appToken))["bloodType"] as? String != nil)
        let correlation = try await f.request("POST", "/v1/authorization/request", token: f.appToken, body: #"{"share":["bloodPressure"]}"#)
        #expect(correlation.status == 403)
        try await f.stop()
    }

    @Test func aLongPollReturnsWithin100MillisecondsOfACommitByAnotherClient() async throws {
        let f = try await ServiceFixture()
        let first = try ServiceFixture.lines(try await f.request("GET", "/v1/changes/bodyMass", token: f.appToken))
        let anchor = try #require(first.last?["anchor"] as? String)
        // The two clients on threads of their own (the suite's other tests may hold the
        // shared pool): the instants are the server's and the clients' alone.
        let (saved, answer, started) = try await RawClient.onThread { () throws -> (RawClient.Response, RawClient.Response, Date) in
            let started = Date()
            let polled = Mutex<Result<RawClient.Response, any Error>?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                polled.withLock { $0 = Result { try f.requestBlocking("GET", "/v1/changes/bodyMass?wait=60&anchor=\(anchor)", token: f.appToken) } }
                done.signal()
            }.start()
            usleep(300_000)
            let saved = try f.requestBlocking("POST", "/v1/samples", token: f.otherToken, body: ServiceFixture.weight(81, at: "2026-03-01T08:00:00Z"))
            done.wait()
            return (saved, try polled.withLock { $0! }.get(), started)
        }
        #expect(saved.status == 201)
        let committed = saved.receivedAt, answered = answer.receivedAt
        let lines = try ServiceFixture.lines(answer)
        #expect(lines.count == 2)
        #expect(lines.first?["change"] as? String == "added")
        #expect(lines.last?["anchor"] as? String != anchor)
        #expect(answered.timeIntervalSince(committed) < 0.1, "answered \(answered.timeIntervalSince(committed)) s after the commit")
        #expect(answered.timeIntervalSince(started) > 0.25)
        // Nothing new: the poll ends at its deadline with no change and the same anchor.
        let quiet = try ServiceFixture.lines(try await f.request("GET", "/v1/changes/bodyMass?wait=0.2&anchor=\(lines.last!["anchor"]!)",
                                                                 token: f.appToken))
        #expect(quiet.count == 1)
        #expect(try await f.request("GET", "/v1/changes/bodyMass?wait=301", token: f.appToken).status == 400)
        #expect(try await f.request("GET", "/v1/changes/bodyMass?anchor=nonsense!", token: f.appToken).status == 422)
        try await f.stop()
    }

    @Test func tokensAreIssuedListedAndRevokedByTheOwner() async throws {
        let f = try await ServiceFixture()
        let created = try await f.request("POST", "/v1/tokens", token: f.ownerToken,
                                          body: #"{"app":"com.example.other","expires":"30d","name":"phone"}"#)
        #expect(created.status == 201)
        let o = try ServiceFixture.object(created)
        let token = try #require(o["token"] as? String)
        #expect(o["holder"] as? String == "com.example.other" && o["status"] as? String == "valid" && o["name"] as? String == "phone")
        #expect(try await f.request("GET", "/v1/characteristics", token: token).status == 200)
        let list = try ServiceFixture.lines(try await f.request("GET", "/v1/tokens", token: f.ownerToken))
        #expect(list.count == 4)
        #expect(!String(decoding: try JSONSerialization.data(withJSONObject: list), as: UTF8.self).contains(token))
        // An app that is not registered is not found (appNotRegistered, E1), as at every door.
        #expect(try await f.request("POST", "/v1/tokens", token: f.ownerToken, body: #"{"app":"com.example.nobody"}"#).status == 404)
        #expect(try await f.request("POST", "/v1/tokens", token: f.ownerToken, body: #"{"app":"x","owner":true}"#).status == 400)
        #expect(try await f.request("POST", "/v1/tokens", token: f.ownerToken, body: #"{"owner":true,"expires":"forever"}"#).status == 422)
        try await f.stop()
    }
}
