import Foundation
import HealthModel
import LedgerChecksums
import LedgerReporting

/// Why a push is refused: one line naming where (`metrics[2].data[14]: …`).
public struct HealthAutoExportError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// A Health Auto Export push (`{"data":{"metrics":[…],"workouts":[…]}}`, its REST
/// automation's JSON) mapped to HealthKit samples.
///
/// Identity comes from content, so that the app's overlapping pushes (it resends the
/// previous day on every sync) are idempotent: each sample's UUID is derived from the
/// pushing app, the metric, its interval and its value, and it carries a sync
/// identifier derived from the app, the metric and the interval. The same point
/// again has the same UUID (the caller finds it stored: unchanged); a point whose value
/// changed (today's running total) has a new UUID and the same sync identifier with a
/// higher sync version (`pushedAt`), so it replaces the earlier one (rule E4).
///
/// A metric this table does not know is kept raw (an unrecognized sample,
/// `HealthAutoExport:<name>`, its point's JSON as the value), counted, never dropped.
public struct HealthAutoExportPayload: Sendable {
    /// Samples of HealthKit types, in push order.
    public private(set) var samples: [Sample] = []
    /// Points of metrics with no HealthKit type, kept raw.
    public private(set) var raw: [Sample] = []
    /// Points read, by metric name (known or not).
    public private(set) var points: [String: Int] = [:]
    /// Points kept raw, by metric name.
    public private(set) var unknownMetrics: [String: Int] = [:]
    public private(set) var workouts = 0

    /// The deepest a push may nest (it has four levels).
    static let maxDepth = 16

    /// Maps a push from `bundleIdentifier`. `pushedAt` (ms since the epoch) is the
    /// sync version of every sample: a later push's changed value replaces an earlier one.
    public init(json body: [UInt8], bundleIdentifier: String, pushedAt: Int64) throws {
        let root: JSONValue
        do { root = try JSONValue.parse(body[...]) } catch { throw HealthAutoExportError("invalidJSON: \(error)") }
        guard let data = root["data"], case .object = data else {
            throw HealthAutoExportError("notAHealthAutoExportPush: the body has no \"data\" object ({\"data\":{\"metrics\":[…]}})")
        }
        let context = Context(bundle: bundleIdentifier, version: pushedAt)
        if let metrics = data["metrics"] {
            guard case .array(let list) = metrics else { throw HealthAutoExportError("data.metrics: an array of metrics") }
            for (i, metric) in list.enumerated() { try read(metric: metric, at: "metrics[\(i)]", context) }
        }
        if let workouts = data["workouts"] {
            guard case .array(let list) = workouts else { throw HealthAutoExportError("data.workouts: an array of workouts") }
            for (i, w) in list.enumerated() { try read(workout: w, at: "workouts[\(i)]", context) }
        }
        // One push may name a point twice (the app resends within a push too): the
        // later wins, so one save never holds a sync identifier twice.
        var seen: [String: Int] = [:]
        var unique: [Sample] = []
        for s in samples {
            let key = (try? s.common.metadata.syncIdentity())??.identifier ?? s.uuid.uuidString
            if let i = seen[key] { unique[i] = s } else { seen[key] = unique.count; unique.append(s) }
        }
        samples = unique
        var rawSeen = Set<UUID>()
        raw = raw.filter { rawSeen.insert($0.uuid).inserted }
    }

    struct Context {
        let bundle: String
        let version: Int64
    }

    // MARK: Metrics

    private mutating func read(metric: JSONValue, at path: String, _ c: Context) throws {
        guard case .string(let name)? = metric["name"] else { throw HealthAutoExportError("\(path).name: a string") }
        let units: String? = if case .string(let u)? = metric["units"] { u } else { nil }
        guard case .array(let data)? = metric["data"] else { throw HealthAutoExportError("\(path).data: an array of points") }
        for (j, point) in data.enumerated() {
            let at = "\(path).data[\(j)]"
            guard case .object = point else { throw HealthAutoExportError("\(at): an object") }
            points[name, default: 0] += 1
            if let type = HealthAutoExportMetrics.quantities[name] {
                try quantity(type, name: name, units: units, point: point, at: at, c)
            } else if name == HealthAutoExportMetrics.heartRate {
                try heartRate(units: units, point: point, at: at, c)
            } else if name == HealthAutoExportMetrics.bloodPressure {
                try bloodPressure(units: units, point: point, at: at, c)
            } else if name == HealthAutoExportMetrics.sleep {
                try sleep(point: point, at: at, c)
            } else if name == HealthAutoExportMetrics.mindful {
                try mindful(point: point, at: at, c)
            } else {
                try keepRaw(name: name, units: units, point: point, at: at, c)
            }
        }
    }

