import Foundation

/// Numbers in the report's locale (`22.86`, `22,86`, `12,345`) and dates in its time
/// zone (`2026-03-01 09:00`).
struct ReportFormat: Sendable {
    let locale: Locale
    let timeZone: TimeZone
    /// The locale's decimal and grouping separators (`.` and `,` in en_US; `,` and `.` in de_DE).
    let decimalSeparator: String
    let groupingSeparator: String

    init(locale: Locale, timeZone: TimeZone) {
        self.locale = locale
        self.timeZone = timeZone
        decimalSeparator = locale.decimalSeparator ?? "."
        groupingSeparator = locale.groupingSeparator ?? ","
    }

    /// `value` rounded to exactly `decimals` decimals (0–3), its integer part grouped by
    /// thousands with the locale's separators.
    func number(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "–" }
        let plain = String(format: "%.\(max(0, min(3, decimals)))f", locale: Locale(identifier: "en_US_POSIX"), value)
        var integer = Substring(plain), fraction: Substring = ""
        if let dot = plain.firstIndex(of: ".") {
            integer = plain[..<dot]
            fraction = plain[plain.index(after: dot)...]
        }
        var sign = ""
        if integer.hasPrefix("-") { sign = "-"; integer = integer.dropFirst() }
        var grouped = ""
        for (i, digit) in integer.enumerated() {
            if i > 0 && (integer.count - i) % 3 == 0 { grouped += groupingSeparator }
            grouped.append(digit)
        }
        if sign == "-", !(grouped + fraction).contains(where: { $0 != "0" && $0.isNumber }) { sign = "" }  // no "-0.00"
        return sign + grouped + (fraction.isEmpty ? "" : decimalSeparator + fraction)
    }

    /// `2026-03-01 09:00` in the report's zone.
    func dateTime(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        func two(_ v: Int?) -> String { let v = v ?? 0; return v < 10 ? "0\(v)" : String(v) }
        return "\(c.year ?? 0)-\(two(c.month))-\(two(c.day)) \(two(c.hour)):\(two(c.minute))"
    }
}
