import Foundation
import HealthModel
import LedgerCore

/// Samples as CSV (RFC 4180): one file per type, a header row, CRLF line ends, a field
/// quoted when it holds a comma, a double quote, CR or LF, and a double quote inside
/// one written twice. Every file starts with the same eight columns —
/// `uuid,start,end,value,unit,source,device,metadata` — written as `query --json`
/// writes the same fields (dates in ISO 8601 with the offset as stored, numbers as
/// JSON numbers, device and metadata as their JSON objects), then the type's own.
package enum SampleCSV {
    /// The common columns.
    package static let commonColumns = ["uuid", "start", "end", "value", "unit", "source", "device", "metadata"]

    /// The columns after the common ones, for a type's kind.
    package static func ownColumns(_ type: ObjectType) -> [String] {
        switch type {
        case .quantity: ["sourceVersion", "creationDate"]
        case .category: ["valueName", "sourceVersion", "creationDate"]
        case .workout: ["activityType", "duration", "totalEnergyBurned", "totalEnergyBurnedUnit", "totalDistance",
                        "totalDistanceUnit", "sourceVersion", "creationDate"]
        case .correlation: ["objects", "sourceVersion", "creationDate"]
        default: ["sourceVersion", "creationDate"]
        }
    }

    /// The header row of a type's file (with its line end).
    package static func header(_ type: ObjectType) -> String {
        row(commonColumns + ownColumns(type))
    }

    /// Appends one sample's row (with its line end) to `out`: `row(sample)`'s bytes,
    /// the fixed fields (UUID, dates, numbers) written in place, for exports of millions.
    package static func appendRow(_ sample: Sample, to out: inout [UInt8]) {
        guard case .quantity(let s) = sample else {
            out.append(contentsOf: row(sample).utf8)
            return
        }
        let c = s.common
        uuid(c.uuid, &out)
        out.append(UInt8(ascii: ","))
        SampleJSONWriter.date(c.startDate, &out, quoted: false)
        out.append(UInt8(ascii: ","))
        SampleJSONWriter.date(c.endDate, &out, quoted: false)
        out.append(UInt8(ascii: ","))
        SampleJSONWriter.number(s.quantity.value, &out)
        out.append(UInt8(ascii: ","))
        field(s.quantity.unit.spelling, &out)
        out.append(UInt8(ascii: ","))
        field(c.source?.bundleIdentifier ?? "", &out)
        out.append(UInt8(ascii: ","))
        if let device = c.device { field(SampleJSON.device(device), &out) }
        out.append(UInt8(ascii: ","))
        if !c.metadata.isEmpty { field(SampleJSON.metadata(c.metadata), &out) }
        out.append(UInt8(ascii: ","))
        field(c.source?.version ?? "", &out)
        out.append(UInt8(ascii: ","))
        if let creation = c.creationDate { SampleJSONWriter.date(creation, &out, quoted: false) }
        out.append(0x0D)
        out.append(0x0A)
    }

    /// `appendRow(sample)`'s bytes for a quantity sample read in place
    /// (`PlainQuantityBytes`), written from its stored bytes without a `Sample`.
    package static func appendRow(_ s: PlainQuantityBytes, to out: inout [UInt8]) {
        uuid(s.uuid, &out)
        out.append(UInt8(ascii: ","))
        SampleJSONWriter.date(Date(timeIntervalSinceReferenceDate: s.start), &out, quoted: false)
        out.append(UInt8(ascii: ","))
        SampleJSONWriter.date(Date(timeIntervalSinceReferenceDate: s.end), &out, quoted: false)
        out.append(UInt8(ascii: ","))
        SampleJSONWriter.number(s.value, &out)
        out.append(UInt8(ascii: ","))
        field(s.payload[s.unit], &out)
        out.append(UInt8(ascii: ","))
        if let bundle = s.bundleIdentifier { field(bundle, &out) }
        out.append(UInt8(ascii: ","))
        out.append(UInt8(ascii: ","))  // no device: `PlainQuantityBytes` has none
        if s.metadataCount > 0 {
            // A JSON object always holds a double quote: quoted, each one doubled.
            var json: [UInt8] = []
            SampleJSONWriter.metadata(s, &json)
            out.append(UInt8(ascii: "\""))
            for b in json {
                out.append(b)
                if b == UInt8(ascii: "\"") { out.append(b) }
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: ","))
        // A sample's version belongs to its source (`SampleCodec`): none without one.
        if s.bundleIdentifier != nil, let version = s.sourceVersion { field(s.payload[version], &out) }
        out.append(UInt8(ascii: ","))
        if let creation = s.creation { SampleJSONWriter.date(Date(timeIntervalSinceReferenceDate: creation), &out, quoted: false) }
        out.append(0x0D)
        out.append(0x0A)
    }

    /// A UUID as `uuidString` writes it.
    private static func uuid(_ u: UUID, _ out: inout [UInt8]) {
        SampleJSONWriter.uuid(u, &out)
    }

    /// A text field's bytes, quoted as `quoted` quotes it.
    private static func field(_ bytes: ArraySlice<UInt8>, _ out: inout [UInt8]) {
        if bytes.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }) {
            out.append(UInt8(ascii: "\""))
            for b in bytes {
                out.append(b)
                if b == 0x22 { out.append(b) }
            }
            out.append(UInt8(ascii: "\""))
        } else {
            out.append(contentsOf: bytes)
        }
    }

    /// A text field's bytes, quoted as `quoted` quotes it.
    private static func field(_ text: String, _ out: inout [UInt8]) {
        if text.utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }) {
            out.append(contentsOf: quoted(text).utf8)
        } else {
            out.append(contentsOf: text.utf8)
        }
    }

    /// One sample's row (with its line end).
    package static func row(_ sample: Sample) -> String {
        let c = sample.common
        var value = "", unit = "", own: [String] = []
        switch sample {
        case .quantity(let s):
            value = JSONObject.number(s.quantity.value)
            unit = s.quantity.unit.spelling
        case .category(let s):
            value = String(s.value)
            own = [s.type.rawName(of: s.value) ?? ""]
        case .workout(let w):
            value = JSONObject.number(w.duration)
            unit = "s"
            own = [w.activityType.identifier, JSONObject.number(w.duration),
                   w.totalEnergyBurned.map { JSONObject.number($0.value) } ?? "", w.totalEnergyBurned?.unit.spelling ?? "",
                   w.totalDistance.map { JSONObject.number($0.value) } ?? "", w.totalDistance?.unit.spelling ?? ""]
        case .correlation(let k):
            own = [k.objects.map(\.uuid.uuidString).joined(separator: " ")]
        case .unrecognized(let u):
            value = u.value ?? ""
            unit = u.unit ?? ""
        }
        let fields = [c.uuid.uuidString, ISO8601.string(c.startDate), ISO8601.string(c.endDate), value, unit,
                      c.source?.bundleIdentifier ?? "", c.device.map(SampleJSON.device) ?? "",
                      c.metadata.isEmpty ? "" : SampleJSON.metadata(c.metadata)]
            + own + [c.source?.version ?? "", c.creationDate.map { ISO8601.string($0) } ?? ""]
        return row(fields)
    }

    /// Fields as one CSV record, CRLF-terminated.
    package static func row(_ fields: [String]) -> String {
        fields.map(quoted).joined(separator: ",") + "\r\n"
    }

    /// A field as RFC 4180 writes it: as is, or in double quotes with each double
    /// quote doubled when it holds a comma, a double quote, CR or LF.
    package static func quoted(_ field: String) -> String {
        guard field.utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
