import Foundation
import HealthModel
import LedgerCore

/// The ledger owner's handle: the person whose data it is. Decides authorization
/// (and may change or revoke a decision at any time), sets characteristics, sees
/// every sample and may delete anything.
public actor OwnerStore {
    public nonisolated let ledger: Ledger

    public init(ledger: Ledger) { self.ledger = ledger }

    /// Grants or denies per type for an app (nil leaves that permission as it is):
    /// one event per type answered. Revocation takes effect from its event on.
    ///
    /// `requestedOnly`: as HealthKit's Settings, which lists only the types an app
    /// asked for, a share or read answer for a type the app never asked to share or
    /// read is refused (`notRequested`), and nothing is recorded.
    public func decide(app bundleIdentifier: String, _ decisions: [(type: ObjectType, share: Answer?, read: Answer?)],
                       requestedOnly: Bool = false) async throws {
        if requestedOnly {
            let permissions = try await mappingRules {
                try await ledger.read(as: .owner) { view in try decisions.map { try view.permission(ofApp: bundleIdentifier, for: $0.type) } }
            }
            for (d, p) in zip(decisions, permissions) {
                if d.share != nil, !p.requestedShare {
                    throw HealthStoreError.notRequested(app: bundleIdentifier, type: d.type.identifier, permission: "share")
                }
                if d.read != nil, !p.requestedRead {
                    throw HealthStoreError.notRequested(app: bundleIdentifier, type: d.type.identifier, permission: "read")
                }
            }
        }
        try await mappingRules {
            try await ledger.append(.decideAuthorization(bundleIdentifier: bundleIdentifier, decisions: decisions, basis: .owner))
        }
    }

    /// Grants everything an app asked for (share and read) that is not answered yet.
    public func grantRequested(app bundleIdentifier: String) async throws {
        let permissions: [(type: ObjectType, permission: TypePermission)]
        do {
            permissions = try await ledger.read(as: .owner) { try $0.permissions(ofApp: bundleIdentifier) }
        } catch RuleViolation.appNotRegistered {
            throw HealthStoreError.notRegistered(bundleIdentifier)
        }
        var decisions: [(type: ObjectType, share: Answer?, read: Answer?)] = []
        for (type, p) in permissions {
            let share: Answer? = p.requestedShare && p.share == .notDetermined ? .granted : nil
            let read: Answer? = p.requestedRead && p.read == nil ? .granted : nil
            if share != nil || read != nil { decisions.append((type, share, read)) }
        }
        if !decisions.isEmpty { try await decide(app: bundleIdentifier, decisions) }
    }

    /// Sets a characteristic. A date of birth after today (the calendar day of `now`
    /// in `timeZone`) is `invalidArgument`: it would give a negative age.
    public func setCharacteristic(_ value: CharacteristicValue, now: Date = Date(),
                                  timeZone: TimeZone = TimeZone(identifier: "UTC")!) async throws {
        if case .dateOfBirth(let birth) = value {
            let today = CivilDate.day(of: now, in: timeZone)
            guard (birth.year, birth.month, birth.day) <= (today.year, today.month, today.day) else {
                let shown = ISO8601.pad(today.year, 4) + "-" + ISO8601.pad(today.month, 2) + "-" + ISO8601.pad(today.day, 2)
                throw HealthStoreError.invalidArgument("dateOfBirth \(birth) is after today (\(shown) in \(timeZone.identifier))")
            }
        }
        try await mappingRules { try await ledger.append(.setCharacteristic(value)) }
    }

    /// Sets the owner's time zone (an IANA identifier such as `Pacific/Honolulu`):
    /// an `ownerTimeZoneSet` event, unless it is already the zone. Throws
    /// `invalidArgument` for an identifier that names no zone.
    public func setTimeZone(_ identifier: String) async throws {
        guard !identifier.isEmpty, identifier.utf8.count <= 255, TimeZone(identifier: identifier) != nil else {
            throw HealthStoreError.invalidArgument("time zone '\(identifier)' names no zone (an IANA name such as Pacific/Honolulu)")
        }
        try await mappingRules { try await ledger.append(.setOwnerTimeZone(identifier)) }
    }

    /// The owner's time zone: the one set in the ledger, else UTC.
    public func timeZone() async -> TimeZone {
        let zone = try? await ledger.read(as: .owner) { $0.ownerTimeZone }
        return zone.flatMap { $0 }.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
    }

    /// Sets the unit the owner reads a quantity type in (nil: back to the locale's):
    /// a `preferredUnitSet` event, unless it is already the choice. Throws
    /// `invalidArgument` for a unit that does not measure what the type measures.
    public func setPreferredUnit(_ unit: HealthUnit?, for type: QuantityType) async throws {
        if let unit {
            do { try PreferredUnits.check(unit, for: type) } catch {
                throw HealthStoreError.invalidArgument("preferred unit \(unit) does not fit \(type.shortName) (\(type.dimension))")
            }
        }
        try await mappingRules { try await ledger.append(.setPreferredUnit(type, unit)) }
    }

    /// HealthKit's preferredUnits(for:) for the owner: each type's unit, the owner's
    /// choice else the locale's (`PreferredUnits`).
    public func preferredUnits(for types: Set<QuantityType>, locale: String) async -> [QuantityType: HealthUnit] {
        // The owner is always a viewer, and these reads throw nothing: no error to lose.
        (try? await ledger.read(as: .owner) { view in
            Dictionary(uniqueKeysWithValues: types.map { ($0, view.preferredUnit(for: $0, locale: locale)) })
        }) ?? [:]
    }

    /// HKActivitySummaryQuery for the owner: every recorded day in the range.
    public func activitySummaries(_ query: ActivitySummaryQuery) async -> [ActivitySummary] {
        (try? await ledger.read(as: .owner) { $0.activitySummaries(query) }) ?? []  // the owner: nothing to throw
    }

    /// Clears a characteristic.
    public func clearCharacteristic(_ type: CharacteristicType) async throws {
        try await mappingRules { try await ledger.append(.clearCharacteristic(type)) }
    }

    /// The value of a characteristic, if set.
    public func characteristic(_ type: CharacteristicType) async -> CharacteristicValue? {
        (try? await ledger.read(as: .owner) { $0.characteristic(type) }) ?? nil
    }

    /// Adds activities (HKWorkoutActivity segments) to any app's workout, all or
    /// nothing: each within the workout, overlapping none of its activities, with a
    /// UUID no activity has (`invalidWorkoutActivity`).
    public func addWorkoutActivities(_ activities: [WorkoutActivity], to workout: UUID) async throws {
        guard !activities.isEmpty else { throw HealthStoreError.invalidArgument("addWorkoutActivities needs at least one activity") }
        try await mappingRules {
            try await ledger.append(.addWorkoutActivities(bundleIdentifier: nil, workout: workout, activities: activities))
        }
    }

    /// Deletes any objects, all or nothing.
    public func delete(_ uuids: [UUID], reason: String? = nil) async throws {
        guard !uuids.isEmpty else { throw HealthStoreError.invalidArgument("delete needs at least one object") }
        try await mappingRules { try await ledger.append(.delete(bundleIdentifier: nil, uuids: uuids, reason: reason)) }
    }

    /// Erases `scope` for good (issue 32): destroys the data keys that sealed it, so no
    /// copy of the ledger opens it again, and records that it happened (`erased`). An
    /// encrypted ledger's owner only; `LedgerError.erasureRefused` changes nothing.
    package func erase(_ scope: Erasure.Scope, reason: String) async throws -> Ledger.ErasureOutcome {
        try await ledger.erase(scope, reason: reason)
    }

    /// Every source's samples.
    public func execute(_ query: SampleQuery) async throws -> [Sample] {
        try await samples(query).samples
    }

    /// One page: at most `query.limit` samples (0: all) of every source after the
    /// sample `after`, in the query's order, read in one step of the ledger.
    public func samples(_ query: SampleQuery, after: UUID? = nil) async throws -> SamplePage {
        try await ledger.read(as: .owner) { try $0.samples(query, after: after) }
    }

    /// HKCorrelationQuery over every source: one page after `after`.
    public func correlations(_ query: CorrelationQuery, after: UUID? = nil) async throws -> SamplePage {
        try await ledger.read(as: .owner) { try $0.correlations(query, after: after) }
    }

    /// Every sample of `query` as an `AsyncSequence`, `pageSize` at a time.
    public nonisolated func stream(_ query: SampleQuery, pageSize: Int = 4096) -> SampleStream {
        SampleStream(query: query, pageSize: pageSize) { q, after in try await self.samples(q, after: after) }
    }

    /// Records kept raw (types this version does not know, records HealthKit would
    /// refuse), the owner's only: those with `identifier` as written (all for nil),
    /// newest first, each with its raw value, unit and reason.
    public func rawSamples(identifier: String? = nil) async throws -> [UnrecognizedSample] {
        try await ledger.read(as: .owner) { view throws -> [UnrecognizedSample] in
            var out: [UnrecognizedSample] = []
            let newestFirst = SampleQuery(type: .workout, sort: [SampleSortDescriptor(.startDate, ascending: false)])
            try view.forEachRaw(matching: { identifier == nil || $0.typeIdentifier == identifier }, newestFirst) {
                if case .unrecognized(let u) = $0 { out.append(u) }
            }
            return out
        }
    }

    /// The most recent sample of a type (every source), as the tutorial defines it.
    public func mostRecentSample(for type: ObjectType, now: Date = Date()) async throws -> Sample? {
        try await ledger.read(as: .owner) { try $0.mostRecentSample(for: type, now: now) }
    }
}
