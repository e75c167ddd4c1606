import Foundation
import HealthLedger
import HealthModel
import HealthReport
import LedgerHTTP
import LedgerReporting

extension LedgerService {
    /// `GET /v1/statistics/{type}`: HKStatisticsQuery, or with `by` an
    /// HKStatisticsCollectionQuery: the CLI's options as parameters (`options=sum,average,
    /// min,max,mostRecent,duration`, `separateBySource`, `by`, `every`, `anchor`, `from`,
    /// `to`, `where`, `unit`, `tz`). JSON Lines, one per bucket (empty buckets too).
    func statistics(_ call: Call) async throws -> HTTPResponse {
        try call.only(["options", "separateBySource", "by", "every", "anchor", "from", "to", "where", "unit", "tz"])
        let type = try call.quantityType()
        var options: StatisticsOptions = []
        for name in (try call.query("options") ?? "").split(separator: ",") {
            guard let option = StatisticsJSON.names.first(where: { $0.0 == name })?.1 else {
                throw Problem.usage("options takes sum, average, min, max, mostRecent or duration, not '\(name.prefix(40))'")
            }
            options.insert(option)
        }
        if try call.bool("separateBySource") { options.insert(.separateBySource) }
        if options.subtracting(.separateBySource).isEmpty {
            options.insert(type.aggregationStyle == .cumulative ? .cumulativeSum : .discreteAverage)
        }
        var zone = await owner.timeZone()
        if let tz = try call.query("tz") {
            guard let z = TimeZone(identifier: tz) else { throw Problem.invalid("invalidTimeZone: tz '\(tz.prefix(40))' is not an IANA zone") }
            zone = z
        }
        let unit: HealthUnit
        do { unit = try (try call.query("unit")).map { try HealthUnit($0) } ?? type.canonicalUnit } catch { throw Problem(error) }
        guard unit.isCompatible(with: type.canonicalUnit) else {
            throw Problem.invalid("incompatibleUnits: unit \(unit.canonicalString) does not convert to \(type.shortName)'s \(type.canonicalUnit.canonicalString)")
        }
        let from = try call.date("from", zone: zone), to = try call.date("to", zone: zone)
        if let from, let to, to < from { throw Problem.usage("to is before from") }
        let predicate = from == nil && to == nil ? nil : DatePredicate(start: from, end: to)
        let filter = try call.query("where").map { text -> SamplePredicate in
            do { return try SamplePredicate(parsing: text, for: .quantity(type)) } catch { throw Problem.invalid("\(error)") }
        }
        let printer = StatisticsJSON(type: type, options: options, unit: unit, zone: zone)
        var lines: [String] = []
        if let byText = try call.query("by") {
            guard let u = StatisticsInterval.Unit(rawValue: byText) else { throw Problem.usage("by takes minute, hour, day, week, month or year") }
            let interval: StatisticsInterval
            do { interval = try StatisticsInterval(u, count: try call.int("every", in: 1...100_000, default: 1)) } catch let p as Problem { throw p } catch {
                throw Problem.usage("every: \(error)")
            }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let anchor = try call.date("anchor", zone: zone)
                ?? calendar.date(from: DateComponents(year: 2000, month: 1, day: u == .week ? 3 : 1))!
            let collection = switch call.principal {
            case .owner: try await owner.statisticsCollection(for: type, predicate: predicate, filter: filter, options: options,
                                                              anchor: anchor, interval: interval, timeZone: zone)
            case .app: try await appStore(call).statisticsCollection(for: type, predicate: predicate, filter: filter, options: options,
                                                                     anchor: anchor, interval: interval, timeZone: zone)
            }
            let filled = collection.statistics()
            if let first = filled.first, let last = filled.last {
                try collection.enumerateStatistics(from: from ?? first.startDate, to: to ?? last.endDate) { lines.append(try printer.line($0)) }
            } else if let from, let to {
                try collection.enumerateStatistics(from: from, to: to) { lines.append(try printer.line($0)) }
            }
        } else {
            if try call.query("every") != nil || call.query("anchor") != nil { throw Problem.usage("every and anchor go with by") }
            let s = switch call.principal {
            case .owner: try await owner.statistics(for: type, predicate: predicate, filter: filter, options: options)
            case .app: try await appStore(call).statistics(for: type, predicate: predicate, filter: filter, options: options)
            }
            lines.append(try printer.line(s))
        }
        try await record(call, returned: lines.count, status: 200, types: [type.identifier])
        return Self.jsonLines(Array(lines.map { $0 + "\n" }.joined().utf8))
    }

