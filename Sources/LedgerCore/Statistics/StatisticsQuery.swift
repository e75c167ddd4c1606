import CLedgerAccel
import Foundation
import HealthModel
import LedgerLog

/// HKStatisticsQuery and HKStatisticsCollectionQuery over a ledger's state.
///
/// Inputs come from projections only — the type's timeline and slots
/// (`SampleIndex`: interval, source, deleted bit) and the statistics projection
/// (value, manual-entry flag, priorities) — so no log is read, unless a `filter`
/// (a predicate on metadata, devices, values …) is given: then the samples of the
/// type within the date predicate are read once to apply it.
///
/// Which samples: live quantity samples of the type that `visibility` lets the
/// caller see (an app without read permission: its own only) and that match the
/// date predicate (`DatePredicate.matches`: by default any overlap). Their values are
/// split over the buckets by time (`StatisticsEngine`). A value that comes out not
/// finite (old values too large to add up) fails the query (`StatisticsNotFinite`).
package enum StatisticsQuery {
    /// The engine's entries for a type: matching, visible, live samples in timeline order,
    /// ranked by the source priority in force.
    static func entries(type: QuantityType, predicate: DatePredicate?, filter: SamplePredicate?, visibility: QueryVisibility,
                        fs: (any LogFileSystem)?, in state: inout LedgerState) throws -> [StatisticsEntry] {
        let code = ObjectType.quantity(type).code
        var wanted: Set<UInt32>?
        if let filter {
            guard let fs else { throw QueryError.indexDisagrees(slot: nil, reason: "a filter needs the log to read samples") }
            var slots = Set<UInt32>()
            let index = state.samples
            try SampleReader(fs).forEach(SampleQuery(type: .quantity(type), predicate: predicate, filter: filter),
                                         visibility: visibility, in: &state) { sample in
                if let slot = try index.slot(of: sample.uuid) { slots.insert(slot) }
            }
            wanted = slots
        }
        let timeline = state.samples.orderedSlots(typeCode: code)
        let priority = SourcePriority(type: type, state: state)
        // Each source's two ranks (its samples, its manual entries), by app ordinal:
        // an array, not a dictionary — looked up once per sample.
        var rankTable = [(UInt32, UInt32)?](repeating: nil, count: state.registry.apps.count + 2)
        var overflowRanks: [UInt32: (UInt32, UInt32)] = [:]  // an ordinal past the registry (a forged slot)
        func ranks(of app: UInt32) -> (UInt32, UInt32) {
            let i = Int(app)
            if i < rankTable.count, let known = rankTable[i] { return known }
            if i >= rankTable.count, let known = overflowRanks[app] { return known }
            let r = (priority.rank(app: app, userEntered: false), priority.rank(app: app, userEntered: true))
            if i < rankTable.count { rankTable[i] = r } else { overflowRanks[app] = r }
            return r
        }
        let index = state.samples
        var out: [StatisticsEntry] = []
        out.reserveCapacity(timeline.count)
        // Timeline positions whose start can match: start < predicate end.
        var hi = timeline.count
        if let end = predicate?.end?.timeIntervalSinceReferenceDate {
            index.slots.withUnsafeBufferPointer { s in
                var low = 0, high = timeline.count
                while low < high {
                    let mid = (low + high) / 2
                    if s[Int(timeline[mid])].start < end { low = mid + 1 } else { high = mid }
                }
                hi = low
            }
        }
        // The value and manual-entry columns are read per sample, not as buffers: a
        // mapped column checks every block of a buffer first, and a type may hold a
        // few samples of millions (the slots, read for every timeline anyway, are).
        let values = state.statistics.values
        let manual = state.statistics.userEntered
        index.slots.withUnsafeBufferPointer { s in timeline.withUnsafeBufferPointer { t in
            for j in 0..<hi {
                // The timeline visits slots out of log order (a type's samples by date,
                // saved in another): each slot a cache miss unless asked for ahead.
                if j + Self.prefetchDistance < hi, let base = s.baseAddress {
                    let ahead = Int(t[j + Self.prefetchDistance])
                    hl_prefetch(base + ahead)
                    values.prefetch(ahead)
                    manual.prefetch(ahead)
                }
                let slot = t[j]
                let e = s[Int(slot)]
                if e.state & SampleIndex.deletedBit != 0 { continue }
                if let wanted, !wanted.contains(slot) { continue }
                if let predicate, !predicate.matches(start: e.start, end: e.end) { continue }
                if case .everything = visibility {} else if !index.visible(slot, to: visibility) { continue }
                let value = values[Int(slot)]
                if value.isNaN { continue }
                let app = index.app(slot, e)
                let r = ranks(of: app)
                out.append(StatisticsEntry(start: e.start, end: e.end, value: value, source: app,
                                           rank: manual[Int(slot)] != 0 ? r.1 : r.0, order: slot))
            }
        } }
        try state.checkIntact()  // nothing answered from a damaged mapped snapshot (S8)
        return out
    }

    /// How many timeline entries ahead `entries` asks for a slot's cache line.
    static let prefetchDistance = 16

    /// HKStatisticsQuery: one interval — the date predicate's [start, end), or where it
    /// is open, the matching samples' extent.
    package static func statistics(type: QuantityType, predicate: DatePredicate?, filter: SamplePredicate? = nil,
                                  options: StatisticsOptions, visibility: QueryVisibility, fs: (any LogFileSystem)?,
                                  in state: inout LedgerState) throws -> Statistics {
        try options.check(for: type)
        let list = try entries(type: type, predicate: predicate, filter: filter, visibility: visibility, fs: fs, in: &state)
        var low = predicate?.start?.timeIntervalSinceReferenceDate
        var high = predicate?.end?.timeIntervalSinceReferenceDate
        if low == nil { low = list.map(\.start).min() }
        if high == nil { high = list.map { $0.end > $0.start ? $0.end : $0.start.nextUp }.max() }
        guard let low, let high, high > low else {
            let at = Date(timeIntervalSinceReferenceDate: low ?? high ?? 0)
            return Statistics(type: type, startDate: at, endDate: at, values: StatisticsValues(), valuesBySource: [:],
                              isEmpty: true)
        }
        let result = StatisticsEngine.compute(list, style: type.aggregationStyle, options: options, borders: [low, high])[0]
        let s = statistics(type: type, result, from: low, to: high, state: state)
        try StatisticsNotFinite.check(s)
        return s
    }

    /// HKStatisticsCollectionQuery: buckets of `interval` from `anchor` in `timeZone`,
    /// over the date predicate's range (where open, the matching samples' extent).
    package static func collection(type: QuantityType, predicate: DatePredicate?, filter: SamplePredicate? = nil,
                                  options: StatisticsOptions, anchor: Date, interval: StatisticsInterval, timeZone: TimeZone,
                                  visibility: QueryVisibility, fs: (any LogFileSystem)?,
                                  in state: inout LedgerState) throws -> StatisticsCollection {
        try options.check(for: type)
        let buckets = StatisticsBuckets(anchor: anchor, interval: interval, timeZone: timeZone)
        if let answer = try collectionFromDailySums(type: type, predicate: predicate, filter: filter, options: options,
                                                    buckets: buckets, visibility: visibility, in: &state) {
            return answer
        }
        let list = try entries(type: type, predicate: predicate, filter: filter, visibility: visibility, fs: fs, in: &state)
        var low = predicate?.start?.timeIntervalSinceReferenceDate
        var high = predicate?.end?.timeIntervalSinceReferenceDate.nextDown
        if low == nil { low = list.map(\.start).min() }
        if high == nil { high = list.map(\.end).max() }
        var filled: [Int: Statistics] = [:]
        if let low, let high, high >= low, !list.isEmpty {
            let first = buckets.index(containing: low), last = buckets.index(containing: high)
            let borders = try buckets.borders(from: first, through: last)
            let results = StatisticsEngine.compute(list, style: type.aggregationStyle, options: options, borders: borders)
            for (i, r) in results.enumerated() {
                // a bucket of no length (a day a zone skipped) holds nothing and is not a bucket
                guard let r, borders[i + 1] > borders[i] else { continue }
                let s = statistics(type: type, r, from: borders[i], to: borders[i + 1], state: state)
                try StatisticsNotFinite.check(s)  // never a bucket without its value
                filled[first + i] = s
            }
        }
        return StatisticsCollection(type: type, options: options, buckets: buckets, filled: filled)
    }

    static func statistics(type: QuantityType, _ r: StatisticsEngine.BucketResult?, from: Double, to: Double,
                           state: LedgerState) -> Statistics {
        var bySource: [String: StatisticsValues] = [:]
        for (app, v) in r?.bySource ?? [:] { bySource[state.registry.label(app)] = v }
        return Statistics(type: type, startDate: Date(timeIntervalSinceReferenceDate: from),
                          endDate: Date(timeIntervalSinceReferenceDate: to), values: r?.merged ?? StatisticsValues(),
                          valuesBySource: bySource, isEmpty: r == nil)
    }
}

extension StatisticsQuery {
    /// The statistics engine's inputs for a type, with no log read: each live, visible
    /// quantity sample matching `predicate` (any overlap, as sample queries), in
    /// timeline order (start, end, slot), with its interval, value in the type's
    /// canonical unit and source — what a per-day chart needs instead of decoded samples.
    package static func values(type: QuantityType, predicate: DatePredicate?, visibility: QueryVisibility,
                              in state: inout LedgerState) throws -> [StatisticsEntry] {
        try entries(type: type, predicate: predicate, filter: nil, visibility: visibility, fs: nil, in: &state)
    }
}
