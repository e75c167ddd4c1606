import Foundation
import HealthModel

/// HealthKit's date predicate over a target interval [start, end) (nil: unbounded).
///
/// - no options: the sample overlaps the interval: sampleEnd ≥ start and sampleStart < end;
/// - `strictStartDate`: start ≤ sampleStart < end;
/// - `strictEndDate`: start ≤ sampleEnd < end;
/// - both: both hold.
public struct DatePredicate: Sendable, Hashable {
    public var start: Date?
    public var end: Date?
    public var strictStartDate: Bool
    public var strictEndDate: Bool

    public init(start: Date?, end: Date?, strictStartDate: Bool = false, strictEndDate: Bool = false) {
        self.start = start
        self.end = end
        self.strictStartDate = strictStartDate
        self.strictEndDate = strictEndDate
    }

    /// Whether a sample over [sampleStart, sampleEnd] (reference-date seconds) matches.
    public func matches(start sampleStart: Double, end sampleEnd: Double) -> Bool {
        let s = start?.timeIntervalSinceReferenceDate ?? -.infinity
        let e = end?.timeIntervalSinceReferenceDate ?? .infinity
        if strictStartDate || strictEndDate {
            if strictStartDate && !(s <= sampleStart && sampleStart < e) { return false }
            if strictEndDate && !(s <= sampleEnd && sampleEnd < e) { return false }
            return true
        }
        return sampleEnd >= s && sampleStart < e
    }
}

/// What to sort samples by: HKSampleSortIdentifierStartDate / EndDate, and the
/// workout keys (HKWorkoutSortIdentifierDuration / TotalEnergyBurned /
/// TotalDistance). A workout key compares the workout's duration (seconds), total
/// energy (in kcal) or total distance (in m); a missing total — or a sample that is
/// not a workout — is **smallest**, as NSSortDescriptor orders nil: first ascending,
/// last descending. Workout keys are not in the sample index: the engine reads the
/// selected workouts once to sort them (`ResultOrder`).
public enum SampleSortKey: String, Sendable, Hashable, CaseIterable {
    case startDate
    case endDate
    case workoutDuration
    case workoutEnergy
    case workoutDistance

    /// Whether the key is a workout field (not in the sample index).
    public var isWorkoutField: Bool { self != .startDate && self != .endDate }

    /// The sample's value for a workout key (nil: none, which sorts smallest); nil for
    /// the date keys.
    public func workoutValue(_ sample: Sample) -> Double? {
        guard case .workout(let w) = sample else { return nil }
        switch self {
        case .startDate, .endDate: return nil
        case .workoutDuration: return w.duration
        case .workoutEnergy: return w.totalEnergyBurned.flatMap { try? $0.doubleValue(for: .kilocalorie) }
        case .workoutDistance: return w.totalDistance.flatMap { try? $0.doubleValue(for: .meter) }
        }
    }
}

/// A sort descriptor: key and direction.
public struct SampleSortDescriptor: Sendable, Hashable {
    public let key: SampleSortKey
    public let ascending: Bool

    public init(_ key: SampleSortKey, ascending: Bool) {
        self.key = key
        self.ascending = ascending
    }
}

/// HKSampleQuery's parameters.
public struct SampleQuery: Sendable, Hashable {
    public var type: ObjectType
    public var predicate: DatePredicate?
    /// 0 means no limit, as in HealthKit.
    public var limit: Int
    /// Applied in order; ties fall back to start, end, then log order, in the
    /// direction of the last descriptor (`ResultOrder`): a total order. Workout keys
    /// (`SampleSortKey.workoutDuration`, …) apply to workout queries.
    public var sort: [SampleSortDescriptor]
    /// Only samples from these bundle identifiers (HKSourceQuery-style source filter).
    public var sources: Set<String>?
    /// HealthKit's other predicates (UUIDs, devices, metadata, values, workouts,
    /// AND/OR/NOT), applied to decoded samples after the index selected by type,
    /// dates, visibility and source. (`slots(matching:)` reads the index only and
    /// does not apply it.)
    public var filter: SamplePredicate?

    public init(type: ObjectType, predicate: DatePredicate? = nil, limit: Int = 0, sort: [SampleSortDescriptor] = [],
                sources: Set<String>? = nil, filter: SamplePredicate? = nil) {
        self.type = type
        self.predicate = predicate
        self.limit = limit
        self.sort = sort
        self.sources = sources
        self.filter = filter
    }

    /// The tutorial's "most recent sample": distant past → now, strictEndDate,
    /// newest start first, limit 1. A sample dated in the future is not "most recent".
    public static func mostRecent(_ type: ObjectType, now: Date) -> SampleQuery {
        SampleQuery(type: type, predicate: DatePredicate(start: .distantPast, end: now, strictEndDate: true), limit: 1,
                    sort: [SampleSortDescriptor(.startDate, ascending: false)])
    }
}

