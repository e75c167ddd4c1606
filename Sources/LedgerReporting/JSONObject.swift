import Foundation
import HealthModel
import LedgerCore

/// A JSON object written by hand: keys in the order given (so output is stable for
/// golden files and diffs), strings escaped per RFC 8259, numbers in their shortest
/// round-trip form.
package struct JSONObject: Sendable {
    private var text = "{"
    private var first = true

    package init() {}

    private mutating func key(_ k: String) {
        if !first { text += "," }
        first = false
        text += JSONObject.quote(k) + ":"
    }

    package mutating func set(_ k: String, _ v: String?) { key(k); text += v.map(JSONObject.quote) ?? "null" }
    package mutating func set(_ k: String, _ v: Double?) { key(k); text += v.map(JSONObject.number) ?? "null" }
    package mutating func set(_ k: String, _ v: Int?) { key(k); text += v.map { String($0) } ?? "null" }
    package mutating func set(_ k: String, _ v: Int64) { key(k); text += String(v) }
    package mutating func set(_ k: String, _ v: UInt64) { key(k); text += String(v) }
    package mutating func set(_ k: String, _ v: Bool) { key(k); text += v ? "true" : "false" }
    /// Inserts already-encoded JSON (an object, array, or literal).
    package mutating func setRaw(_ k: String, _ json: String) { key(k); text += json }
    package mutating func set(_ k: String, _ object: JSONObject) { key(k); text += object.string }

    /// The encoded object.
    package var string: String { text + "}" }

    /// A JSON number: integers without a fraction, others in shortest round-trip form;
    /// non-finite values become null.
    package static func number(_ v: Double) -> String {
        guard v.isFinite else { return "null" }
        return Quantity.format(v)
    }

    /// A JSON string literal.
    package static func quote(_ s: String) -> String {
        // Most strings (UUIDs, identifiers, dates) need no escape: copy them whole.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) { return "\"" + s + "\"" }
        var out = "\""
        out.reserveCapacity(s.utf8.count + 2)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// A JSON array of already-encoded values.
    package static func array(_ items: [String]) -> String { "[" + items.joined(separator: ",") + "]" }
}
