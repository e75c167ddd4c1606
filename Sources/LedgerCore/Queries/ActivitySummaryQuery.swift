import HealthModel

/// HKActivitySummaryQuery: the days of activity rings between two calendar days,
/// both included (HealthKit's `predicate(forActivitySummariesBetweenStart:end:)`
/// on date components), oldest first. A nil bound is open.
public struct ActivitySummaryQuery: Hashable, Sendable {
    /// The first day, included; nil: from the first day recorded.
    public let start: DateOfBirth?
    /// The last day, included; nil: to the last day recorded.
    public let end: DateOfBirth?

    /// Throws `invalidField` when `end` is before `start`.
    public init(start: DateOfBirth? = nil, end: DateOfBirth? = nil) throws(HealthModelError) {
        if let start, let end, end < start {
            throw .invalidField(field: "activity summary range", reason: "\(end) is before \(start)")
        }
        self.start = start
        self.end = end
    }

    /// Whether `day` is in the range.
    public func contains(_ day: DateOfBirth) -> Bool {
        (start.map { $0 <= day } ?? true) && (end.map { day <= $0 } ?? true)
    }
}

extension LedgerState {
    /// The summaries `query` selects, as `visibility` may see them: everything for
    /// the owner; for an app, all of them with read permission for
    /// `HKActivitySummaryType` and none without (summaries have no source an app could
    /// own, and HealthKit never reveals a missing read permission: the answer is empty).
    package func activitySummaries(_ query: ActivitySummaryQuery, app: AppOrdinal?) -> [ActivitySummary] {
        if let app, !authorization.permission(app: app, type: .activitySummary).canRead { return [] }
        let low = query.start.map(Self.dayKey) ?? Int.min, high = query.end.map(Self.dayKey) ?? Int.max
        return activitySummaries.keys.filter { $0 >= low && $0 <= high }.sorted().map { activitySummaries[$0]! }
    }
}
