import Foundation
import HealthModel

extension StatisticsQuery {
    /// A `cumulativeSum` collection answered from the state's daily sums (`DailySums`)
    /// — exactly what the engine would answer, or nil when the tables cannot say it:
    ///
    /// - only the merged sum, no filter, every source visible, no strict date bounds;
    /// - tables standing for this state (nothing folded since they were made);
    /// - every bucket of the query that the type's samples reach is a day of a table:
    ///   the same two borders, bit for bit (days of UTC or the owner's zone, or of any
    ///   zone whose days begin at the same instants, from any midnight anchor);
    /// - a date predicate begins and ends on bucket borders (no partial first or last
    ///   day), and no sample is open across its start (the table's `quiet` border): the
    ///   engine's sweep over the matching samples is then, from the start on, the sweep
    ///   over all of them, so each day's sum is the table's.
    ///
    /// Buckets outside a table's span hold no sample and are empty, as in the engine.
    static func collectionFromDailySums(type: QuantityType, predicate: DatePredicate?, filter: SamplePredicate?,
                                        options: StatisticsOptions, buckets: StatisticsBuckets, visibility: QueryVisibility,
                                        in state: inout LedgerState) throws -> StatisticsCollection? {
        guard options == .cumulativeSum, filter == nil, visibility == .everything,
              !(predicate?.strictStartDate ?? false), !(predicate?.strictEndDate ?? false) else { return nil }
        let tables = state.dailySums.sums.tables(for: ObjectType.quantity(type).code, in: state)
        guard let extent = tables.first else { return nil }
        try state.checkIntact()
        let from = predicate?.start?.timeIntervalSinceReferenceDate, to = predicate?.end?.timeIntervalSinceReferenceDate
        let empty = StatisticsCollection(type: type, options: options, buckets: buckets, filled: [:])
        // No sample matches (the engine's list is empty): no bucket.
        if let to, extent.minStart >= to { return empty }
        if let from, extent.maxEnd < from { return empty }
        let low = from ?? extent.minStart, high = to?.nextDown ?? extent.maxEnd
        guard high >= low else { return empty }
        let first = buckets.index(containing: low), last = buckets.index(containing: high)
        // Beyond the bucket limit: the engine's path says so (or, with no sample, not).
        guard let borders = try? buckets.borders(from: first, through: last) else { return nil }
        if let from, borders[0] != from { return nil }
        if let to, borders[borders.count - 1] != to { return nil }
        for table in tables {
            guard let days = days(of: table, borders: borders, from: from) else { continue }
            var filled: [Int: Statistics] = [:]
            for (i, day) in days.enumerated() {
                guard let day, table.flags[day] & DailySums.Table.present != 0, borders[i + 1] > borders[i] else { continue }
                let result = StatisticsEngine.BucketResult(merged: StatisticsValues(sum: table.sums[day]), bySource: [:])
                let s = statistics(type: type, result, from: borders[i], to: borders[i + 1], state: state)
                try StatisticsNotFinite.check(s)
                filled[first + i] = s
            }
            return StatisticsCollection(type: type, options: options, buckets: buckets, filled: filled)
        }
        return nil
    }

    /// For each bucket `[borders[i], borders[i+1])`, the table's day with the same
    /// borders, or nil for a bucket wholly outside the table's span (it holds no
    /// sample); nil overall when a bucket reaching into the span is not a day of the
    /// table, or when `from` starts on a border some sample is open across.
    static func days(of table: DailySums.Table, borders: [Double], from: Double?) -> [Int?]? {
        let t = table.borders
        guard let tFirst = t.first, let tLast = t.last else { return nil }
        if let from, from > tFirst, from < tLast {
            guard let k = index(of: from, in: t), table.flags[k] & DailySums.Table.quiet != 0 else { return nil }
        }
        var days = [Int?](repeating: nil, count: borders.count - 1)
        var j: Int?
        for i in days.indices {
            if borders[i + 1] <= tFirst || borders[i] >= tLast { continue }
            if let previous = j, previous + 1 < t.count - 1, t[previous + 1] == borders[i] {
                j = previous + 1
            } else {
                j = index(of: borders[i], in: t)
            }
            guard let day = j, day + 1 < t.count, t[day] == borders[i], t[day + 1] == borders[i + 1] else { return nil }
            days[i] = day
        }
        return days
    }

    /// The last index k of `borders` (ascending) with `borders[k] == value` and a next border, if any.
    static func index(of value: Double, in borders: [Double]) -> Int? {
        var low = 0, high = borders.count
        while low < high {
            let mid = (low + high) / 2
            if borders[mid] <= value { low = mid + 1 } else { high = mid }
        }
        let k = low - 1
        guard k >= 0, k + 1 < borders.count, borders[k] == value else { return nil }
        return k
    }
}
