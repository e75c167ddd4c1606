import Foundation
import HealthModel
import LedgerCore

extension HealthStore {
    /// HKStatisticsQuery: the statistics of `type` over the samples matching
    /// `predicate` (and `filter`, a predicate on the samples themselves), as this app
    /// may see them: without read permission, over its own samples only.
    ///
    /// Throws `StatisticsError.optionNotAllowed` for a cumulative option on a
    /// discrete type or the reverse, `noOptions` without a computing option.
    public func statistics(for type: QuantityType, predicate: DatePredicate? = nil, filter: SamplePredicate? = nil,
                           options: StatisticsOptions) async throws -> Statistics {
        try await read { try $0.statistics(for: type, predicate: predicate, filter: filter, options: options) }
    }

    /// HKStatisticsCollectionQuery: buckets of `interval` from `anchor` (both ways) in
    /// `timeZone` (nil: the owner's zone, else UTC), over the samples matching
    /// `predicate` and `filter` that this app may see. Enumerate it with
    /// `enumerateStatistics(from:to:)`.
    public func statisticsCollection(for type: QuantityType, predicate: DatePredicate? = nil, filter: SamplePredicate? = nil,
                                     options: StatisticsOptions, anchor: Date, interval: StatisticsInterval,
                                     timeZone: TimeZone? = nil) async throws -> StatisticsCollection {
        try await read {
            try $0.statisticsCollection(for: type, predicate: predicate, filter: filter, options: options, anchor: anchor,
                                        interval: interval, timeZone: timeZone)
        }
    }
}

extension OwnerStore {
    /// HKStatisticsQuery over every source (see `HealthStore.statistics`).
    public func statistics(for type: QuantityType, predicate: DatePredicate? = nil, filter: SamplePredicate? = nil,
                           options: StatisticsOptions) async throws -> Statistics {
        try await ledger.read(as: .owner) { try $0.statistics(for: type, predicate: predicate, filter: filter, options: options) }
    }

    /// HKStatisticsCollectionQuery over every source (see `HealthStore.statisticsCollection`).
    public func statisticsCollection(for type: QuantityType, predicate: DatePredicate? = nil, filter: SamplePredicate? = nil,
                                     options: StatisticsOptions, anchor: Date, interval: StatisticsInterval,
                                     timeZone: TimeZone? = nil) async throws -> StatisticsCollection {
        try await ledger.read(as: .owner) {
            try $0.statisticsCollection(for: type, predicate: predicate, filter: filter, options: options, anchor: anchor,
                                        interval: interval, timeZone: timeZone)
        }
    }

    /// Sets the order of sources for `type` (bundle identifiers of registered apps, best
    /// first; empty: back to the default order): a `sourcePrioritySet` event, unless
    /// it is the order already set. Throws `invalidArgument` for a duplicate or an
    /// empty identifier, `appNotRegistered` (refused) for an unknown one.
    public func setSourcePriority(_ type: QuantityType, _ sources: [String]) async throws {
        guard Set(sources).count == sources.count else {
            throw HealthStoreError.invalidArgument("a source priority lists each source once")
        }
        guard sources.count <= SourcePriority.maxSources, sources.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 255 }) else {
            throw HealthStoreError.invalidArgument("a source priority lists at most \(SourcePriority.maxSources) bundle identifiers of 1 to 255 bytes")
        }
        try await mappingRules { try await ledger.append(.setSourcePriority(type, sources)) }
    }

    /// The order of sources in force for `type`: the owner's list, then every other
    /// registered source in HealthKit's default order (`SourcePriority`).
    public func sourcePriority(for type: QuantityType) async -> [String] {
        (try? await ledger.read(as: .owner) { $0.sourceOrder(for: type) }) ?? []
    }
}
