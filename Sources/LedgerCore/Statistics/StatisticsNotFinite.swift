import Foundation
import HealthModel

/// A statistic that is not a finite number: the ledger holds values of the type too
/// large to add up (or to average) — saved before values had an upper bound
/// (`QuantityValueRange`), since values read back from a log are not
/// range-checked. The read fails with this, naming the bucket, rather than answer a
/// bucket without its value or leave it out. A read failing on stored data: not an
/// input error (the command line's exit 1).
public struct StatisticsNotFinite: Error, Hashable, Sendable, CustomStringConvertible {
    /// The quantity type.
    public let type: QuantityType
    /// `sum`, `average`, `minimum`, `maximum`, `mostRecent` or `duration`.
    public let statistic: String
    /// The bucket's interval.
    public let start: Date
    public let end: Date
    /// The source, for a per-source value (`separateBySource`), else nil.
    public let source: String?

    public init(type: QuantityType, statistic: String, start: Date, end: Date, source: String? = nil) {
        self.type = type
        self.statistic = statistic
        self.start = start
        self.end = end
        self.source = source
    }

    public var description: String {
        "statisticNotFinite: the \(type.shortName) \(statistic)\(source.map { " of \($0)" } ?? "") from \(ISO8601.string(start)) to "
            + "\(ISO8601.string(end)) is not a finite number: the ledger holds \(type.shortName) values too large to add up "
            + "(saved before values were bounded at \(type.validRange.upperText(unit: type.canonicalUnit.canonicalString)))"
    }

    /// Throws for the first value of `statistics` (merged, then per source) that is
    /// not finite.
    static func check(_ statistics: Statistics) throws(StatisticsNotFinite) {
        func check(_ v: StatisticsValues, source: String?) throws(StatisticsNotFinite) {
            for (name, value) in [("sum", v.sum), ("average", v.average), ("minimum", v.minimum), ("maximum", v.maximum),
                                  ("mostRecent", v.mostRecent), ("duration", v.duration)] {
                if let value, !value.isFinite {
                    throw StatisticsNotFinite(type: statistics.type, statistic: name, start: statistics.startDate,
                                              end: statistics.endDate, source: source)
                }
            }
        }
        try check(statistics.values, source: nil)
        for source in statistics.sources { try check(statistics.valuesBySource[source]!, source: source) }
    }
}