    private mutating func quantity(_ type: QuantityType, name: String, units: String?, point: JSONValue, at: String, _ c: Context) throws {
        let date = try Self.date(point, "date", at)
        let value = try Self.number(point, "qty", at)
        let unit = try Self.unit(units, for: type, at)
        var metadata = Metadata()
        if type == .bloodGlucose, case .string(let meal)? = point["mealTime"] {
            switch meal {
            case "Before Meal": metadata.append("HKBloodGlucoseMealTime", .integer(1))
            case "After Meal": metadata.append("HKBloodGlucoseMealTime", .integer(2))
            default: break
            }
        }
        if type == .insulinDelivery, case .string(let reason)? = point["reason"] {
            metadata.append("HKInsulinDeliveryReason", .integer(reason == "Bolus" ? 2 : 1))
        }
        let quantity = try Self.model(at) { try Quantity(value, unit: unit) }
        samples.append(try Self.model(at) {
            .quantity(try QuantitySample(type: type, quantity: quantity, start: date, end: date,
                                         uuid: c.uuid(name, date, date, "\(value) \(unit)"),
                                         metadata: c.synced(metadata, name, date, date)))
        })
    }

    /// `{"date","Min","Avg","Max"}` (aggregated) or `{"date","qty"}`: one heart-rate
    /// sample of the average (or the value), the minimum and maximum kept in its
    /// metadata (`HealthAutoExportMin`, `HealthAutoExportMax`).
    private mutating func heartRate(units: String?, point: JSONValue, at: String, _ c: Context) throws {
        let date = try Self.date(point, "date", at)
        let unit = try Self.unit(units ?? "count/min", for: .heartRate, at)
        var metadata = Metadata()
        let value: Double
        if point["Avg"] != nil {
            value = try Self.number(point, "Avg", at)
            if point["Min"] != nil { metadata.append("HealthAutoExportMin", .number(try Self.number(point, "Min", at))) }
            if point["Max"] != nil { metadata.append("HealthAutoExportMax", .number(try Self.number(point, "Max", at))) }
        } else {
            value = try Self.number(point, "qty", at)
        }
        let quantity = try Self.model(at) { try Quantity(value, unit: unit) }
        samples.append(try Self.model(at) {
            .quantity(try QuantitySample(type: .heartRate, quantity: quantity, start: date, end: date,
                                         uuid: c.uuid("heart_rate", date, date, "\(value) \(unit) \(metadata)"),
                                         metadata: c.synced(metadata, "heart_rate", date, date)))
        })
    }

    /// `{"date","systolic","diastolic"}`: a blood-pressure correlation of the two.
    private mutating func bloodPressure(units: String?, point: JSONValue, at: String, _ c: Context) throws {
        let date = try Self.date(point, "date", at)
        let unit = try Self.unit(units ?? "mmHg", for: .bloodPressureSystolic, at)
        let sys = try Self.number(point, "systolic", at), dia = try Self.number(point, "diastolic", at)
        let content = "\(sys)/\(dia) \(unit)"
        samples.append(try Self.model(at) {
            let members = [
                try QuantitySample(type: .bloodPressureSystolic, quantity: try Quantity(sys, unit: unit), start: date, end: date,
                                   uuid: c.uuid("blood_pressure.systolic", date, date, content)),
                try QuantitySample(type: .bloodPressureDiastolic, quantity: try Quantity(dia, unit: unit), start: date, end: date,
                                   uuid: c.uuid("blood_pressure.diastolic", date, date, content)),
            ]
            return .correlation(try Correlation(type: .bloodPressure, start: date, end: date, objects: members,
                                                      uuid: c.uuid("blood_pressure", date, date, content),
                                                      metadata: c.synced(Metadata(), "blood_pressure", date, date)))
        })
    }

