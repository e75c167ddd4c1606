import Foundation
import HealthModel
import LedgerCore

/// `SampleJSON.object(sample).string` written straight into a byte buffer, for
/// readers that print many samples (`query --json`): the same bytes, without
/// building a `String` per field. Quantity, category and raw samples are written
/// here; workouts and correlations (rare, nested) go through `SampleJSON`.
public enum SampleJSONWriter {
    /// Appends the sample's JSON object (no newline) to `out`.
    public static func append(_ sample: Sample, to out: inout [UInt8]) {
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

    private static func head(_ c: SampleCommon, _ sample: Sample, _ kind: StaticString, _ out: inout [UInt8]) {
        out.append(contentsOf: #"{"uuid":""#.utf8)
        let u = c.uuid.uuid
        // unsafe: the UUID's 16 bytes, read in place during the call.
        unsafe withUnsafeBytes(of: u) { b in
            for unsafe (i, byte) in unsafe b.enumerated() {
                if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 15)])
            }
        }
        out.append(UInt8(ascii: "\""))
        key("type", &out)
        quote(sample.type.rawValue, &out)
        key("kind", &out)
        out.append(UInt8(ascii: "\""))
        kind.withUTF8Buffer { unsafe out.append(contentsOf: $0) }
        out.append(UInt8(ascii: "\""))
    }

    private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

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

    private static func number(_ v: Double, _ out: inout [UInt8]) {
        if v.isFinite, v == v.rounded(), abs(v) < 1e15 {
            out.append(contentsOf: String(Int64(v)).utf8)
        } else {
            out.append(contentsOf: JSONObject.number(v).utf8)
        }
    }

    /// `ISO8601.string(date)` for whole seconds in years 1…9999; the rest through it.
    private static func date(_ d: Date, _ out: inout [UInt8]) {
        let t = d.timeIntervalSince1970
        guard t.isFinite, t == t.rounded(.down), t > -62_135_596_800, t < 253_402_300_800 else {
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: ISO8601.string(d).utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        let total = Int64(t)
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let second = Int(total - days * 86_400)
        let civil = CivilDate.fromDaysSinceEpoch(Int(days))
        out.append(UInt8(ascii: "\""))
        digits(civil.year, 4, &out)
        out.append(UInt8(ascii: "-"))
        digits(civil.month, 2, &out)
        out.append(UInt8(ascii: "-"))
        digits(civil.day, 2, &out)
        out.append(UInt8(ascii: "T"))
        digits(second / 3600, 2, &out)
        out.append(UInt8(ascii: ":"))
        digits(second / 60 % 60, 2, &out)
        out.append(UInt8(ascii: ":"))
        digits(second % 60, 2, &out)
        out.append(UInt8(ascii: "Z"))
        out.append(UInt8(ascii: "\""))
    }

    @inline(__always)
    private static func digits(_ value: Int, _ width: Int, _ out: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var v = value
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(v / divisor))
            v %= divisor
            divisor /= 10
        }
    }
}
