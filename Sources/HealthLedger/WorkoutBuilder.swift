import Foundation
import HealthModel
import LedgerCore

/// HKWorkoutBuilder for one app: begin collection, add samples, workout events and
/// activities (segments) as the workout goes, end collection, finish — which saves
/// the workout (totals and active duration computed from what was added),
/// associates the samples with it and adds its activities.
///
/// As in HealthKit, samples are saved when they are added (`.whenAdded`: they are
/// health data in their own right; discarding the builder keeps them), and the
/// workout exists only once `finishWorkout` returns. With `.atFinish` nothing is
/// written before the finish, which then commits the samples too (the command
/// line's `workout build`: nothing written if any step is refused). What reaches
/// the ledger is events: each `add` is a `samplesSaved` (`.whenAdded`); the finish
/// is one commit of a `samplesSaved` of the workout (with the samples, `.atFinish`),
/// a `samplesAssociated` and a `workoutActivitiesAdded` — all or nothing. A builder
/// is used once; calls out of order are `invalidArgument` and write nothing.
public actor WorkoutBuilder {
    /// Where the builder is.
    public enum State: Sendable, Equatable { case notStarted, collecting, ended, finished, discarded }

    /// When the samples added are saved.
    public enum SampleSaving: Sendable, Equatable {
        /// As HealthKit does: each `add` saves its samples.
        case whenAdded
        /// With the workout, in `finishWorkout`'s one commit.
        case atFinish
    }

    public nonisolated let store: HealthStore
    public nonisolated let activityType: WorkoutActivityType
    public private(set) var state: State = .notStarted
    public private(set) var startDate: Date?
    public private(set) var endDate: Date?
    public private(set) var events: [WorkoutEvent] = []
    public private(set) var metadata: Metadata
    /// The samples added (and saved, `.whenAdded`), in order.
    public private(set) var samples: [Sample] = []
    /// The activities added (HKWorkoutBuilder.workoutActivities), in order.
    public private(set) var workoutActivities: [WorkoutActivity] = []
    public nonisolated let saving: SampleSaving

    /// A builder for a workout of `activityType` saved by `store`'s app.
    public init(store: HealthStore, activityType: WorkoutActivityType, metadata: Metadata = Metadata(),
                saving: SampleSaving = .whenAdded) {
        self.store = store
        self.activityType = activityType
        self.metadata = metadata
        self.saving = saving
    }

    private func refuse(_ reason: String) -> HealthStoreError { .invalidArgument("workout builder: \(reason)") }

    /// beginCollection(withStart:): starts the workout at `date`.
    public func beginCollection(at date: Date) throws {
        guard state == .notStarted else { throw refuse("collection already began") }
        try ISO8601.checkRange(date, field: "workout start")
        startDate = date
        state = .collecting
    }

    /// add(_:): saves samples (quantity or category, inside the workout from its
    /// start) and keeps them for the workout's totals and association.
    public func add(_ new: [Sample]) async throws {
        guard state == .collecting, let start = startDate else { throw refuse("add samples between beginCollection and endCollection") }
        guard !new.isEmpty else { throw refuse("add needs at least one sample") }
        for sample in new {
            switch sample {
            case .quantity, .category: break
            default: throw refuse("only quantity and category samples join a workout")
            }
            guard sample.startDate >= start else {
                throw refuse("sample \(sample.uuid.uuidString) starts before the workout (\(ISO8601.string(start)))")
            }
        }
        for sample in new where samples.contains(where: { $0.uuid == sample.uuid }) {
            throw refuse("sample \(sample.uuid.uuidString) was already added")
        }
        if saving == .whenAdded { try await store.save(new) }
        samples += new
    }

    /// addWorkoutActivity(_:): a segment of the workout (HKWorkoutActivity), starting
    /// at or after the workout's start and overlapping no activity added before.
    /// Written at `finishWorkout`, with the workout.
    public func addWorkoutActivity(_ activity: WorkoutActivity) throws {
        guard state == .collecting, let start = startDate else {
            throw refuse("add activities between beginCollection and endCollection")
        }
        guard activity.startDate >= start else {
            throw refuse("activity \(activity.uuid.uuidString) starts before the workout (\(ISO8601.string(start)))")
        }
        // The workout's end is not known yet: `endCollection` checks the activities end by it.
        if let (uuid, reason) = WorkoutActivity.misplacement(of: [activity], workoutStart: start, workoutEnd: activity.endDate,
                                                             existing: workoutActivities) {
            throw refuse("activity \(uuid.uuidString) \(reason)")
        }
        workoutActivities.append(activity)
    }

    /// addWorkoutEvents(_:): pauses, resumes, laps, markers, segments, at or after the start.
    public func addWorkoutEvents(_ new: [WorkoutEvent]) throws {
        guard state == .collecting, let start = startDate else { throw refuse("add events between beginCollection and endCollection") }
        for event in new where event.date < start {
            throw refuse("an event at \(ISO8601.string(event.date)) is before the workout (\(ISO8601.string(start)))")
        }
        events += new
    }

    /// addMetadata(_:): entries for the workout (a later key replaces an earlier one).
    public func addMetadata(_ entries: Metadata) throws {
        guard state == .collecting || state == .ended else { throw refuse("add metadata before finishWorkout") }
        var merged = Metadata()
        for entry in metadata where entries[entry.key] == nil { merged.append(entry.key, entry.value) }
        for entry in entries { merged.append(entry.key, entry.value) }
        metadata = merged
    }

    /// endCollection(withEnd:): ends the workout at `date` (not before its start, nor
    /// before any sample's end or any event's end: its date plus its duration).
    public func endCollection(at date: Date) throws {
        guard state == .collecting, let start = startDate else { throw refuse("endCollection needs a collection that began") }
        guard date >= start else { throw refuse("the end \(ISO8601.string(date)) is before the start \(ISO8601.string(start))") }
        if let late = samples.first(where: { $0.endDate > date }) {
            throw refuse("sample \(late.uuid.uuidString) ends after \(ISO8601.string(date))")
        }
        if let late = events.first(where: { $0.date > date }) {
            throw refuse("an event at \(ISO8601.string(late.date)) is after \(ISO8601.string(date))")
        }
        // HealthKit: an event lies within its workout, its duration included
        if let late = events.first(where: { $0.date.addingTimeInterval($0.duration) > date }) {
            throw refuse("a \(late.kind.identifier) event at \(ISO8601.string(late.date)) lasting \(Quantity.format(late.duration)) s "
                         + "ends after \(ISO8601.string(date))")
        }
        if let late = workoutActivities.first(where: { $0.endDate > date }) {
            throw refuse("activity \(late.uuid.uuidString) ends after \(ISO8601.string(date))")
        }
        endDate = date
        state = .ended
    }

    /// The active time: end − start less the paused intervals (pause … resume, a
    /// pause never resumed counting to the end).
    public func elapsedTime() -> TimeInterval {
        guard let start = startDate else { return 0 }
        let end = endDate ?? events.map(\.date).max() ?? start
        var paused: TimeInterval = 0
        var pausedAt: Date?
        for event in events.sorted(by: { $0.date < $1.date }) {
            switch event.kind {
            case .pause where pausedAt == nil: pausedAt = event.date
            case .resume: if let p = pausedAt { paused += event.date.timeIntervalSince(p); pausedAt = nil }
            default: break
            }
        }
        if let p = pausedAt { paused += end.timeIntervalSince(p) }
        return max(0, end.timeIntervalSince(start) - paused)
    }

    /// finishWorkout(): saves the workout — active duration, total active energy
    /// (the activeEnergyBurned samples added, in kcal), total distance (the distance
    /// samples added, in m), events, metadata and `route` (from a
    /// `WorkoutRouteBuilder`, kept inside the workout as imports keep routes) — then
    /// associates the added samples with it and adds its activities, in one commit
    /// (nothing is written if any part is refused). Returns the workout, with its
    /// activities.
    public func finishWorkout(route: WorkoutRoute? = nil) async throws -> Workout {
        guard state == .ended, let start = startDate, let end = endDate else { throw refuse("finishWorkout needs endCollection first") }
        var energy: Double?
        var distance: Double?
        for case .quantity(let q) in samples {
            if q.type == .activeEnergyBurned {
                energy = (energy ?? 0) + (try q.quantity.doubleValue(for: .kilocalorie))
            } else if q.type.shortName.hasPrefix("distance") {
                distance = (distance ?? 0) + (try q.quantity.doubleValue(for: .meter))
            }
        }
        let workout = try Workout(activityType: activityType, start: start, end: end, duration: elapsedTime(),
                                  totalEnergyBurned: try energy.map { try Quantity($0, unit: "kcal") },
                                  totalDistance: try distance.map { try Quantity($0, unit: "m") },
                                  events: events, metadata: metadata, routes: route.map { [$0] } ?? [])
        try await store.commitWorkout(workout, saving: saving == .atFinish ? samples : [], associating: samples.map(\.uuid),
                                      activities: workoutActivities)
        state = .finished
        return workout.withActivities(workoutActivities)
    }

    /// discardWorkout(): no workout; the samples already added stay saved.
    public func discardWorkout() throws {
        guard state != .finished else { throw refuse("the workout is already finished") }
        state = .discarded
    }
}

