import Foundation
import HealthModel

/// What a statistics query computes (HKStatisticsOptions). The cumulative option
/// (`cumulativeSum`) applies to cumulative types only, the discrete ones
/// (`discreteAverage`, `discreteMin`, `discreteMax`, `mostRecent`) to the others;
/// `duration` and `separateBySource` to any quantity type.
public struct StatisticsOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The sum, sources merged by priority (HKStatisticsOptionCumulativeSum).
    public static let cumulativeSum = StatisticsOptions(rawValue: 1)
    /// The average: arithmetic, time-weighted or equivalent continuous level by the type's style.
    public static let discreteAverage = StatisticsOptions(rawValue: 2)
    public static let discreteMin = StatisticsOptions(rawValue: 4)
    public static let discreteMax = StatisticsOptions(rawValue: 8)
    /// The most recent sample's quantity and interval: greatest (start, end, log order).
    public static let mostRecent = StatisticsOptions(rawValue: 16)
    /// The time covered by samples, overlaps counted once (HKStatisticsOptionDuration).
    public static let duration = StatisticsOptions(rawValue: 32)
    /// Also compute every value per source.
    public static let separateBySource = StatisticsOptions(rawValue: 64)

    /// The options that only discrete types accept.
    public static let discreteOnly: StatisticsOptions = [.discreteAverage, .discreteMin, .discreteMax, .mostRecent]

    /// The options by name (`cumulativeSum`, …), in bit order.
    public static let names: [(StatisticsOptions, String)] = [
        (.cumulativeSum, "cumulativeSum"), (.discreteAverage, "discreteAverage"), (.discreteMin, "discreteMin"),
        (.discreteMax, "discreteMax"), (.mostRecent, "mostRecent"), (.duration, "duration"),
        (.separateBySource, "separateBySource"),
    ]

    /// Throws unless the options suit a type of aggregation style `style`, as HealthKit
    /// does: a cumulative option on a discrete type (or the reverse) is
    /// `optionNotAllowed`; no computing option at all is `noOptions`.
    public func check(for type: QuantityType) throws(StatisticsError) {
        let style = type.aggregationStyle
        if subtracting(.separateBySource).isEmpty { throw .noOptions }
        if style == .cumulative, let bad = Self.names.first(where: { Self.discreteOnly.contains($0.0) && contains($0.0) }) {
            throw .optionNotAllowed(option: bad.1, type: type.shortName, style: style.rawValue)
        }
        if style != .cumulative, contains(.cumulativeSum) {
            throw .optionNotAllowed(option: "cumulativeSum", type: type.shortName, style: style.rawValue)
        }
    }
}

/// The calendar step of a statistics collection: a unit and how many of it
/// (HKStatisticsCollectionQuery's `intervalComponents`).
public struct StatisticsInterval: Sendable, Hashable, CustomStringConvertible {
    /// Calendar units a collection can step by.
    public enum Unit: String, Sendable, Hashable, CaseIterable {
        case minute, hour, day, week, month, year
    }
    public let unit: Unit
    public let count: Int

    /// Largest `count` accepted.
    public static let maxCount = 100_000

    /// Throws `invalidInterval` unless 1 ≤ count ≤ `maxCount`.
    public init(_ unit: Unit, count: Int = 1) throws(StatisticsError) {
        guard count >= 1, count <= Self.maxCount else {
            throw .invalidInterval("\(count) \(unit.rawValue)s: the count must lie in 1…\(Self.maxCount)")
        }
        self.unit = unit
        self.count = count
    }

    /// `1 day`, `2 weeks`.
    public var description: String { "\(count) \(unit.rawValue)\(count == 1 ? "" : "s")" }
}

/// Why a statistics query was refused.
public enum StatisticsError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An option the type's aggregation style does not allow (HealthKit refuses it too).
    case optionNotAllowed(option: String, type: String, style: String)
    /// No option that computes anything.
    case noOptions
    /// A collection interval out of range.
    case invalidInterval(String)
    /// The collection would have more buckets than the limit.
    case tooManyBuckets(count: Int, limit: Int)
    /// A time zone name that names no IANA zone.
    case unknownTimeZone(String)
    /// Statistics are for quantity types only.
    case notAQuantityType(String)
    /// A date range whose end is before its start.
    case invalidRange(String)

    public var description: String {
        switch self {
        case .optionNotAllowed(let option, let type, let style):
            "optionNotAllowed: \(option) does not apply to \(type), whose aggregation style is \(style)"
        case .noOptions: "noOptions: ask for at least one of cumulativeSum, discreteAverage, discreteMin, discreteMax, mostRecent, duration"
        case .invalidInterval(let text): "invalidInterval: \(text)"
        case .tooManyBuckets(let count, let limit): "tooManyBuckets: \(count) buckets, more than the limit of \(limit) (a longer interval or a shorter range)"
        case .unknownTimeZone(let name): "unknownTimeZone: '\(name)' names no time zone (an IANA name such as Europe/Berlin)"
        case .notAQuantityType(let type): "notAQuantityType: statistics are computed for quantity types, not \(type)"
        case .invalidRange(let text): "invalidRange: \(text)"
        }
    }
}
