import Foundation

/// Ticks for a time axis on calendar boundaries in a time zone: minutes and hours
/// within a day, days and weeks (Mondays) within months, months, years and decades
/// over years. The step is the smallest that gives at most `maxCount` ticks.
public struct TimeTicks: Sendable, Equatable {
    /// A step between ticks.
    public enum Step: Sendable, Equatable {
        case seconds(Int)
        case days(Int)
        case weeks
        case months(Int)
        case years(Int)
    }

    public let step: Step
    /// Tick instants, seconds since 1970, ascending, inside [from, to].
    public let values: [Double]
    /// A label per tick (`06:00`, `9 Mar`, `Mar 2026`, `2026`).
    public let labels: [String]

    /// The steps tried, smallest first.
    public static let candidates: [Step] = [
        .seconds(60), .seconds(300), .seconds(900), .seconds(1800), .seconds(3600), .seconds(3 * 3600),
        .seconds(6 * 3600), .seconds(12 * 3600), .days(1), .days(2), .weeks, .months(1), .months(3), .months(6),
        .years(1), .years(2), .years(5), .years(10), .years(20), .years(50), .years(100), .years(200), .years(500),
    ]

    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Ticks between `from` and `to` (seconds since 1970) in `timeZone`, at most
    /// `maxCount` (at least 2) of them when any step allows it.
    public static func ticks(from: Double, to: Double, in timeZone: TimeZone, maxCount: Int = 8) -> TimeTicks {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let low = min(from, to), high = max(from, to)
        let limit = max(maxCount, 2)
        var last = TimeTicks(step: .years(500), values: [], labels: [])
        for step in candidates {
            let values = instants(step, low, high, calendar, cap: limit + 1)
            last = TimeTicks(step: step, values: values, labels: values.map { label($0, step, calendar) })
            if values.count <= limit { return last }
        }
        return last
    }

    /// Tick instants of `step` in [low, high], stopping after `cap` of them.
    static func instants(_ step: Step, _ low: Double, _ high: Double, _ calendar: Calendar, cap: Int) -> [Double] {
        guard low.isFinite, high.isFinite, high - low < 1e12 else { return [] }
        var out: [Double] = []
        func add(_ date: Date) -> Bool {
            let t = date.timeIntervalSince1970
            if t >= low && t <= high { out.append(t) }
            return out.count < cap && t <= high
        }
        let start = Date(timeIntervalSince1970: low)
        switch step {
        case .seconds(let s):
            // Local wall-clock multiples of s from the local midnight.
            var day = calendar.startOfDay(for: start)
            while true {
                var k = 0
                var keep = true
                while keep, let next = calendar.date(byAdding: .second, value: k * s, to: day) {
                    if k * s >= 86_400 { break }
                    keep = add(next)
                    k += 1
                }
                guard keep, let following = calendar.date(byAdding: .day, value: 1, to: day) else { break }
                day = following
            }
        case .days(let n):
            var day = calendar.startOfDay(for: start)
            // align to day numbers since 1970-01-01 (local) that are multiples of n
            let epochDay = calendar.startOfDay(for: Date(timeIntervalSince1970: 0))
            let offset = calendar.dateComponents([.day], from: epochDay, to: day).day ?? 0
            let back = ((offset % n) + n) % n
            day = calendar.date(byAdding: .day, value: -back, to: day) ?? day
            var k = 0
            while let next = calendar.date(byAdding: .day, value: k * n, to: day), add(next) { k += 1 }
        case .weeks:
            var day = calendar.startOfDay(for: start)
            let weekday = calendar.component(.weekday, from: day)  // 1 = Sunday
            let back = (weekday + 5) % 7  // days since Monday
            day = calendar.date(byAdding: .day, value: -back, to: day) ?? day
            var k = 0
            while let next = calendar.date(byAdding: .day, value: 7 * k, to: day), add(next) { k += 1 }
        case .months(let n):
            var c = calendar.dateComponents([.year, .month], from: start)
            c.month = ((c.month ?? 1) - 1) / n * n + 1
            c.day = 1
            guard let first = calendar.date(from: c) else { break }
            var k = 0
            while let next = calendar.date(byAdding: .month, value: k * n, to: first), add(next) { k += 1 }
        case .years(let n):
            var c = calendar.dateComponents([.year], from: start)
            let year = c.year ?? 1970
            c.year = year >= 0 ? year / n * n : -((-year + n - 1) / n * n)
            c.month = 1
            c.day = 1
            guard let first = calendar.date(from: c) else { break }
            var k = 0
            while let next = calendar.date(byAdding: .year, value: k * n, to: first), add(next) { k += 1 }
        }
        return out
    }

    static func label(_ t: Double, _ step: Step, _ calendar: Calendar) -> String {
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: Date(timeIntervalSince1970: t))
        func two(_ v: Int?) -> String { let v = v ?? 0; return v < 10 ? "0\(v)" : String(v) }
        let month = monthNames[max(0, min(11, (c.month ?? 1) - 1))]
        switch step {
        case .seconds: return "\(two(c.hour)):\(two(c.minute))"
        case .days, .weeks: return "\(c.day ?? 1) \(month)"
        case .months: return "\(month) \(c.year ?? 0)"
        case .years: return String(c.year ?? 0)
        }
    }
}