    /// Unaggregated `{"startDate","endDate","value":Core|Deep|REM|Awake|In Bed|Asleep}`:
    /// one sleepAnalysis sample. Aggregated `{"date","sleepStart","sleepEnd","inBedStart",
    /// "inBedEnd",…}`: an inBed and an asleep sample, the stage totals (hours) in the
    /// asleep one's metadata.
    private mutating func sleep(point: JSONValue, at: String, _ c: Context) throws {
        if point["startDate"] != nil {
            let start = try Self.date(point, "startDate", at), end = try Self.date(point, "endDate", at)
            guard case .string(let stage)? = point["value"], let value = HealthAutoExportMetrics.sleepStages[stage.lowercased()] else {
                throw HealthAutoExportError("\(at).value: a sleep stage (Core, Deep, REM, Awake, In Bed, Asleep)")
            }
            try category(.sleepAnalysis, value, "sleep_analysis", start, end, Metadata(), at, c)
            return
        }
        var stages = Metadata()
        for key in ["totalSleep", "asleep", "core", "deep", "rem", "awake", "inBed"] where point[key] != nil {
            stages.append("HealthAutoExport" + key.prefix(1).uppercased() + key.dropFirst(), .number(try Self.number(point, key, at)))
        }
        if point["inBedStart"] != nil {
            try category(.sleepAnalysis, "inBed", "sleep_analysis.inBed", try Self.date(point, "inBedStart", at),
                         try Self.date(point, "inBedEnd", at), Metadata(), at, c)
        }
        if point["sleepStart"] != nil {
            try category(.sleepAnalysis, "asleepUnspecified", "sleep_analysis.asleep", try Self.date(point, "sleepStart", at),
                         try Self.date(point, "sleepEnd", at), stages, at, c)
        }
    }

    /// `{"date","qty"}` in minutes: a mindful session from `date`.
    private mutating func mindful(point: JSONValue, at: String, _ c: Context) throws {
        let start = try Self.date(point, "date", at)
        let minutes = try Self.number(point, "qty", at)
        guard minutes >= 0, minutes <= 24 * 60 else { throw HealthAutoExportError("\(at).qty: minutes in 0…1440") }
        try category(.mindfulSession, "0", "mindful_minutes", start, start.addingTimeInterval(minutes * 60), Metadata(), at, c)
    }

    private mutating func category(_ type: CategoryType, _ valueName: String, _ metric: String, _ start: Date, _ end: Date,
                                   _ metadata: Metadata, _ at: String, _ c: Context) throws {
        samples.append(try Self.model(at) {
            .category(try CategorySample(type: type, value: try type.value(named: valueName), start: start, end: end,
                                         uuid: c.uuid(metric, start, end, "\(valueName) \(metadata)"),
                                         metadata: c.synced(metadata, metric, start, end)))
        })
    }

    /// A point of a metric with no HealthKit type: an unrecognized sample whose value
    /// is the point's JSON exactly as read (its members in order).
    private mutating func keepRaw(name: String, units: String?, point: JSONValue, at: String, _ c: Context) throws {
        let start = (try? Self.date(point, "date", at)) ?? (try? Self.date(point, "startDate", at))
        guard let start else { throw HealthAutoExportError("\(at): a point needs \"date\" (or \"startDate\")") }
        let end = (try? Self.date(point, "endDate", at)) ?? start
        let text = Self.json(point)
        unknownMetrics[name, default: 0] += 1
        raw.append(try Self.model(at) {
            let common = try SampleCommon(uuid: c.uuid("raw." + name, start, end, text), startDate: start, endDate: end)
            return .unrecognized(UnrecognizedSample(typeIdentifier: "HealthAutoExport:" + name, value: text, unit: units,
                                                    reason: "a Health Auto Export metric with no HealthKit type", common: common))
        })
    }

    // MARK: Workouts

    /// `{"id","name","start","end","duration","activeEnergyBurned":{"qty","units"},
    /// "distance":{"qty","units"},"location"|"isIndoor"}`: a workout (version 2 of its
    /// format). Its `id`, when a UUID, is the workout's.
    private mutating func read(workout w: JSONValue, at: String, _ c: Context) throws {
        guard case .string(let name)? = w["name"] else { throw HealthAutoExportError("\(at).name: a string") }
        let start = try Self.date(w, "start", at), end = try Self.date(w, "end", at)
        let activity = HealthAutoExportMetrics.workouts[name.lowercased()] ?? .other
        var metadata = Metadata()
        if activity == .other { metadata.append("HKWorkoutBrandName", .string(name)) }
        if case .bool(let indoor)? = w["isIndoor"] {
            metadata.append("HKIndoorWorkout", .bool(indoor))
        } else if case .string(let location)? = w["location"] {
            metadata.append("HKIndoorWorkout", .bool(location == "Indoor" || location == "Pool"))
        }
        func measure(_ key: String) throws -> Quantity? {
            guard let m = w[key] else { return nil }
            guard case .string(let units)? = m["units"] else { throw HealthAutoExportError("\(at).\(key).units: a string") }
            let value = try Self.number(m, "qty", "\(at).\(key)")
            return try Self.model("\(at).\(key)") { try Quantity(value, unit: try Self.parsedUnit(units, "\(at).\(key)")) }
        }
        let energy = try measure("activeEnergyBurned") ?? measure("activeEnergy")
        let distance = try measure("distance")
        var duration: Double?
        if w["duration"] != nil { duration = try Self.number(w, "duration", at) }
        var uuid = c.uuid("workout." + name, start, end, "\(duration ?? 0)")
        if case .string(let id)? = w["id"], let given = UUIDText.parse(id) { uuid = given }
        workouts += 1
        points["workouts", default: 0] += 1
        samples.append(try Self.model(at) {
            .workout(try Workout(activityType: activity, start: start, end: end, duration: duration, totalEnergyBurned: energy,
                                 totalDistance: distance, uuid: uuid, metadata: c.synced(metadata, "workout." + name, start, end)))
        })
    }