/// HKWorkoutRouteBuilder: location points collected during a workout, in time order.
/// `route(metadata:)` gives the route for `WorkoutBuilder.finishWorkout(route:)`: in
/// this ledger a route is part of its workout (as in imported exports), so it is
/// finished before the workout, not associated after it as a separate sample.
public actor WorkoutRouteBuilder {
    public private(set) var locations: [RouteLocation] = []

    public init() {}

    /// insertRouteData(_:): adds points; each must not be earlier than the last.
    public func insertRouteData(_ points: [RouteLocation]) throws {
        guard !points.isEmpty else { throw HealthStoreError.invalidArgument("route builder: insert at least one location") }
        var last = locations.last?.date
        for point in points {
            if let last, point.date < last {
                throw HealthStoreError.invalidArgument("route builder: a location at \(ISO8601.string(point.date)) is before \(ISO8601.string(last))")
            }
            last = point.date
        }
        locations += points
    }

    /// The route of the points so far (finishRoute(with:metadata:)); refuses an empty one.
    public func route(metadata: Metadata = Metadata()) throws -> WorkoutRoute {
        guard let first = locations.first, let last = locations.last else {
            throw HealthStoreError.invalidArgument("route builder: a route needs at least one location")
        }
        return WorkoutRoute(startDate: first.date, endDate: last.date, locations: locations, metadata: metadata)
    }
}
