import Foundation
import HealthModel

/// Why a JSON sample is refused: one line, starting with its code
/// (`unknownField: …`, `wrongType: …`, `invalidDate: …`).
package struct SampleJSONError: Error, Sendable, Equatable, CustomStringConvertible {
    package let description: String

    package init(_ description: String) { self.description = description }

    /// The code before the first colon.
    package var code: String { String(description.prefix { $0 != ":" }) }
}

/// Samples from JSON in `ingest`'s form, one object each: `{"type", "value",
/// "unit", "start", "end", "uuid", "metadata", "device"}` — what `ingest` reads line
/// by line and the server's `POST /v1/samples` reads (one object or an array).
///
/// Every field is checked for its JSON type; a field of the wrong type is refused as
/// such (never taken for a missing one), an unknown field is refused, and nothing
/// given is dropped.
package enum SampleJSONReader {
    package static let fields = ["type", "value", "unit", "start", "end", "uuid", "metadata", "device"]

    /// The fields of a device object.
    package static let deviceFields = ["name", "manufacturer", "model", "hardwareVersion", "firmwareVersion", "softwareVersion",
                                       "localIdentifier", "udiDeviceIdentifier"]

    package static func wrongType(_ field: String, _ expected: String, _ got: JSONValue) -> SampleJSONError {
        SampleJSONError("wrongType: \(field) must be \(expected), not \(got.kindName)")
    }

    package static func missing(_ field: String, _ why: String = "") -> SampleJSONError {
        SampleJSONError("missingField: \"\(field)\"\(why)")
    }

    /// A string field: nil when absent; wrong type refused.
    package static func string(_ object: JSONValue, _ field: String) throws -> String? {
        guard let v = object[field] else { return nil }
        guard case .string(let s) = v else { throw wrongType("\"\(field)\"", "a string", v) }
        return s
    }

    /// An ISO 8601 date or date-time; with `zone`, a date alone is the start of that
    /// day in the zone (the owner's day).
    package static func date(_ text: String, _ what: String, zone: TimeZone?) throws -> Date {
        do throws(HealthModelError) {
            if let zone { return try ISO8601.parse(text, dayStartIn: zone) }
            return try ISO8601.parse(text)
        } catch {
            guard case .invalidDate(let shown, let reason) = error else { throw error }
            throw SampleJSONError("invalidDate: \(what) '\(shown)' \(reason)")
        }
    }

    /// A quantity or category sample from its value's text (a number for a quantity, a
    /// value name or number for a category).
    package static func sample(type: ObjectType, value: String, unit: String?, start: Date, end: Date, uuid: UUID,
                               metadata: Metadata, device: Device? = nil) throws -> Sample {
        switch type {
        case .quantity(let q):
            guard let unit else { throw missing("unit", " (a quantity type needs one)") }
            guard let v = Double(value) else { throw SampleJSONError("invalidValue: value '\(value)' is not a number") }
            guard v.isFinite else { throw HealthModelError.nonFiniteValue(field: "value") }
            return .quantity(try QuantitySample(type: q, quantity: try Quantity(v, unit: unit), start: start, end: end, uuid: uuid,
                                                metadata: metadata, device: device))
        case .category(let c):
            return .category(try CategorySample(type: c, value: try c.value(named: value), start: start, end: end, uuid: uuid,
                                                metadata: metadata, device: device))
        default:
            throw SampleJSONError("wrongKindOfType: save takes quantity and category types (use `workout save` for workouts)")
        }
    }

    /// A sample from one JSON object. With `zone`, a date alone is the start of that
    /// day there (the owner's day).
    package static func sample(_ value: JSONValue, zone: TimeZone? = nil) throws -> Sample {
        guard case .object(let members) = value else { throw wrongType("a line", "a JSON object", value) }
        for (name, _) in members where !fields.contains(name) {
            throw SampleJSONError("unknownField: \"\(name)\" (fields: \(fields.joined(separator: ", ")))")
        }
        guard let typeText = try string(value, "type") else { throw missing("type") }
        let type = try ObjectType(identifier: typeText)
        guard let startText = try string(value, "start") else { throw missing("start") }
        let start = try date(startText, "start", zone: zone)
        let end = try string(value, "end").map { try date($0, "end", zone: zone) } ?? start
        // A new UUID only when the line names none (making one reads /dev/urandom).
        let uuid: UUID
        if let t = try string(value, "uuid") {
            guard let parsed = UUIDText.parse(t) else { throw SampleJSONError("invalidUUID: \"uuid\" '\(t)'") }
            uuid = parsed
        } else {
            uuid = UUID()
        }
        let metadata = try self.metadata(value["metadata"])
        let device = try self.device(value["device"])
        let unit = try string(value, "unit")
        let valueText: String
        switch (type, value["value"]) {
        case (_, nil):
            throw missing("value")
        case (.quantity, .number(_, let text)?):
            valueText = text
            guard unit != nil else { throw missing("unit", " (a quantity type needs one)") }
        case (.quantity(let q), let v?):
            throw wrongType("\"value\"", "a number for \(q.identifier)", v)
        case (.category(let c), .number(_, let text)?):
            guard unit == nil else { throw SampleJSONError("unexpectedField: \"unit\" is for quantity types; \(c.identifier) is a category type") }
            guard !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) else {
                throw SampleJSONError("invalidCategoryValue: \"value\" \(text) is not a whole number (\(c.identifier))")
            }
            valueText = text
        case (.category(let c), .string(let s)?):
            guard unit == nil else { throw SampleJSONError("unexpectedField: \"unit\" is for quantity types; \(c.identifier) is a category type") }
            guard Int(s) == nil, Double(s)?.isFinite != true else {
                throw SampleJSONError("wrongType: \"value\" \"\(s)\" is a number in a string; give a value name or a JSON number (\(c.identifier))")
            }
            valueText = s
        case (.category(let c), let v?):
            throw wrongType("\"value\"", "a value name or a number for \(c.identifier)", v)
        default:
            throw SampleJSONError("wrongKindOfType: ingest takes quantity and category types, not \(type.identifier)")
        }
        return try sample(type: type, value: valueText, unit: unit, start: start, end: end, uuid: uuid, metadata: metadata, device: device)
    }

    /// `metadata`: an object of strings, numbers and booleans. A whole number is kept
    /// as an integer when it fits Int64; the sync identity must be a string and an
    /// integer written as one (`HKMetadataKeySyncVersion: 3`, not `"3"` or `3.0`), both
    /// or neither.
    package static func metadata(_ value: JSONValue?) throws -> Metadata {
        var metadata = Metadata()
        guard let value else { return metadata }
        guard case .object(let members) = value else { throw wrongType("\"metadata\"", "an object", value) }
        for (k, v) in members {
            switch v {
            case .string(let s): metadata.append(k, .string(s))
            case .number(let d, let text): metadata.append(k, Int64(text).map(MetadataValue.integer) ?? .number(d))
            case .bool(let b): metadata.append(k, .bool(b))
            default: throw wrongType("metadata \"\(k)\"", "a string, number or boolean", v)
            }
        }
        let id = Metadata.WellKnownKey.syncIdentifier, version = Metadata.WellKnownKey.syncVersion
        switch (value[id], value[version]) {
        case (nil, nil): break
        case (.string?, .number(_, let text)?):
            guard Int64(text) != nil else {
                throw SampleJSONError("invalidSyncVersion: metadata \"\(version)\" must be a whole number in the 64-bit range, not \(text)")
            }
        case (_?, nil): throw missing("metadata \"\(version)\"", " (\(id) needs it)")
        case (nil, _?): throw missing("metadata \"\(id)\"", " (\(version) needs it)")
        case (.string?, let v?): throw wrongType("metadata \"\(version)\"", "a whole number", v)
        case (let v?, _): throw wrongType("metadata \"\(id)\"", "a string", v)
        }
        return metadata
    }

    /// `device`: an object of the known device fields, each a string.
    package static func device(_ value: JSONValue?) throws -> Device? {
        guard let value else { return nil }
        guard case .object(let members) = value else { throw wrongType("\"device\"", "an object", value) }
        var d = Device()
        for (k, v) in members {
            guard deviceFields.contains(k) else {
                throw SampleJSONError("unknownField: device \"\(k)\" (fields: \(deviceFields.joined(separator: ", ")))")
            }
            guard case .string(let s) = v else { throw wrongType("device \"\(k)\"", "a string", v) }
            switch k {
            case "name": d.name = s
            case "manufacturer": d.manufacturer = s
            case "model": d.model = s
            case "hardwareVersion": d.hardwareVersion = s
            case "firmwareVersion": d.firmwareVersion = s
            case "softwareVersion": d.softwareVersion = s
            case "localIdentifier": d.localIdentifier = s
            default: d.udiDeviceIdentifier = s
            }
        }
        return d
    }
}
