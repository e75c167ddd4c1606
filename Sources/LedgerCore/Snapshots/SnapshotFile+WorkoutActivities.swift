import Foundation
import HealthModel

/// Snapshot section 32 (`workoutActivities`): each workout's activities, written only
/// when there are any: `varint n · n × (uuid workout · the activities as
/// workoutActivitiesAdded writes them: varint m (≥ 1) · m × activity)`, workouts in
/// UUID-string order, activities in the order added (events/FORMAT.md, Part 3).
/// Read back as `workoutActivitiesAdded` events (actor 0: the restore does not need it).
extension SnapshotFile {
    static let workoutActivitiesSection = SnapshotSectionCodec(section: .workoutActivities, encode: { source, w in
        let state = source.state
        guard !state.workoutActivities.isEmpty else { return false }
        let workouts = state.workoutActivities.keys.sorted { $0.uuidString < $1.uuidString }
        w.varint(workouts.count)
        for workout in workouts {
            w.uuid(workout)
            WorkoutActivityCodec.encode(state.workoutActivities[workout]!, into: &w)
        }
        return true
    }, decode: { r, contents in
        for _ in 0..<(try r.count(limit: r.remaining / 16)) {
            let workout = try r.uuid()
            contents.events.append(.workoutActivitiesAdded(actor: .owner, workout: workout,
                                                           activities: try WorkoutActivityCodec.decode(&r)))
        }
    }, required: false)
}
