import Foundation
import HealthModel
import LedgerCore

/// `SampleJSON.object(sample).string` written straight into a byte buffer, for
/// readers that print many samples (`query --json`): the same bytes, without
/// building a `String` per field. Quantity, category and raw samples are written
/// here; workouts and correlations (rare, nested) go through `SampleJSON`.
package enum SampleJSONWriter {
    /// Appends the sample's JSON object (no newline) to `out`.
    package static func append(_ sample: Sample, to out: inout [UInt8]) {
        let c = sample.common
        switch sample {
        case .quantity(let s):
            head(c, sample, "quantity", &out)
            key("value", &out)
            number(s.quantity.value, &out)
            key("unit", &out)
            quote(s.quantity.unit.spelling, &out)
        case .category(let s):
            head(c, sample, "category", &out)
            key("value", &out)
            out.append(contentsOf: String(s.value).utf8)
            key("unit", &out)
            out.append(contentsOf: "null".utf8)
            key("valueName", &out)
            optional(s.type.rawName(of: s.value), &out)
        case .unrecognized(let s):
            head(c, sample, "unrecognized", &out)
            key("value", &out)
            optional(s.value, &out)
            key("unit", &out)
            optional(s.unit, &out)
        case .workout, .correlation:
            out.append(contentsOf: SampleJSON.object(sample).string.utf8)
            return
        }
        key("start", &out)
        date(c.startDate, &out)
        key("end", &out)
        date(c.endDate, &out)
        key("source", &out)
        optional(c.source?.bundleIdentifier, &out)
        if let version = c.source?.version {
            key("sourceVersion", &out)
            quote(version, &out)
        }
        if let creation = c.creationDate {
            key("creationDate", &out)
            date(creation, &out)
        }
        if let device = c.device {
            key("device", &out)
            out.append(contentsOf: SampleJSON.device(device).utf8)
        }
        if !c.metadata.isEmpty {
            key("metadata", &out)
            out.append(contentsOf: SampleJSON.metadata(c.metadata).utf8)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// `append(sample)`'s bytes for a sample read in place (`PlainQuantityBytes`): the
    /// same line, byte for byte, written from the stored bytes without a `Sample`.
    package static func append(_ s: PlainQuantityBytes, to out: inout [UInt8]) {
        if PlainSampleLine.write(s, to: &out) { return }
        appendByField(s, to: &out)
    }

    /// `append(_: PlainQuantityBytes, to:)` field by field: every line, the common ones
    /// too (`PlainSampleLine` writes those faster; the tests compare the two).
    package static func appendByField(_ s: PlainQuantityBytes, to out: inout [UInt8]) {
        head(s.uuid, ObjectType(code: s.typeCode)?.identifier ?? "", "quantity", &out)
        key("value", &out)
        number(s.value, &out)
        key("unit", &out)
        quoteBytes(s.payload, s.unit, &out)
        key("start", &out)
        date(Date(timeIntervalSinceReferenceDate: s.start), &out)
        key("end", &out)
        date(Date(timeIntervalSinceReferenceDate: s.end), &out)
        key("source", &out)
        optional(s.bundleIdentifier, &out)
        // A sample's version belongs to its source (`SampleCodec`): none without one.
        if s.bundleIdentifier != nil, let version = s.sourceVersion {
            key("sourceVersion", &out)
            quoteBytes(s.payload, version, &out)
        }
        if let creation = s.creation {
            key("creationDate", &out)
            date(Date(timeIntervalSinceReferenceDate: creation), &out)
        }
        if s.metadataCount > 0 {
            key("metadata", &out)
            metadata(s, &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// The metadata of a sample read in place as `SampleJSON.metadata` writes it.
    package static func metadata(_ s: PlainQuantityBytes, _ out: inout [UInt8]) {
        var first = true
        out.append(UInt8(ascii: "{"))
        s.forEachMetadata { name, value in
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            quoteBytes(s.payload, name, &out)
            out.append(UInt8(ascii: ":"))
            switch value {
            case .string(let r): quoteBytes(s.payload, r, &out)
            case .integer(let i): out.append(contentsOf: String(i).utf8)
            case .number(let d): out.append(contentsOf: JSONObject.number(d).utf8)
            case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
            case .date(let d): quote(ISO8601.string(Date(timeIntervalSinceReferenceDate: d)), &out)
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// A string's bytes that need no escape (`PlainQuantityBytes` holds only such), quoted.
    @inline(__always)
    private static func quoteBytes(_ payload: [UInt8], _ range: Range<Int>, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: payload[range])
        out.append(UInt8(ascii: "\""))
    }

    private static func head(_ c: SampleCommon, _ sample: Sample, _ kind: StaticString, _ out: inout [UInt8]) {
        head(c.uuid, sample.type.rawValue, kind, &out)
    }

    private static func head(_ uuid: UUID, _ type: String, _ kind: StaticString, _ out: inout [UInt8]) {
        out.append(contentsOf: #"{"uuid":""#.utf8)
        self.uuid(uuid, &out)
        out.append(UInt8(ascii: "\""))
        key("type", &out)
        quote(type, &out)
        key("kind", &out)
        out.append(UInt8(ascii: "\""))
        kind.withUTF8Buffer { unsafe out.append(contentsOf: $0) }
        out.append(UInt8(ascii: "\""))
    }

    /// The UUID's 36 characters as `UUID.uuidString` writes them (upper case), unquoted.
    package static func uuid(_ uuid: UUID, _ out: inout [UInt8]) {
        // unsafe: the cursor writes exactly 36 bytes into a buffer of that size, during the call.
        unsafe withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { text in
            var c = unsafe ByteCursor(text.baseAddress!)
            unsafe c.uuid(uuid)
            unsafe out.append(contentsOf: UnsafeBufferPointer(text))
        }
    }

    @inline(__always)
    private static func key(_ k: StaticString, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: ","))
        out.append(UInt8(ascii: "\""))
        k.withUTF8Buffer { unsafe out.append(contentsOf: $0) }
        out.append(UInt8(ascii: "\""))
        out.append(UInt8(ascii: ":"))
    }

    private static func optional(_ s: String?, _ out: inout [UInt8]) {
        if let s { quote(s, &out) } else { out.append(contentsOf: "null".utf8) }
    }

    private static func quote(_ s: String, _ out: inout [UInt8]) {
        var s = s
        let plain = s.withUTF8 { b in unsafe !b.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) }
        if plain {
            out.append(UInt8(ascii: "\""))
            s.withUTF8 { unsafe out.append(contentsOf: $0) }
            out.append(UInt8(ascii: "\""))
        } else {
            out.append(contentsOf: JSONObject.quote(s).utf8)
        }
    }

    /// `JSONObject.number(v)`'s bytes (CSV rows write their numbers so too).
    static func number(_ v: Double, _ out: inout [UInt8]) {
        if let whole = wholeNumber(v) {
            // unsafe: at most 16 bytes (a sign and 15 digits) into a buffer of 20, during the call.
            unsafe withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { text in
                var c = unsafe ByteCursor(text.baseAddress!)
                unsafe c.integer(whole)
                unsafe out.append(contentsOf: UnsafeBufferPointer(start: text.baseAddress!, count: c.at - text.baseAddress!))
            }
        } else {
            out.append(contentsOf: JSONObject.number(v).utf8)
        }
    }

    /// `v` when `number` writes it as a whole number (`String(Int64(v))`, as
    /// `JSONObject.number` does): finite, whole and below 10^15 in magnitude.
    @inline(__always)
    static func wholeNumber(_ v: Double) -> Int64? {
        v.isFinite && v == v.rounded() && abs(v) < 1e15 ? Int64(v) : nil
    }

    /// Seconds since 1970 of a date `date` writes itself (`ByteCursor.date`), not through
    /// `ISO8601`: whole seconds strictly inside years 1…9999.
    @inline(__always)
    static func wholeSeconds(_ d: Date) -> Int64? {
        let t = d.timeIntervalSince1970
        guard t.isFinite, t == t.rounded(.down), t > -62_135_596_800, t < 253_402_300_800 else { return nil }
        return Int64(t)
    }

    /// `ISO8601.string(date)` for whole seconds in years 1…9999; the rest through it.
    /// In double quotes (JSON) unless `quoted` is false (CSV).
    static func date(_ d: Date, _ out: inout [UInt8], quoted: Bool = true) {
        guard let total = wholeSeconds(d) else {
            if quoted { out.append(UInt8(ascii: "\"")) }
            out.append(contentsOf: ISO8601.string(d).utf8)
            if quoted { out.append(UInt8(ascii: "\"")) }
            return
        }
        // "YYYY-MM-DDTHH:MM:SSZ" with its quotes: 22 bytes, written in place, appended once.
        // unsafe: the cursor writes exactly 22 bytes into a buffer of that size, during the call.
        unsafe withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 22) { text in
            var c = unsafe ByteCursor(text.baseAddress!)
            unsafe c.date(total)
            if quoted {
                unsafe out.append(contentsOf: UnsafeBufferPointer(text))
            } else {
                unsafe out.append(contentsOf: UnsafeBufferPointer(rebasing: text[1..<21]))
            }
        }
    }
}
