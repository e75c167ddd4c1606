import Foundation
import HealthModel

extension LedgerReadView {
    /// HKStatisticsQuery as this viewer: the statistics of `type` over the samples
    /// matching `predicate` (and `filter`, a predicate on the samples themselves) that
    /// the viewer may see (an app without read permission: its own only), sources
    /// merged by the priority in force.
    ///
    /// Throws `StatisticsError.optionNotAllowed` for a cumulative option on a discrete
    /// type or the reverse, `noOptions` without a computing option, and S8 damage.
    public mutating func statistics(for type: QuantityType, predicate: DatePredicate? = nil, filter: SamplePredicate? = nil,
                                    options: StatisticsOptions) throws -> Statistics {
        try StatisticsQuery.statistics(type: type, predicate: predicate, filter: filter, options: options,
                                       visibility: visibility(for: .quantity(type)), fs: fs, in: &state)
    }

    /// HKStatisticsCollectionQuery as this viewer: buckets of `interval` from `anchor`
    /// (both ways) in `timeZone` (nil: the owner's zone, else UTC), over the samples
    /// matching `predicate` and `filter` that the viewer may see.
    public mutating func statisticsCollection(for type: QuantityType, predicate: DatePredicate? = nil,
                                              filter: SamplePredicate? = nil, options: StatisticsOptions, anchor: Date,
                                              interval: StatisticsInterval, timeZone: TimeZone? = nil) throws -> StatisticsCollection {
        let zone = timeZone ?? state.ownerTimeZone.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
        return try StatisticsQuery.collection(type: type, predicate: predicate, filter: filter, options: options,
                                              anchor: anchor, interval: interval, timeZone: zone,
                                              visibility: visibility(for: .quantity(type)), fs: fs, in: &state)
    }

    /// The quantity samples of `type` matching `predicate` that the viewer may see, as
    /// the statistics projection holds them (interval, value in the canonical unit,
    /// source), in start order, without decoding a sample from the log.
    public mutating func quantityValues(for type: QuantityType, predicate: DatePredicate? = nil) throws -> [StatisticsEntry] {
        try StatisticsQuery.values(type: type, predicate: predicate, visibility: visibility(for: .quantity(type)), in: &state)
    }

    /// Samples of `types` matching `predicate` that the viewer may see (as a sample
    /// query of each type shows them), counted per (type, source, device), without
    /// decoding the samples.
    public mutating func sourceDeviceCounts(for types: [ObjectType], predicate: DatePredicate? = nil) throws -> [SourceDeviceCount] {
        let app = app
        return try SourceDeviceCounts.count(types: types, predicate: predicate,
                                            visibility: { type, state in app.map { state.visibility(app: $0, type: type) } ?? .everything },
                                            fs: fs, in: &state)
    }

    /// The order of sources in force for `type`: the owner's list, then every other
    /// registered source in HealthKit's default order (`SourcePriority`).
    public func sourceOrder(for type: QuantityType) -> [String] {
        SourcePriority(type: type, state: state).ordered(state)
    }
}
