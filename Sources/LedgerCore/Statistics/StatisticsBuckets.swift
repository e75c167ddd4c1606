import Foundation

/// The gapless buckets of a statistics collection: bucket k starts at the anchor
/// plus k × interval, counted in the calendar of a time zone (Gregorian), for every
/// integer k (before the anchor too).
///
/// Minutes and hours are fixed lengths (60 s, 3,600 s: an hour is an hour across a
/// DST change, so a 23-hour day has 23 hourly buckets); days, weeks, months and years
/// follow the calendar, each computed from the anchor (not chained), so a day across
/// a DST change is 23 or 25 hours and month buckets anchored on the 31st fall on the
/// last day of shorter months.
package struct StatisticsBuckets: Sendable {
    package let anchor: Date
    package let interval: StatisticsInterval
    package let timeZone: TimeZone
    let calendar: Calendar
    /// Seconds per step for minutes and hours; nil for calendar units.
    let fixedStep: Double?

    /// Most buckets a collection may span.
    package static let limit = 2_000_000

    package init(anchor: Date, interval: StatisticsInterval, timeZone: TimeZone) {
        self.anchor = anchor
        self.interval = interval
        self.timeZone = timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
        switch interval.unit {
        case .minute: fixedStep = 60 * Double(interval.count)
        case .hour: fixedStep = 3600 * Double(interval.count)
        default: fixedStep = nil
        }
    }

    /// The start of bucket `k` (reference-date seconds).
    package func start(_ k: Int) -> Double {
        let a = anchor.timeIntervalSinceReferenceDate
        if let fixedStep { return a + Double(k) * fixedStep }
        let n = k * interval.count
        let date: Date?
        switch interval.unit {
        case .day: date = calendar.date(byAdding: .day, value: n, to: anchor)
        case .week: date = calendar.date(byAdding: .day, value: 7 * n, to: anchor)
        case .month: date = calendar.date(byAdding: .month, value: n, to: anchor)
        case .year: date = calendar.date(byAdding: .year, value: n, to: anchor)
        case .minute, .hour: date = nil
        }
        return date?.timeIntervalSinceReferenceDate ?? a + Double(n) * averageSeconds
    }

    private var averageSeconds: Double {
        switch interval.unit {
        case .minute: 60
        case .hour: 3600
        case .day: 86_400
        case .week: 604_800
        case .month: 2_629_746
        case .year: 31_556_952
        }
    }

    /// Whether bucket `k` has any length. A calendar day (or a week, month or year
    /// starting on one) that the zone skipped — Pacific/Apia went from 2011-12-29 to
    /// 2011-12-31 when it crossed the date line — starts where the next bucket starts:
    /// it holds no instant, and a collection lists no such bucket.
    package func exists(_ k: Int) -> Bool { fixedStep != nil || start(k + 1) > start(k) }

    /// The k of the bucket holding instant `t`: start(k) ≤ t < start(k + 1).
    package func index(containing t: Double) -> Int {
        let a = anchor.timeIntervalSinceReferenceDate
        let estimate = ((t - a) / (averageSeconds * Double(interval.count))).rounded(.down)
        var k = Int(max(-1e15, min(1e15, estimate)))
        if fixedStep != nil { return k }
        while start(k) > t { k -= 1 }
        while start(k + 1) <= t { k += 1 }
        return k
    }

    /// The borders of buckets `first…last`: `last − first + 2` instants.
    func borders(from first: Int, through last: Int) throws(StatisticsError) -> [Double] {
        let count = last - first + 1
        guard count <= Self.limit else { throw .tooManyBuckets(count: count, limit: Self.limit) }
        return (first...(last + 1)).map(start)
    }
}
