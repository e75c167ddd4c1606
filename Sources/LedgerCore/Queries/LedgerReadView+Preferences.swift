import Foundation
import HealthModel

extension LedgerReadView {
    /// HKActivitySummaryQuery as this viewer: the days in `query`'s range, oldest
    /// first; an app without read permission for `ObjectType.activitySummary` gets none
    /// (HealthKit never tells an app it may not read).
    public func activitySummaries(_ query: ActivitySummaryQuery) -> [ActivitySummary] {
        state.activitySummaries(query, app: app)
    }

    /// For an app, the first of `types` it never asked to share or read (HealthKit's
    /// `preferredUnits(for:)` refuses those as `authorizationNotDetermined`); nil when
    /// it asked for all of them, and always nil for the owner.
    public func firstTypeNotRequested(_ types: [QuantityType]) -> QuantityType? {
        guard let app else { return nil }
        return types.first { type in
            let p = state.authorization.permission(app: app, type: .quantity(type))
            return !(p.requestedShare || p.requestedRead)
        }
    }

    /// The unit `type` is shown in: the owner's choice, else `locale`'s (`PreferredUnits`).
    public func preferredUnit(for type: QuantityType, locale: String) -> HealthUnit {
        PreferredUnits.unit(for: type, locale: locale, ownerChoice: state.preferredUnits)
    }

    /// The samples associated with `workout` (`add(_:to:)`) that this viewer may see,
    /// of `type`.
    public mutating func associatedSamples(of workout: UUID, type: ObjectType) throws -> [Sample] {
        let uuids = Set(state.associations[workout] ?? [])
        guard !uuids.isEmpty else { return [] }
        return try samples(SampleQuery(type: type, filter: .uuids(uuids))).samples
    }

    /// Which of `uuids` the viewing app saved, live or deleted (a UUID is never
    /// reused, rule E3); for the owner, which are stored at all. Others' UUIDs are
    /// never reported to an app. Throws a mapped snapshot's damage (S8) rather than
    /// answer from it, and a UUID the log does not give (S11).
    public func savedUUIDs(among uuids: [UUID]) throws -> Set<UUID> {
        Set(try uuids.filter { uuid in
            guard let slot = try state.lookUp(uuid) else { return false }
            return app.map { state.samples.app(slot) == $0 } ?? true
        })
    }
}
