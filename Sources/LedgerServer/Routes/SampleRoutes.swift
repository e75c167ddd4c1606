import Foundation
import HealthLedger
import HealthModel
import LedgerHTTP
import LedgerReporting

extension LedgerService {
    /// `POST /v1/samples`: one sample or an array of them in `ingest`'s JSON form,
    /// saved all or nothing as the calling app → `201 {"uuids":[…]}` once durable.
    func saveSamples(_ call: Call) async throws -> HTTPResponse {
        try call.only([])
        let store = try await appStore(call)
        let body = try call.jsonBody()
        let zone = await owner.timeZone()
        var samples: [Sample] = []
        func read(_ value: JSONValue, _ label: String) throws {
            do {
                samples.append(try SampleJSONReader.sample(value, zone: zone))
            } catch let e as SampleJSONError {
                throw Problem.invalid("\(e.code): \(label)\(e.description.dropFirst(e.code.count + 2))")
            } catch {
                let p = Problem(error)
                throw Problem(p.status, p.code, "\(label)\(p.detail)", rule: p.rule)
            }
        }
        switch body {
        case .array(let items):
            guard !items.isEmpty else { throw Problem.invalid("emptyCall: the array holds no sample") }
            for (i, item) in items.enumerated() { try read(item, "samples[\(i)]: ") }
        default:
            try read(body, "")
        }
        try await store.save(samples)
        let uuids = JSONObject.array(samples.map { JSONObject.quote($0.uuid.uuidString) })
        return Self.json(201, "{\"uuids\":\(uuids)}")
    }

    /// `DELETE /v1/samples/{uuid}`: an app deletes what it saved (while it may share
    /// the type), the owner anything → 204.
    func deleteSample(_ call: Call) async throws -> HTTPResponse {
        try call.only(["reason"])
        guard let uuid = UUIDText.parse(call.params["uuid"] ?? "") else {
            throw Problem.usage("\(call.params["uuid"]?.prefix(40) ?? "") is not a UUID")
        }
        let reason = try call.query("reason")
        switch call.principal {
        case .owner: try await owner.delete([uuid], reason: reason)
        case .app: try await appStore(call).delete([uuid], reason: reason)
        }
        return HTTPResponse(status: 204)
    }

    /// `GET /v1/samples/{type}`: HKSampleQuery as JSON Lines, streamed page by page
    /// (each page recorded in the access log before it is sent); when `limit` cut the
    /// answer short, the last line is `{"next":"UUID"}` — pass it as `after`.
    func querySamples(_ call: Call) async throws -> HTTPResponse {
        try call.only(["from", "to", "strictStart", "strictEnd", "limit", "after", "sort", "ascending", "source", "where"])
        let type = try call.type()
        let zone = await owner.timeZone()
        let from = try call.date("from", zone: zone), to = try call.date("to", zone: zone)
        let strictStart = try call.bool("strictStart"), strictEnd = try call.bool("strictEnd")
        let limit = try call.int("limit", in: 0...Int(Int32.max), default: 0)
        var after: UUID?
        if let text = try call.query("after") {
            guard let u = UUIDText.parse(text) else { throw Problem.usage("after takes the UUID a page's next line gave") }
            after = u
        }
        let keys: [String: SampleSortKey] = ["start": .startDate, "end": .endDate, "duration": .workoutDuration,
                                             "energy": .workoutEnergy, "distance": .workoutDistance]
        let sortText = try call.query("sort") ?? "start"
        guard let key = keys[sortText] else { throw Problem.usage("sort takes start, end, duration, energy or distance") }
        if key.isWorkoutField && type != .workout { throw Problem.usage("sort \(sortText) applies to workouts only") }
        let sources = call.request.queryValues("source")
        let filter = try call.query("where").map { text -> SamplePredicate in
            do { return try SamplePredicate(parsing: text, for: type) } catch { throw Problem.invalid("\(error)") }
        }
        let predicate = from == nil && to == nil && !strictStart && !strictEnd ? nil
            : DatePredicate(start: from, end: to, strictStartDate: strictStart, strictEndDate: strictEnd)
        let query = SampleQuery(type: type, predicate: predicate, limit: limit, sort: [SampleSortDescriptor(key, ascending: try call.bool("ascending"))],
                                sources: sources.isEmpty ? nil : Set(sources), filter: filter)
        let pageSize = options.pageSize
        let owner = self.owner
        let store: HealthStore? = if case .app = call.principal { try await appStore(call) } else { nil }
        // Each page is written as JSON Lines while the ledger is read (plain samples
        // straight from their stored bytes): the same lines as writing its samples.
        let fetch: @Sendable (Int, UUID?) async throws -> SampleLinesPage = { size, cursor in
            var q = query
            q.limit = size
            if let store { return try await store.sampleLines(q, after: cursor) }
            return try await owner.sampleLines(q, after: cursor)
        }
        let types = [type.identifier]
        @Sendable func size(_ remaining: Int) -> Int { limit == 0 ? pageSize : min(pageSize, remaining) }
        let first: SampleLinesPage
        do { first = try await fetch(size(limit), after) } catch QueryError.invalidCursor(let text) {
            throw Problem.invalid("invalidCursor: after \(text) names no sample this query can see")
        }
        try await record(call, returned: first.count, status: 200, types: types)
        return HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/x-ndjson")]), body: .stream { writer in
            var page = first
            var remaining = limit == 0 ? Int.max : limit - first.count
            while true {
                // `next` is the engine's cursor: more exists after this page.
                guard let next = page.next, remaining > 0 else {
                    var bytes = page.lines
                    if let next = page.next { bytes += Array("{\"next\":\"\(next.uuidString)\"}\n".utf8) }
                    try await writer.write(bytes)
                    return
                }
                try await writer.write(page.lines)
                page = try await fetch(size(remaining), next)
                remaining -= page.count
                try await self.record(call, returned: page.count, status: 200, types: types)
            }
        })
    }

    /// `GET /v1/latest/{type}`: the tutorial's most recent sample (not in the future),
    /// as one JSON object; 404 when there is none the caller may see.
    func latestSample(_ call: Call) async throws -> HTTPResponse {
        try call.only([])
        let type = try call.type()
        let sample: Sample? = switch call.principal {
        case .owner: try await owner.mostRecentSample(for: type)
        case .app: try await appStore(call).mostRecentSample(for: type)
        }
        guard let sample else { throw Problem(404, "noData", "no sample of \(type.identifier) that this caller may see") }
        try await record(call, returned: 1, status: 200, types: [type.identifier])
        var bytes: [UInt8] = []
        SampleJSONWriter.append(sample, to: &bytes)
        bytes.append(10)
        return HTTPResponse(status: 200, contentType: "application/json", body: bytes)
    }
}
