import Foundation

/// A segment of a workout (HKWorkoutActivity, iOS 16+): one activity type over an
/// interval of the workout, with its own events and metadata — a triathlon's swim,
/// bike and run, or the intervals of a training session.
///
/// Invariants (checked here, each refusal a typed `HealthModelError`): both dates in
/// `ISO8601.validRange`, `start ≤ end`, every event within [start, end], metadata
/// valid. Where it sits in its workout (inside the workout's interval, not
/// overlapping the workout's other activities) is the ledger's rule, checked when
/// the activities are added (`WorkoutActivity.checkPlacement`).
public struct WorkoutActivity: Hashable, Sendable {
    /// The activity's own identity (HKWorkoutActivity.uuid), distinct from any other
    /// activity's.
    public let uuid: UUID
    /// The activity type of this segment (HKWorkoutConfiguration.activityType).
    public let activityType: WorkoutActivityType
    public let startDate: Date
    public let endDate: Date
    /// Pauses, laps, markers, … inside this activity.
    public let events: [WorkoutEvent]
    public let metadata: Metadata

    /// Validates and builds.
    public init(activityType: WorkoutActivityType, start: Date, end: Date, events: [WorkoutEvent] = [],
                metadata: Metadata = Metadata(), uuid: UUID = UUID()) throws(HealthModelError) {
        try ISO8601.checkRange(start, field: "workout activity startDate")
        try ISO8601.checkRange(end, field: "workout activity endDate")
        guard start <= end else { throw .endBeforeStart(field: "workout activity", start: start, end: end) }
        for event in events where event.date < start || event.date > end {
            throw .invalidField(field: "workout activity events",
                                reason: "\(event.kind.identifier) at \(ISO8601.string(event.date)) is outside the activity")
        }
        do { try metadata.validate() } catch let error as HealthModelError { throw error } catch {
            throw .invalidField(field: "workout activity metadata", reason: "\(error)")
        }
        self.uuid = uuid
        self.activityType = activityType
        self.startDate = start
        self.endDate = end
        self.events = events
        self.metadata = metadata
    }

    /// end − start, in seconds.
    public var duration: TimeInterval { endDate.timeIntervalSince(startDate) }

    /// Whether the two intervals share more than an instant: [a, b) and [c, d)
    /// overlap when a < d and c < b (one ending where the next starts is fine);
    /// a zero-length activity overlaps an activity that holds its instant strictly inside.
    public func overlaps(_ other: WorkoutActivity) -> Bool {
        if startDate == endDate { return other.startDate < startDate && startDate < other.endDate }
        if other.startDate == other.endDate { return startDate < other.startDate && other.startDate < endDate }
        return startDate < other.endDate && other.startDate < endDate
    }

    /// HealthKit's placement rules for activities added to a workout over
    /// [`workoutStart`, `workoutEnd`] that already holds `existing`: each lies within
    /// the workout, is not already in it, and overlaps no other. Returns the first
    /// activity that breaks one and why, or nil when all fit.
    public static func misplacement(of new: [WorkoutActivity], workoutStart: Date, workoutEnd: Date,
                                    existing: [WorkoutActivity] = []) -> (activity: UUID, reason: String)? {
        var placed = existing
        for activity in new {
            guard activity.startDate >= workoutStart, activity.endDate <= workoutEnd else {
                return (activity.uuid, "\(ISO8601.string(activity.startDate))–\(ISO8601.string(activity.endDate)) is not within the workout (\(ISO8601.string(workoutStart))–\(ISO8601.string(workoutEnd)))")
            }
            if placed.contains(where: { $0.uuid == activity.uuid }) {
                return (activity.uuid, "is already in the workout")
            }
            if let other = placed.first(where: { $0.overlaps(activity) }) {
                return (activity.uuid, "overlaps activity \(other.uuid.uuidString) (\(ISO8601.string(other.startDate))–\(ISO8601.string(other.endDate)))")
            }
            placed.append(activity)
        }
        return nil
    }
}
