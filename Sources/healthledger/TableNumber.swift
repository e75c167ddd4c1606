import Foundation
import HealthModel

/// A number in a table for people, rounded as the Health app shows it: counts summed
/// (steps, flights) as whole numbers; any other value to four significant digits, and
/// never fewer than its whole part (72.12 bpm, 1.2 count/s, 5123 m). Machine output
/// (`--json`) keeps every digit.
enum TableNumber {
    /// `value` for a table; `whole` rounds it to a whole number.
    static func format(_ value: Double, whole: Bool) -> String {
        guard value.isFinite else { return Quantity.format(value) }
        if whole || value.magnitude >= 1000 { return plain(value.rounded()) }
        if value == 0 { return "0" }
        let decimals = min(15, max(0, 3 - Int(log10(value.magnitude).rounded(.down))))
        var text = String(format: "%.\(decimals)f", value)
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text == "-0" ? "0" : text
    }

    /// A whole number without exponent or fraction (`Quantity.format` past Int64's range).
    private static func plain(_ whole: Double) -> String {
        if whole == 0 { return "0" }
        guard whole.magnitude < 9e18 else { return Quantity.format(whole) }
        return String(Int64(whole))
    }
}
