import Foundation
import HealthModel
import LedgerCore

/// Statistics as JSON lines, one per bucket (or one for an HKStatisticsQuery):
/// `{"start","end","type","unit","values":{"sum":…},"sources":{…}}`, or
/// `{"start","end","type","unit","empty":true}` for a bucket with no samples. Dates
/// are local to `zone` with their offset; values in `unit`.
package struct StatisticsJSON: Sendable {
    package let type: QuantityType
    package let options: StatisticsOptions
    package let unit: HealthUnit
    package let zone: TimeZone

    /// The options as names, in this order: `sum`, `average`, `min`, `max`,
    /// `mostRecent`, `duration`.
    package static let names: [(String, StatisticsOptions)] = [
        ("sum", .cumulativeSum), ("average", .discreteAverage), ("min", .discreteMin), ("max", .discreteMax),
        ("mostRecent", .mostRecent), ("duration", .duration),
    ]

    package init(type: QuantityType, options: StatisticsOptions, unit: HealthUnit, zone: TimeZone) {
        self.type = type
        self.options = options
        self.unit = unit
        self.zone = zone
    }

    /// The computed columns with their values in `unit` (duration in seconds).
    package func values(_ v: StatisticsValues) throws -> [(String, Double?)] {
        func convert(_ x: Double?) throws -> Double? { try x.map { try Quantity($0, type.canonicalUnit).doubleValue(for: unit) } }
        return try Self.names.filter { options.contains($0.1) }.map { name, option in
            switch option {
            case .cumulativeSum: (name, try convert(v.sum))
            case .discreteAverage: (name, try convert(v.average))
            case .discreteMin: (name, try convert(v.minimum))
            case .discreteMax: (name, try convert(v.maximum))
            case .mostRecent: (name, try convert(v.mostRecent))
            default: (name, v.duration)
            }
        }
    }

    func object(_ v: StatisticsValues) throws -> JSONObject {
        var o = JSONObject()
        for (name, value) in try values(v) { o.set(name, value) }
        if options.contains(.mostRecent), let i = v.mostRecentInterval {
            o.set("mostRecentStart", Self.local(i.start, zone))
            o.set("mostRecentEnd", Self.local(i.end, zone))
        }
        return o
    }

    /// One bucket's line.
    package func line(_ s: Statistics) throws -> String {
        var o = JSONObject()
        o.set("start", Self.local(s.startDate, zone))
        o.set("end", Self.local(s.endDate, zone))
        o.set("type", type.shortName)
        o.set("unit", unit.canonicalString)
        if s.isEmpty {
            o.set("empty", true)
        } else {
            o.setRaw("values", try object(s.values).string)
            if options.contains(.separateBySource) {
                var by = JSONObject()
                for source in s.sources { by.set(source, try object(s.valuesBySource[source]!)) }
                o.set("sources", by)
            }
        }
        return o.string
    }

    /// `2025-06-01T00:00:00+02:00`: a date in a zone.
    package static func local(_ date: Date, _ zone: TimeZone) -> String {
        let offset = zone.secondsFromGMT(for: date)
        var text = ISO8601.string(date.addingTimeInterval(Double(offset)))
        text.removeLast()  // the Z
        let sign = offset < 0 ? "-" : "+"
        let a = abs(offset)
        return text + sign + ISO8601.pad(a / 3600, 2) + ":" + ISO8601.pad(a / 60 % 60, 2)
    }
}
