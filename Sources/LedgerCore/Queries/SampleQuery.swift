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

/// What to sort samples by (HKSampleSortIdentifierStartDate / EndDate).
public enum SampleSortKey: String, Sendable, Hashable {
    case startDate
    case endDate
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
    /// Applied in order; ties fall back to start, end, then log order.
    public var sort: [SampleSortDescriptor]
    /// Only samples from these bundle identifiers (HKSourceQuery-style source filter).
    public var sources: Set<String>?

    public init(type: ObjectType, predicate: DatePredicate? = nil, limit: Int = 0, sort: [SampleSortDescriptor] = [],
                sources: Set<String>? = nil) {
        self.type = type
        self.predicate = predicate
        self.limit = limit
        self.sort = sort
        self.sources = sources
    }

    /// The tutorial's "most recent sample": distant past → now, strictEndDate,
    /// newest start first, limit 1. A sample dated in the future is not "most recent".
    public static func mostRecent(_ type: ObjectType, now: Date) -> SampleQuery {
        SampleQuery(type: type, predicate: DatePredicate(start: .distantPast, end: now, strictEndDate: true), limit: 1,
                    sort: [SampleSortDescriptor(.startDate, ascending: false)])
    }
}

/// Who is asking: HealthKit's visibility rule.
public enum QueryVisibility: Sendable, Hashable {
    /// The owner, or an app with read permission for the type: every source.
    case everything
    /// An app without read permission: only the samples it saved itself.
    case ownSamplesOnly(AppOrdinal)
}

extension LedgerState {
    /// The visibility an app has for a type (the owner: `nil` app).
    public func visibility(app: AppOrdinal?, type: ObjectType) -> QueryVisibility {
        guard let app else { return .everything }
        return authorization.permission(app: app, type: type).canRead ? .everything : .ownSamplesOnly(app)
    }

    /// Runs a query against the sample index: the matching live slots, sorted and
    /// limited. Sorts the type's timeline first if samples arrived out of order.
    public mutating func slots(matching query: SampleQuery, visibility: QueryVisibility) -> [UInt32] {
        let code = query.type.code
        let ordered = samples.orderedSlots(typeCode: code)
        let sourceOrdinals: Set<UInt32>? = query.sources.map { Set($0.compactMap { registry.ordinal(of: $0) }) }
        let index = samples
        func admits(_ slot: UInt32) -> Bool {
            let e = index.entry(slot)
            if e.isDeleted { return false }
            if case .ownSamplesOnly(let app) = visibility, e.app != app { return false }
            if let sourceOrdinals, !sourceOrdinals.contains(e.app) { return false }
            return query.predicate?.matches(start: e.start, end: e.end) ?? true
        }
        let primary = query.sort.first ?? SampleSortDescriptor(.startDate, ascending: true)
        let limit = query.limit > 0 ? query.limit : Int.max
        // The timeline is in (start, end, slot) order: a start-date sort with a limit
        // walks it from the right end and stops early.
        if primary.key == .startDate, query.sort.count <= 1 {
            var out: [UInt32] = []
            if primary.ascending {
                for slot in ordered where admits(slot) {
                    out.append(slot)
                    if out.count == limit { break }
                }
            } else {
                let bound = query.predicate?.end?.timeIntervalSinceReferenceDate ?? .infinity
                var i = upperBound(ordered, start: bound, index: index)
                while i > 0 && out.count < limit {
                    i -= 1
                    if admits(ordered[i]) { out.append(ordered[i]) }
                }
            }
            return out
        }
        var matches = ordered.filter(admits)
        matches.sort { a, b in
            let ea = index.entry(a), eb = index.entry(b)
            for d in query.sort {
                let (x, y) = d.key == .startDate ? (ea.start, eb.start) : (ea.end, eb.end)
                if x != y { return d.ascending ? x < y : x > y }
            }
            if ea.start != eb.start { return ea.start < eb.start }
            if ea.end != eb.end { return ea.end < eb.end }
            return a < b
        }
        return Array(matches.prefix(limit))
    }

    /// First index in `ordered` whose start is ≥ `start` (samples starting at or after
    /// the predicate's end can never match).
    private func upperBound(_ ordered: [UInt32], start: Double, index: SampleIndex) -> Int {
        var low = 0, high = ordered.count
        while low < high {
            let mid = (low + high) / 2
            if index.entry(ordered[mid]).start < start { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