    // MARK: Fields

    /// Its dates: `yyyy-MM-dd HH:mm:ss Z` (`2024-02-06 07:00:00 -0800`), also ISO 8601,
    /// or a day alone (`yyyy-MM-dd`, read in UTC).
    static func date(_ object: JSONValue, _ key: String, _ at: String) throws -> Date {
        guard case .string(let text)? = object[key] else { throw HealthAutoExportError("\(at).\(key): a date string") }
        var iso = text
        let parts = text.split(separator: " ")
        if parts.count == 3, let zone = parts.last, zone.count == 5, zone.first == "+" || zone.first == "-" {
            iso = "\(parts[0])T\(parts[1])\(zone.prefix(3)):\(zone.suffix(2))"
        }
        do { return try ISO8601.parse(iso) } catch { throw HealthAutoExportError("\(at).\(key): '\(text.prefix(40))' is not a date (yyyy-MM-dd HH:mm:ss Z)") }
    }

    static func number(_ object: JSONValue, _ key: String, _ at: String) throws -> Double {
        guard case .number(let v, _)? = object[key] else { throw HealthAutoExportError("\(at).\(key): a number") }
        return v
    }

    static func parsedUnit(_ text: String, _ at: String) throws -> String {
        // Health Auto Export writes a few units its own way.
        let spelled: [String: String] = ["bpm": "count/min", "steps": "count", "kcal": "kcal", "hr": "hr", "%": "%",
                                         "degC": "degC", "degF": "degF", "count/min": "count/min", "breaths/min": "count/min"]
        let unit = spelled[text] ?? text
        do { _ = try HealthUnit(unit) } catch { throw HealthAutoExportError("\(at): unit '\(text.prefix(40))' is not a unit") }
        return unit
    }

    static func unit(_ units: String?, for type: QuantityType, _ at: String) throws -> String {
        guard let units else { return type.canonicalUnit.canonicalString }
        let unit = try parsedUnit(units, at)
        guard (try HealthUnit(unit)).isCompatible(with: type.canonicalUnit) else {
            throw HealthAutoExportError("\(at): unit '\(units.prefix(40))' does not fit \(type.shortName)")
        }
        return unit
    }

    /// Runs a model constructor, naming the point when the model refuses the value.
    static func model<T>(_ at: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as HealthAutoExportError { throw e } catch { throw HealthAutoExportError("\(at): \(error)") }
    }

    /// A JSON value's text, members in order (the raw record of an unknown metric).
    static func json(_ v: JSONValue) -> String {
        switch v {
        case .object(let members): "{" + members.map { "\(JSONObject.quote($0.0)):\(json($0.1))" }.joined(separator: ",") + "}"
        case .array(let items): "[" + items.map(json).joined(separator: ",") + "]"
        case .string(let s): JSONObject.quote(s)
        case .number(_, let text): text
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        }
    }
}

extension HealthAutoExportPayload.Context {
    /// A UUID from SHA-256 of the app, the metric, the interval and the content, with
    /// RFC 4122's version 8 (custom) and variant bits.
    func uuid(_ metric: String, _ start: Date, _ end: Date, _ content: String) -> UUID {
        var bytes = SHA256.hash(Array("healthledger-hae-v1\u{0}\(bundle)\u{0}\(metric)\u{0}\(ISO8601.string(start))\u{0}\(ISO8601.string(end))\u{0}\(content)".utf8)).array
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// `metadata` with the point's sync identity: the app, metric and interval, at the
    /// push's version.
    func synced(_ metadata: Metadata, _ metric: String, _ start: Date, _ end: Date) -> Metadata {
        var m = metadata
        m.append(Metadata.WellKnownKey.syncIdentifier, .string("hae:\(metric):\(ISO8601.string(start)):\(ISO8601.string(end))"))
        m.append(Metadata.WellKnownKey.syncVersion, .integer(version))
        return m
    }
}
