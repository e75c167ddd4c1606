/// Text made safe for XML/HTML: element content and attribute values.
public enum SVGText {
    /// `&`, `<`, `>`, `"` and `'` escaped; control characters other than tab and
    /// newline dropped (XML 1.0 does not allow them).
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value) || scalar.value == 0xFFFE || scalar.value == 0xFFFF { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A coordinate with at most one decimal, no trailing `.0` (`12`, `12.5`, `-3.2`):
    /// small paths, and the same bytes for the same input.
    public static func coordinate(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let tenths = (value * 10).rounded()
        let whole = Int(tenths / 10)
        let fraction = Int(abs(tenths).truncatingRemainder(dividingBy: 10))
        if fraction == 0 { return String(Int(tenths / 10)) }
        let sign = tenths < 0 && whole == 0 ? "-" : ""
        return sign + String(whole) + "." + String(fraction)
    }
}