/// HKCorrelationQuery's parameters: a correlation type, a date predicate and a
/// predicate on the correlation itself (as `SampleQuery`), and a predicate per member
/// type (`samplePredicates`).
///
/// As in HealthKit, a correlation is returned only if its own predicates and all the
/// member predicates match; a member predicate matches when **at least one** member of
/// its type satisfies it (so a correlation with no member of that type does not
/// match). For an app, the members are the ones it may see (`QueryVisibility`): a
/// member predicate on a type the app may not read matches only its own correlations.
public struct CorrelationQuery: Sendable, Hashable {
    public var type: CorrelationType
    public var predicate: DatePredicate?
    /// A predicate on the correlation sample itself (UUID, source, metadata, …).
    public var filter: SamplePredicate?
    /// Per member type, a predicate at least one member of that type must satisfy.
    public var memberPredicates: [QuantityType: SamplePredicate]
    /// 0 means no limit.
    public var limit: Int
    public var sort: [SampleSortDescriptor]
    public var sources: Set<String>?

    public init(type: CorrelationType, predicate: DatePredicate? = nil, filter: SamplePredicate? = nil,
                memberPredicates: [QuantityType: SamplePredicate] = [:], limit: Int = 0,
                sort: [SampleSortDescriptor] = [], sources: Set<String>? = nil) {
        self.type = type
        self.predicate = predicate
        self.filter = filter
        self.memberPredicates = memberPredicates
        self.limit = limit
        self.sort = sort
        self.sources = sources
    }

    /// The sample query over the correlation type, without the member predicates.
    public var sampleQuery: SampleQuery {
        SampleQuery(type: .correlation(type), predicate: predicate, limit: limit, sort: sort, sources: sources, filter: filter)
    }

    /// Whether a correlation (with the members the caller may see) matches the filter
    /// and every member predicate.
    public func matches(_ sample: Sample) -> Bool {
        guard case .correlation(let c) = sample, c.type == type else { return false }
        if let filter, !filter.matches(sample) { return false }
        return memberPredicates.allSatisfy { memberType, p in
            c.objects.contains { $0.type == memberType && p.matches(.quantity($0)) }
        }
    }
}

/// Who is asking: HealthKit's visibility rule.
package enum QueryVisibility: Sendable, Hashable {
    /// The owner, or an app with read permission for the type: every source.
    case everything
    /// An app without read permission: only the samples it saved itself.
    case ownSamplesOnly(AppOrdinal)
    /// An app reading a correlation type (which no one can be granted): as in
    /// HealthKit, it sees its own correlations whole, and others' through the member
    /// types it may read — a correlation with at least one readable member, holding
    /// exactly its readable members.
    case correlationMembers(app: AppOrdinal, readable: Set<UInt16>)
}

extension LedgerState {
    /// The visibility an app has for a type (the owner: `nil` app).
    package func visibility(app: AppOrdinal?, type: ObjectType) -> QueryVisibility {
        guard let app else { return .everything }
        if case .correlation(let c) = type {
            let readable = QuantityType.allTypes.filter { c.admits($0) && authorization.permission(app: app, type: .quantity($0)).canRead }
            return .correlationMembers(app: app, readable: Set(readable.map { ObjectType.quantity($0).code }))
        }
        return authorization.permission(app: app, type: type).canRead ? .everything : .ownSamplesOnly(app)
    }

    /// The query's matching live slots in its order (`ResultOrder`), limited: the
    /// sample index alone, nothing read from the log (so workout sort keys, which
    /// are not in the index, are skipped here). (`SampleReader` streams the
    /// samples themselves in the same order.)
    package mutating func slots(matching query: SampleQuery, visibility: QueryVisibility) -> [UInt32] {
        let ordered = samples.orderedSlots(typeCode: query.type.code)
        let sourceOrdinals: Set<UInt32>? = query.sources.map { Set($0.compactMap { registry.ordinal(of: $0) }) }
        let index = samples
        func admits(_ slot: UInt32) -> Bool {
            let e = index.entry(slot)
            if e.isDeleted { return false }
            if !index.visible(slot, to: visibility) { return false }
            if let sourceOrdinals, !sourceOrdinals.contains(e.app) { return false }
            return query.predicate?.matches(start: e.start, end: e.end) ?? true
        }
        let order = ResultOrder(query.sort)
        var matches = ordered.filter(admits)
        index.slots.withUnsafeBufferPointer { s in matches.sort { order.before($0, $1, s) } }
        return Array(matches.prefix(query.limit > 0 ? query.limit : Int.max))
    }
}