    /// `GET /v1/changes/{type}`: the anchored change feed as JSON Lines, the new anchor
    /// last (`{"anchor":…}`); with `wait=SECONDS` a long poll that returns as soon as a
    /// commit brings a change the caller may see.
    func changes(_ call: Call) async throws -> HTTPResponse {
        try call.only(["anchor", "limit", "wait", "where"])
        let type = try call.type()
        let anchor: ChangeAnchor?
        do { anchor = try (try call.query("anchor")).map { try ChangeAnchor(text: $0) } } catch let p as Problem { throw p } catch { throw Problem(error) }
        let limit = try call.int("limit", in: 0...1_000_000, default: 0)
        let wait = try call.seconds("wait", in: 0...options.longPollMaxSeconds, default: 0)
        let predicate = try call.query("where").map { text -> SamplePredicate in
            do { return try SamplePredicate(parsing: text, for: type) } catch { throw Problem.invalid("\(error)") }
        }
        let set: ChangeSet = switch call.principal {
        case .owner: try await owner.anchoredObjects(of: [type], predicate: predicate, anchor: anchor, limit: limit, waitingUpTo: wait)
        case .app: try await appStore(call).anchoredObjects(of: [type], predicate: predicate, anchor: anchor, limit: limit, waitingUpTo: wait)
        }
        try await record(call, returned: set.changes.count, status: 200, types: [type.identifier])
        var bytes: [UInt8] = []
        for change in set.changes {
            ChangeJSON.append(change, to: &bytes)
            bytes.append(10)
        }
        bytes += Array((ChangeJSON.anchor(set.newAnchor) + "\n").utf8)
        return Self.jsonLines(bytes)
    }

    /// `GET /v1/characteristics`: the characteristics the caller may read (an app: those
    /// the owner let it read; the owner: all set), as one object.
    func characteristics(_ call: Call) async throws -> HTTPResponse {
        try call.only([])
        var o = JSONObject()
        var count = 0
        for type in CharacteristicType.allCases {
            let value: CharacteristicValue? = switch call.principal {
            case .owner: await owner.characteristic(type)
            case .app: try await appStore(call).characteristic(type)
            }
            if let value {
                o.set(type.shortName, value.description)
                count += 1
            }
        }
        try await record(call, returned: count, status: 200, types: CharacteristicType.allCases.map { ObjectType.characteristic($0).identifier })
        return Self.json(200, o.string)
    }

    /// `GET /v1/report`: the owner's HTML health and audit report.
    func report(_ call: Call) async throws -> HTTPResponse {
        try call.only(["from", "to", "locale"])
        let zone = await owner.timeZone()
        let locale = try call.query("locale") ?? "en_US"
        guard !locale.isEmpty, locale.utf8.count <= 64,
              locale.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) else {
            throw Problem.invalid("invalidLocale: locale '\(locale.prefix(40))' is not a locale identifier")
        }
        let options = ReportOptions(from: try call.date("from", zone: zone), to: try call.date("to", zone: zone), timeZone: zone,
                                    locale: Locale(identifier: locale), now: Date(), command: "GET \(call.request.target)", fullVerify: false)
        let html = ReportHTML.render(try await ReportGatherer.gather(.owner(owner), options: options))
        try await record(call, returned: 1, status: 200, types: [])
        return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: Array(html.utf8))
    }
}
