import Foundation
import HealthModel
import LedgerCore

/// Samples, metadata and devices as JSON for people and `jq` (`query --json`,
/// `log --json`). Every sample has at least `uuid`, `type`, `value`, `unit`,
/// `start`, `end`, `source`.
package enum SampleJSON {
    package static func object(_ sample: Sample) -> JSONObject {
        var o = JSONObject()
        let c = sample.common
        o.set("uuid", c.uuid.uuidString)
        o.set("type", sample.type.rawValue)
        switch sample {
        case .quantity(let s):
            o.set("kind", "quantity")
            o.set("value", s.quantity.value)
            o.set("unit", s.quantity.unit.spelling)
        case .category(let s):
            o.set("kind", "category")
            o.set("value", s.value)
            o.set("unit", nil as String?)
            o.set("valueName", s.type.rawName(of: s.value))
        case .correlation(let s):
            o.set("kind", "correlation")
            o.set("value", nil as String?)
            o.set("unit", nil as String?)
            o.setRaw("objects", JSONObject.array(s.objects.map { object(.quantity($0)).string }))
        case .workout(let s):
            o.set("kind", "workout")
            o.set("value", s.duration)
            o.set("unit", "s")
            o.set("activityType", s.activityType.identifier)
            o.set("duration", s.duration)
            o.setRaw("totalEnergyBurned", quantity(s.totalEnergyBurned))
            o.setRaw("totalDistance", quantity(s.totalDistance))
            o.setRaw("events", JSONObject.array(s.events.map(event)))
            if !s.statistics.isEmpty {
                o.setRaw("statistics", JSONObject.array(s.statistics.map { st in
                    var j = JSONObject()
                    j.set("type", st.type.rawValue)
                    j.set("start", ISO8601.string(st.startDate))
                    j.set("end", ISO8601.string(st.endDate))
                    j.set("average", st.average)
                    j.set("minimum", st.minimum)
                    j.set("maximum", st.maximum)
                    j.set("sum", st.sum)
                    j.set("unit", st.unit)
                    return j.string
                }))
            }
            if !s.activities.isEmpty {
                o.setRaw("activities", JSONObject.array(s.activities.map { activity($0).string }))
            }
            if !s.routes.isEmpty {
                o.setRaw("routes", JSONObject.array(s.routes.map { r in
                    var j = JSONObject()
                    j.set("fileReference", r.fileReference)
                    j.set("sourceName", r.sourceName)
                    j.set("locations", r.locations.count)
                    return j.string
                }))
            }
        case .unrecognized(let s):
            o.set("kind", "unrecognized")
            o.set("value", s.value)
            o.set("unit", s.unit)
        }
        o.set("start", ISO8601.string(c.startDate))
        o.set("end", ISO8601.string(c.endDate))
        o.set("source", c.source?.bundleIdentifier)
        if let version = c.source?.version { o.set("sourceVersion", version) }
        if let creation = c.creationDate { o.set("creationDate", ISO8601.string(creation)) }
        if let device = c.device { o.setRaw("device", self.device(device)) }
        if !c.metadata.isEmpty { o.setRaw("metadata", metadata(c.metadata)) }
        return o
    }

    /// A workout activity (HKWorkoutActivity): `uuid`, `activityType`, `start`,
    /// `end`, `duration` (s), then `events` and `metadata` when it has any.
    package static func activity(_ a: WorkoutActivity) -> JSONObject {
        var j = JSONObject()
        j.set("uuid", a.uuid.uuidString)
        j.set("activityType", a.activityType.identifier)
        j.set("start", ISO8601.string(a.startDate))
        j.set("end", ISO8601.string(a.endDate))
        j.set("duration", a.duration)
        if !a.events.isEmpty { j.setRaw("events", JSONObject.array(a.events.map(event))) }
        if !a.metadata.isEmpty { j.setRaw("metadata", metadata(a.metadata)) }
        return j
    }

    static func event(_ e: WorkoutEvent) -> String {
        var j = JSONObject()
        j.set("type", e.kind.identifier)
        j.set("date", ISO8601.string(e.date))
        j.set("duration", e.duration)
        if !e.metadata.isEmpty { j.setRaw("metadata", metadata(e.metadata)) }
        return j.string
    }

    static func quantity(_ q: Quantity?) -> String {
        guard let q else { return "null" }
        var j = JSONObject()
        j.set("value", q.value)
        j.set("unit", q.unit.spelling)
        return j.string
    }

    /// Metadata as an object, keys verbatim and in order (a repeated key repeats).
    package static func metadata(_ m: Metadata) -> String {
        var o = JSONObject()
        for entry in m {
            switch entry.value {
            case .string(let s): o.set(entry.key, s)
            case .integer(let i): o.set(entry.key, i)
            case .number(let d): o.set(entry.key, d)
            case .bool(let b): o.set(entry.key, b)
            case .date(let d): o.set(entry.key, ISO8601.string(d))
            case .quantity(let q): o.setRaw(entry.key, quantity(q))
            }
        }
        return o.string
    }

    /// A device as one JSON object of the fields it has (what `query --json` writes;
    /// `export fhir` hashes it into the Device's id).
    package static func device(_ d: Device) -> String {
        var o = JSONObject()
        let names = ["name", "manufacturer", "model", "hardwareVersion", "firmwareVersion", "softwareVersion",
                     "localIdentifier", "udiDeviceIdentifier"]
        for (name, value) in zip(names, d.fields) where value != nil { o.set(name, value) }
        return o.string
    }
}
