/// A number as people write one on a command line: an optional sign, digits with an
/// optional fraction (or a fraction alone), an optional exponent — `72`, `-0.5`,
/// `.5`, `1e5`, `2.5E-3`. Not everything Swift's `Double(_:)` reads: hexadecimal
/// (`0x10`, `0x1p4`) is no number here, so `value > 0x10` is refused rather than
/// compared as 16, and neither are `inf` and `nan`.
public enum DecimalNumber {
    /// The finite number `text` writes in decimal, else nil.
    public static func parse(_ text: String) -> Double? {
        guard isDecimal(text), let v = Double(text), v.isFinite else { return nil }
        return v
    }

    /// Whether `text` is written as a decimal number (whatever its size).
    public static func isDecimal(_ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        if let c = bytes.first, c == UInt8(ascii: "+") || c == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        func digits() -> Int {
            let n = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            bytes = bytes.dropFirst(n)
            return n
        }
        var mantissa = digits()
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            mantissa += digits()
        }
        guard mantissa > 0 else { return false }
        if let c = bytes.first, c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if let s = bytes.first, s == UInt8(ascii: "+") || s == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}
