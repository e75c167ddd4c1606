import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writing to stdout and stderr without Foundation's buffering surprises.
enum Output {
    nonisolated(unsafe) private static var buffer: [UInt8] = []

    /// Appends a line to stdout (buffered; flushed at exit and every 64 KiB).
    static func line(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Writes buffered stdout.
    static func flush() {
        buffer.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(1, raw.baseAddress! + offset, raw.count - offset)
                if n <= 0 { break }
                offset += n
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes a line to stderr at once.
    static func error(_ text: String) {
        flush()
        let bytes = Array((text + "\n").utf8)
        bytes.withUnsafeBytes { _ = write(2, $0.baseAddress!, $0.count) }
    }

    /// Whether stderr is a terminal (progress is shown only then).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }
}

/// A JSON object written by hand: keys in the order given, strings escaped per RFC 8259.
struct JSONObject {
    private var text = "{"
    private var first = true

    private mutating func key(_ k: String) {
        if !first { text += "," }
        first = false
        text += JSONObject.quote(k) + ":"
    }

    mutating func set(_ k: String, _ v: String?) {
        key(k)
        text += v.map(JSONObject.quote) ?? "null"
    }

    mutating func set(_ k: String, _ v: Double?) {
        key(k)
        text += v.map(JSONObject.number) ?? "null"
    }

    mutating func set(_ k: String, _ v: Int?) {
        key(k)
        text += v.map { String($0) } ?? "null"
    }

    mutating func set(_ k: String, _ v: UInt64) {
        key(k)
        text += String(v)
    }

    mutating func set(_ k: String, _ v: Bool) {
        key(k)
        text += v ? "true" : "false"
    }

    /// Inserts already-encoded JSON (an object or array).
    mutating func setRaw(_ k: String, _ json: String) {
        key(k)
        text += json
    }

    var string: String { text + "}" }

    /// A JSON number: shortest round-trip form; non-finite values become null.
    static func number(_ v: Double) -> String {
        guard v.isFinite else { return "null" }
        if v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
        return String(v)
    }

    /// A JSON string literal.
    static func quote(_ s: String) -> String {
        var out = "\""
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
    static func array(_ items: [String]) -> String { "[" + items.joined(separator: ",") + "]" }
}
