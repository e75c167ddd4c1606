import Foundation

/// Numbers in the report's locale (`22.86`, `22,86`, `12,345`) and dates in its time
/// zone (`2026-03-01 09:00`).
struct ReportFormat: @unchecked Sendable {  // NumberFormatter is not Sendable; each ReportFormat owns its own formatters and is used from one task
    let locale: Locale
    let timeZone: TimeZone
    private let formatters: [NumberFormatter]

    init(locale: Locale, timeZone: TimeZone) {
        self.locale = locale
        self.timeZone = timeZone
        formatters = (0...3).map { decimals in
            let f = NumberFormatter()
            f.locale = locale
            f.numberStyle = .decimal
            f.minimumFractionDigits = decimals
            f.maximumFractionDigits = decimals
            return f
        }
    }

    /// `value` with exactly `decimals` decimals (0–3), grouped as the locale groups.
    func number(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "–" }
        return formatters[max(0, min(3, decimals))].string(from: NSNumber(value: value)) ?? String(value)
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
