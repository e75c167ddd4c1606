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
        let bundle = app.bundleIdentifier
        let fs = ledger.fs
        return try await ledger.read { state throws -> Statistics in
            guard let ordinal = state.registry.ordinal(of: bundle) else {
                throw HealthStoreError.invalidArgument("\(bundle) is not registered")
            }
            return try StatisticsQuery.statistics(type: type, predicate: predicate, filter: filter, options: options,
                                                  visibility: state.visibility(app: ordinal, type: .quantity(type)), fs: fs,
                                                  in: &state)
        }
    }

    /// HKStatisticsCollectionQuery: buckets of `interval` from `anchor` (both ways) in
    /// `timeZone` (nil: the owner's zone, else UTC), over the samples matching
    /// `predicate` and `filter` that this app may see. Enumerate it with
    /// `enumerateStatistics(from:to:)`.
    public func statisticsCollection(for type: QuantityType, predicate: DatePredicate? = nil, filter: SamplePredicate? = nil,
                                     options: StatisticsOptions, anchor: Date, interval: StatisticsInterval,
                                     timeZone: TimeZone? = nil) async throws -> StatisticsCollection {
        let bundle = app.bundleIdentifier
        let fs = ledger.fs
        return try await ledger.read { state throws -> StatisticsCollection in
            guard let ordinal = state.registry.ordinal(of: bundle) else {
                throw HealthStoreError.invalidArgument("\(bundle) is not registered")
            }
            return try StatisticsQuery.collection(type: type, predicate: predicate, filter: filter, options: options,
                                                  anchor: anchor, interval: interval,
                                                  timeZone: timeZone ?? state.ownerZone,
                                                  visibility: state.visibility(app: ordinal, type: .quantity(type)), fs: fs,
                                                  in: &state)
        }
    }
}

extension OwnerStore {
    /// HKStatisticsQuery over every source (see `HealthStore.statistics`).
    public func statistics(for type: QuantityType, predicate: DatePredicate? = nil, filter: SamplePredicate? = nil,
                           options: StatisticsOptions) async throws -> Statistics {
        let fs = ledger.fs
        return try await ledger.read { state in
            try StatisticsQuery.statistics(type: type, predicate: predicate, filter: filter, options: options,
                                           visibility: .everything, fs: fs, in: &state)
        }
    }

    /// HKStatisticsCollectionQuery over every source (see `HealthStore.statisticsCollection`).
    public func statisticsCollection(for type: QuantityType, predicate: DatePredicate? = nil, filter: SamplePredicate? = nil,
                                     options: StatisticsOptions, anchor: Date, interval: StatisticsInterval,
                                     timeZone: TimeZone? = nil) async throws -> StatisticsCollection {
        let fs = ledger.fs
        return try await ledger.read { state in
            try StatisticsQuery.collection(type: type, predicate: predicate, filter: filter, options: options, anchor: anchor,
                                           interval: interval, timeZone: timeZone ?? state.ownerZone, visibility: .everything,
                                           fs: fs, in: &state)
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
        try await mappingRules { try await ledger.execute(.setSourcePriority(type, sources)) }
    }

    /// The order of sources in force for `type`: the owner's list, then every other
    /// registered source in HealthKit's default order (`SourcePriority`).
    public func sourcePriority(for type: QuantityType) async -> [String] {
        await ledger.read { state in SourcePriority(type: type, state: state).ordered(state) }
    }
}

extension LedgerState {
    /// The owner's time zone, else UTC.
    var ownerZone: TimeZone { ownerTimeZone.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")! }
}
