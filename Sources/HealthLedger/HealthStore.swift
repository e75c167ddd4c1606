import Foundation
import HealthModel
import LedgerCore
import LedgerLog

/// HKHealthStore's behaviour for one app, on a ledger.
///
/// Every write appends exactly the events of the event-sourcing layer through the
/// shared rules; a call that fails writes nothing. Reads follow HealthKit's
/// visibility: read permission is never revealed, and without it an app sees only
/// the samples it saved itself.
public actor HealthStore {
    /// The ledger this store writes to (shared by every app in the process). Not
    /// public: code handed an app's store must not reach the ledger's write verbs and
    /// append a grant for its own app; the package's front ends and the
    /// report read through it.
    package nonisolated let ledger: Ledger
    /// The app this store acts for.
    public nonisolated let app: AppRegistration

    /// A store for `app` on an open ledger. Registers the app (an event) when it is
    /// new or its name or purpose strings changed.
    public init(ledger: Ledger, app: AppRegistration) async throws {
        guard !app.bundleIdentifier.isEmpty else { throw HealthStoreError.invalidArgument("an app needs a bundle identifier") }
        self.ledger = ledger
        self.app = app
        try await mappingRules { try await ledger.append(.registerApp(app)) }
    }

    // MARK: Availability

    /// Whether health data can be stored at `path`: the ledger is present, readable
    /// and writable. HKHealthStore.isHealthDataAvailable().
    public static func isHealthDataAvailable(at path: String) -> Bool {
        (try? checkAvailability(at: path)) != nil
    }

    /// Throws `notAvailableOnDevice` saying why health data cannot be stored at `path`.
    public static func checkAvailability(at path: String) throws {
        var isDirectory: ObjCBool = false
        // unsafe: Foundation takes the flag through a pointer, for the call only.
        guard unsafe FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw HealthStoreError.notAvailableOnDevice(path: path, reason: "no ledger folder (run `healthledger init`)")
        }
        let log = path + "/" + LogWriter.logFileName
        guard FileManager.default.fileExists(atPath: log) else {
            throw HealthStoreError.notAvailableOnDevice(path: path, reason: "the folder holds no ledger")
        }
        guard FileManager.default.isReadableFile(atPath: log) else {
            throw HealthStoreError.notAvailableOnDevice(path: path, reason: "the ledger is not readable")
        }
        guard FileManager.default.isWritableFile(atPath: log), FileManager.default.isWritableFile(atPath: path) else {
            throw HealthStoreError.notAvailableOnDevice(path: path, reason: "the ledger is not writable")
        }
    }

    /// HKHealthStore.earliestPermittedSampleDate(): no sample may start before it.
    /// The ledger keeps every date from 0001-01-01T00:00:00Z (`ISO8601.validRange`,
    /// the range its encoding and printing cover); a sample dated before it cannot be
    /// made (`dateOutOfRange`), so a save of one never reaches the ledger, as HealthKit
    /// refuses such a save. Queries of earlier intervals are allowed and find nothing.
    public nonisolated func earliestPermittedSampleDate() -> Date { Self.earliestPermittedSampleDate }

    /// The earliest permitted sample date, without a store.
    public static let earliestPermittedSampleDate = ISO8601.validRange.lowerBound

    var ordinal: AppOrdinal {
        get async throws {
            guard let o = await ledger.ordinal(ofApp: app.bundleIdentifier) else {
                throw HealthStoreError.notRegistered(app.bundleIdentifier)
            }
            return o
        }
    }

    /// One read as this app, in one step of the ledger (`Ledger.read(as:)`): the
    /// visibility is the read view's, never this store's.
    nonisolated func read<T: Sendable>(_ body: @Sendable (inout LedgerReadView) throws -> T) async throws -> T {
        try await ledger.storeRead(as: .app(app.bundleIdentifier), body)
    }

    // MARK: Activity summaries

    /// HKActivitySummaryQuery: the days of activity rings in `query`'s range, oldest
    /// first — all of them once the owner granted reading `HKActivitySummaryType`
    /// (`ObjectType.activitySummary`), none before (HealthKit never tells an app it
    /// may not read).
    public func activitySummaries(_ query: ActivitySummaryQuery) async throws -> [ActivitySummary] {
        try await read { $0.activitySummaries(query) }
    }

    // MARK: Preferred units

    /// HKHealthStore.preferredUnits(for:): the unit the person reads each type in —
    /// their choice (`OwnerStore.setPreferredUnit`), else the locale's
    /// (`PreferredUnits`: `en_US` lb, in, mi, degF; metric elsewhere). As in HealthKit,
    /// the app must have asked to share or read every type
    /// (`authorizationNotDetermined` names the first that it did not).
    public func preferredUnits(for types: Set<QuantityType>, locale: String) async throws -> [QuantityType: HealthUnit] {
        try await read { view in
            if let type = view.firstTypeNotRequested(types.sorted()) {
                throw HealthStoreError.authorizationNotDetermined(type: type.identifier)
            }
            var units: [QuantityType: HealthUnit] = [:]
            for type in types { units[type] = view.preferredUnit(for: type, locale: locale) }
            return units
        }
    }

    // MARK: Authorization

    /// Asks the owner for permission to share (write) and read types.
    ///
    /// Refuses with `missingUsageDescription` when the app lacks the purpose string
    /// for a non-empty set, and with `invalidArgument` for characteristic types in the
    /// share set or correlation types anywhere (HealthKit's rules). Types already
    /// asked for or answered are left out; when nothing is new, nothing is recorded.
    /// As in HealthKit, success means "the request was handled", not "granted".
    public func requestAuthorization(toShare share: Set<ObjectType>, read: Set<ObjectType>) async throws {
        if !share.isEmpty, app.sharePurpose?.isEmpty ?? true {
            throw HealthStoreError.missingUsageDescription(app: app.bundleIdentifier, missing: "share (NSHealthUpdateUsageDescription)")
        }
        if !read.isEmpty, app.readPurpose?.isEmpty ?? true {
            throw HealthStoreError.missingUsageDescription(app: app.bundleIdentifier, missing: "read (NSHealthShareUsageDescription)")
        }
        try await mappingRules {
            try await ledger.append(.requestAuthorization(bundleIdentifier: app.bundleIdentifier, share: share, read: read))
        }
    }

    /// HealthKit's getRequestStatusForAuthorization(toShare:read:): `unnecessary` when
    /// every type has been asked for or answered (asking again would show nothing),
    /// else `shouldRequest`. Reveals nothing about read permission.
    public func requestStatus(toShare share: Set<ObjectType>, read: Set<ObjectType>) async throws -> AuthorizationRequestStatus {
        try await self.read { $0.wouldRequestShowAnything(toShare: share, read: read) } ? .shouldRequest : .unnecessary
    }

    /// The sharing status only, as HealthKit: read permission is never revealed.
    public func authorizationStatus(for type: ObjectType) async throws -> SharingStatus {
        try await read { $0.sharingStatus(for: type) }
    }

    // MARK: Characteristics

    private func readableCharacteristic(_ type: CharacteristicType) async throws -> CharacteristicValue? {
        try await read { $0.characteristic(type) }
    }

    /// Date of birth; throws `noData` when not set or not readable (HealthKit throws).
    public func dateOfBirthComponents() async throws -> DateOfBirth {
        guard case .dateOfBirth(let dob)? = try await readableCharacteristic(.dateOfBirth) else {
            throw HealthStoreError.noData(characteristic: CharacteristicType.dateOfBirth.identifier)
        }
        return dob
    }

    /// Biological sex; `.notSet` when not set or not readable.
    public func biologicalSex() async throws -> BiologicalSex {
        if case .biologicalSex(let v)? = try await readableCharacteristic(.biologicalSex) { return v }
        return .notSet
    }

    /// Blood type; `.notSet` when not set or not readable.
    public func bloodType() async throws -> BloodType {
        if case .bloodType(let v)? = try await readableCharacteristic(.bloodType) { return v }
        return .notSet
    }

    /// Fitzpatrick skin type; `.notSet` when not set or not readable.
    public func fitzpatrickSkinType() async throws -> FitzpatrickSkinType {
        if case .fitzpatrickSkinType(let v)? = try await readableCharacteristic(.fitzpatrickSkinType) { return v }
        return .notSet
    }

    /// Wheelchair use; `.notSet` when not set or not readable.
    public func wheelchairUse() async throws -> WheelchairUse {
        if case .wheelchairUse(let v)? = try await readableCharacteristic(.wheelchairUse) { return v }
        return .notSet
    }

    /// Activity move mode (HealthKit's activityMoveMode()); nil when not set or not
    /// readable (the two look the same, as for the other characteristics).
    public func activityMoveMode() async throws -> ActivityMoveMode? {
        if case .activityMoveMode(let v)? = try await readableCharacteristic(.activityMoveMode) { return v }
        return nil
    }

    /// Medications that affect cardio fitness (HealthKit's
    /// cardioFitnessMedicationsUse()); empty when not set or not readable.
    public func cardioFitnessMedicationsUse() async throws -> CardioFitnessMedicationsUse {
        if case .cardioFitnessMedicationsUse(let v)? = try await readableCharacteristic(.cardioFitnessMedicationsUse) { return v }
        return []
    }

    // MARK: Saving and deleting

    /// Saves objects, all or nothing, stamped with this app as their source.
    /// Throws `authorizationNotDetermined`/`authorizationDenied` without share
    /// permission, `invalidArgument` for a UUID already stored; a sample carrying a
    /// sync identifier with a higher version replaces the earlier object; a metadata
    /// key starting with `HK` that HealthKit does not define is `invalidArgument`.
    public func save(_ objects: [Sample]) async throws {
        try Self.checkSavable(objects)
        try await mappingRules {
            try await ledger.append(.save(bundleIdentifier: app.bundleIdentifier, samples: objects))
        }
    }

    /// What `save` refuses before the rules see it: nothing to save, a record of an
    /// unknown type, a metadata key starting with `HK` that HealthKit does not define or
    /// holding a value of another type than HealthKit's (`HKWasUserEntered: "yes"`), a
    /// quantity outside its type's range (a sample made unchecked, as a log's are read
    /// back), a workout event that ends after its workout.
    static func checkSavable(_ objects: [Sample]) throws {
        guard !objects.isEmpty else { throw HealthStoreError.invalidArgument("save needs at least one object") }
        // Per object, its own checks, then its metadata's (with a correlation's members'
        // or a workout's events'). A quantity's or category's one metadata is checked in
        // place: no array, no copy of the common part per sample (ingest saves millions).
        for object in objects {
            switch object {
            case .unrecognized:
                throw HealthStoreError.invalidArgument("apps save only types this version knows")
            case .quantity(let q):
                try q.type.validate(q.quantity)
                try checkMetadata(CollectionOfOne(q.common.metadata))
            case .correlation(let c):
                for member in c.objects { try member.type.validate(member.quantity) }
                try checkMetadata([c.common.metadata] + c.objects.map(\.common.metadata))
            case .workout(let w):
                try checkEvents(w.events, endingBy: w.endDate, of: "workout \(w.uuid.uuidString)")
                try checkMetadata([w.common.metadata] + w.events.map(\.metadata))
            case .category(let c):
                try checkMetadata(CollectionOfOne(c.common.metadata))
            }
        }
    }

    /// HealthKit's metadata keys as an app may give them: only keys HealthKit defines
    /// start with `HK`, each with its type of value.
    static func checkMetadata<All: Collection<Metadata>>(_ metadata: All) throws {
        for entry in metadata.joined() where entry.key.hasPrefix("HK") && !Metadata.isDefinedByHealthKit(entry.key) {
            throw HealthStoreError.invalidArgument("metadata key '\(entry.key)' starts with HK but HealthKit defines no such key")
        }
        for m in metadata { try m.checkHealthKitValueTypes() }
    }

    /// HealthKit's rule for a workout's events: each lies within its workout, its
    /// duration included (an event at the end lasting 10 hours does not).
    static func checkEvents(_ events: [WorkoutEvent], endingBy end: Date, of what: String) throws {
        for event in events where event.date.addingTimeInterval(event.duration) > end {
            throw HealthStoreError.invalidArgument("\(what): a \(event.kind.identifier) event at \(ISO8601.string(event.date)) lasting "
                                                   + "\(Quantity.format(event.duration)) s ends after the workout (\(ISO8601.string(end)))")
        }
    }

    /// Saves one object.
    public func save(_ object: Sample) async throws { try await save([object]) }

    // MARK: Workouts

    /// HKHealthStore.add(_:to:): associates samples this app saved with a workout it
    /// saved (a `samplesAssociated` event). Needs share permission for workouts;
    /// refuses a target that is not a workout, a workout among the samples, another
    /// source's object (`notOwner`), and a sample or workout not stored. Samples
    /// already associated with the workout are left out; nothing new records nothing.
    public func add(_ samples: [UUID], to workout: UUID) async throws {
        guard !samples.isEmpty else { throw HealthStoreError.invalidArgument("add(_:to:) needs at least one sample") }
        try await mappingRules {
            try await ledger.append(.associate(bundleIdentifier: app.bundleIdentifier, workout: workout, samples: samples))
        }
    }

    /// Adds activities (HKWorkoutActivity segments) to a workout this app saved, all
    /// or nothing (a `workoutActivitiesAdded` event). Needs share permission for
    /// workouts, as a save of the workout does; each activity must lie within the
    /// workout, overlap none of its activities and have a UUID no activity has
    /// (`invalidWorkoutActivity`); another app's workout is `authorizationDenied`.
    public func addWorkoutActivities(_ activities: [WorkoutActivity], to workout: UUID) async throws {
        guard !activities.isEmpty else { throw HealthStoreError.invalidArgument("addWorkoutActivities needs at least one activity") }
        try Self.checkMetadata(activities.flatMap { [$0.metadata] + $0.events.map(\.metadata) })
        try await mappingRules {
            try await ledger.append(.addWorkoutActivities(bundleIdentifier: app.bundleIdentifier, workout: workout,
                                                           activities: activities))
        }
    }

    /// A finished workout in one commit (`Ledger.appendAllOrNothing`): the
    /// `samples` not yet saved and the workout in one save, then the association of
    /// `associating` with it, then its activities. Nothing is written when any part
    /// is refused.
    func commitWorkout(_ workout: Workout, saving samples: [Sample], associating: [UUID],
                       activities: [WorkoutActivity]) async throws {
        let objects = samples + [.workout(workout)]
        try Self.checkSavable(objects)
        try Self.checkMetadata(activities.flatMap { [$0.metadata] + $0.events.map(\.metadata) })
        var commands: [LedgerCommand] = [.save(bundleIdentifier: app.bundleIdentifier, samples: objects)]
        if !associating.isEmpty {
            commands.append(.associate(bundleIdentifier: app.bundleIdentifier, workout: workout.uuid, samples: associating))
        }
        if !activities.isEmpty {
            commands.append(.addWorkoutActivities(bundleIdentifier: app.bundleIdentifier, workout: workout.uuid,
                                                  activities: activities))
        }
        try await mappingRules { try await ledger.appendAllOrNothing(commands) }
    }

    /// Saves a workout with samples that belong to it, as HealthKit's tutorial does
    /// (save, then `add(_:to:)`): the samples and the workout in one save (all or
    /// nothing), then their association, in one commit (`commitWorkout`).
    /// Permissions for every type are checked before anything is written.
    public func save(_ workout: Workout, with samples: [Sample]) async throws {
        var needed = [ObjectType.workout]
        for sample in samples { if case .known(let t) = sample.type, !needed.contains(t) { needed.append(t) } }
        let types = needed
        for (type, status) in zip(types, try await read { view in types.map { view.sharingStatus(for: $0) } }) {
            switch status {
            case .sharingAuthorized: continue
            case .notDetermined: throw HealthStoreError.authorizationNotDetermined(type: type.identifier)
            case .sharingDenied: throw HealthStoreError.authorizationDenied(type: type.identifier)
            }
        }
        try await commitWorkout(workout, saving: samples, associating: samples.map(\.uuid), activities: [])
    }

    /// The samples of `type` associated with `workout` that this app may see
    /// (HKQuery.predicateForObjects(from: workout)), in `sort` order.
    public func samples(of type: ObjectType, associatedWith workout: UUID,
                        sort: [SampleSortDescriptor] = []) async throws -> [Sample] {
        let uuids = Set(await ledger.read { $0.associations[workout] ?? [] })
        guard !uuids.isEmpty else { return [] }
        return try await execute(SampleQuery(type: type, sort: sort, filter: .uuids(uuids)))
    }

    /// Deletes objects this app saved, while it holds share permission for their
    /// type; all or nothing. Throws `objectNotFound`, `notOwner`, `authorizationDenied`.
    public func delete(_ uuids: [UUID], reason: String? = nil) async throws {
        guard !uuids.isEmpty else { throw HealthStoreError.invalidArgument("delete needs at least one object") }
        try await mappingRules {
            try await ledger.append(.delete(bundleIdentifier: app.bundleIdentifier, uuids: uuids, reason: reason))
        }
    }

    /// Deletes every sample of `type` this app saved that matches `predicate`;
    /// returns how many (0 appends nothing).
    public func deleteObjects(of type: ObjectType, predicate: DatePredicate?) async throws -> Int {
        let uuids = try await read { view in
            try view.ownSamples(SampleQuery(type: type, predicate: predicate)).map(\.uuid)
        }
        guard !uuids.isEmpty else { return 0 }
        try await delete(uuids, reason: "deleteObjects")
        return uuids.count
    }

    // MARK: Queries

    /// HKSampleQuery: samples of a type, with HealthKit's visibility rule (without
    /// read permission, only this app's own samples).
    public func execute(_ query: SampleQuery) async throws -> [Sample] {
        try await samples(query).samples
    }

    /// One page of an HKSampleQuery: at most `query.limit` samples (0: all) after the
    /// sample `after`, in the query's order (`ResultOrder`), as this app may see them,
    /// read in one step of the ledger. `next` resumes after the page's last sample.
    public func samples(_ query: SampleQuery, after: UUID? = nil) async throws -> SamplePage {
        try await read { try $0.samples(query, after: after) }
    }

    /// HKCorrelationQuery: correlations of a type whose own filter and every member
    /// predicate match (at least one member of each given type satisfies its
    /// predicate), one page after `after`. An app sees a correlation through the member
    /// types it may read, with exactly those members, so member predicates are tested
    /// against what it may see.
    public func correlations(_ query: CorrelationQuery, after: UUID? = nil) async throws -> SamplePage {
        try await read { try $0.correlations(query, after: after) }
    }

    /// Every sample of `query` (up to its limit) as an `AsyncSequence`, read
    /// `pageSize` at a time: memory stays one page, whatever the answer's size.
    public nonisolated func stream(_ query: SampleQuery, pageSize: Int = 4096) -> SampleStream {
        SampleStream(query: query, pageSize: pageSize) { q, after in try await self.samples(q, after: after) }
    }

    /// The tutorial's most recent sample: distant past → `now`, strictEndDate, newest
    /// start first, limit 1. A sample dated in the future is not "most recent".
    public func mostRecentSample(for type: ObjectType, now: Date = Date()) async throws -> Sample? {
        try await read { try $0.mostRecentSample(for: type, now: now) }
    }
}

/// HKAuthorizationRequestStatus: whether asking for a set of types would show the
/// person anything new.
public enum AuthorizationRequestStatus: Int, Sendable, Hashable {
    case unknown = 0
    case shouldRequest = 1
    case unnecessary = 2

    /// HealthKit's case name.
    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .shouldRequest: "shouldRequest"
        case .unnecessary: "unnecessary"
        }
    }
}
