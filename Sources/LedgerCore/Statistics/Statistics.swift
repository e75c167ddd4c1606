import Foundation
import HealthModel

/// The computed values of one bucket (or one source in it), in the type's canonical
/// unit; nil where the option was not asked for or nothing contributed.
public struct StatisticsValues: Sendable, Hashable {
    public var sum: Double?
    public var average: Double?
    public var minimum: Double?
    public var maximum: Double?
    public var mostRecent: Double?
    /// The interval of the most recent sample.
    public var mostRecentInterval: DateInterval?
    /// Seconds covered by samples, overlaps counted once.
    public var duration: Double?

    public init(sum: Double? = nil, average: Double? = nil, minimum: Double? = nil, maximum: Double? = nil,
                mostRecent: Double? = nil, mostRecentInterval: DateInterval? = nil, duration: Double? = nil) {
        self.sum = sum
        self.average = average
        self.minimum = minimum
        self.maximum = maximum
        self.mostRecent = mostRecent
        self.mostRecentInterval = mostRecentInterval
        self.duration = duration
    }
}

/// HKStatistics: the statistics of a quantity type over [startDate, endDate), the
/// sources merged (and, with `separateBySource`, per source by bundle identifier).
/// Quantities come in the type's canonical unit; convert with `doubleValue(for:)`.
public struct Statistics: Sendable, Hashable {
    public let type: QuantityType
    public let startDate: Date
    public let endDate: Date
    /// Whether any sample fell in the interval (an empty bucket has no values).
    public let isEmpty: Bool
    /// The merged values.
    public let values: StatisticsValues
    /// Per source bundle identifier; empty unless `separateBySource` was asked.
    public let valuesBySource: [String: StatisticsValues]

    public init(type: QuantityType, startDate: Date, endDate: Date, values: StatisticsValues,
                valuesBySource: [String: StatisticsValues], isEmpty: Bool) {
        self.type = type
        self.startDate = startDate
        self.endDate = endDate
        self.values = values
        self.valuesBySource = valuesBySource
        self.isEmpty = isEmpty
    }

    /// The bundle identifiers with values, sorted.
    public var sources: [String] { valuesBySource.keys.sorted() }

    private func quantity(_ v: Double?) -> Quantity? { v.flatMap { try? Quantity($0, type.canonicalUnit) } }

    public var sumQuantity: Quantity? { quantity(values.sum) }
    public var averageQuantity: Quantity? { quantity(values.average) }
    public var minimumQuantity: Quantity? { quantity(values.minimum) }
    public var maximumQuantity: Quantity? { quantity(values.maximum) }
    public var mostRecentQuantity: Quantity? { quantity(values.mostRecent) }
    public var mostRecentQuantityDateInterval: DateInterval? { values.mostRecentInterval }
    /// The time covered, in seconds (`s`).
    public var duration: Quantity? { values.duration.flatMap { try? Quantity($0, .second) } }

    public func sumQuantity(for source: String) -> Quantity? { quantity(valuesBySource[source]?.sum) }
    public func averageQuantity(for source: String) -> Quantity? { quantity(valuesBySource[source]?.average) }
    public func minimumQuantity(for source: String) -> Quantity? { quantity(valuesBySource[source]?.minimum) }
    public func maximumQuantity(for source: String) -> Quantity? { quantity(valuesBySource[source]?.maximum) }
    public func mostRecentQuantity(for source: String) -> Quantity? { quantity(valuesBySource[source]?.mostRecent) }
    public func duration(for source: String) -> Quantity? {
        valuesBySource[source]?.duration.flatMap { try? Quantity($0, .second) }
    }
}

/// HKStatisticsCollection: the buckets of a collection query. Holds the non-empty
/// buckets; `enumerateStatistics(from:to:)` lists every bucket of a range, empty ones
/// included, in order.
public struct StatisticsCollection: Sendable {
    public let type: QuantityType
    public let options: StatisticsOptions
    package let buckets: StatisticsBuckets
    /// The non-empty buckets by index k (bucket k starts at anchor + k × interval).
    let filled: [Int: Statistics]
    let keys: [Int]

    init(type: QuantityType, options: StatisticsOptions, buckets: StatisticsBuckets, filled: [Int: Statistics]) {
        self.type = type
        self.options = options
        self.buckets = buckets
        self.filled = filled
        keys = filled.keys.sorted()
    }

    /// The non-empty buckets, in time order.
    public func statistics() -> [Statistics] { keys.map { filled[$0]! } }

    /// The bucket holding `date` (an empty one when no sample fell in it).
    public func statistics(for date: Date) -> Statistics {
        bucket(buckets.index(containing: date.timeIntervalSinceReferenceDate))
    }

    /// Every bucket from the one holding `from` to the one holding the instant just
    /// before `to`, in order, empty ones included (HealthKit's
    /// enumerateStatistics(from:to:with:)); a day the zone skipped is no bucket
    /// (`StatisticsBuckets.exists`). Throws `invalidRange` when `to` < `from`,
    /// `tooManyBuckets` past the limit.
    public func enumerateStatistics(from: Date, to: Date, _ body: (Statistics) throws -> Void) throws {
        guard to >= from else {
            throw StatisticsError.invalidRange("enumerate to \(to) is before from \(from)")
        }
        if to == from { return }
        let first = buckets.index(containing: from.timeIntervalSinceReferenceDate)
        let last = buckets.index(containing: to.timeIntervalSinceReferenceDate.nextDown)
        guard last - first < StatisticsBuckets.limit else {
            throw StatisticsError.tooManyBuckets(count: last - first + 1, limit: StatisticsBuckets.limit)
        }
        for k in first...last where buckets.exists(k) { try body(bucket(k)) }
    }

    func bucket(_ k: Int) -> Statistics {
        if let s = filled[k] { return s }
        return Statistics(type: type, startDate: Date(timeIntervalSinceReferenceDate: buckets.start(k)),
                          endDate: Date(timeIntervalSinceReferenceDate: buckets.start(k + 1)), values: StatisticsValues(),
                          valuesBySource: [:], isEmpty: true)
    }
}
