import Foundation
import Testing
import HealthModel
import HealthLedger
import LedgerCore
import LedgerLog
import TestSupport

/// HKWorkoutActivity: segments of a workout, as their own events (kind 16), with
/// HealthKit's rules — within the workout, not overlapping, the workout's app (with
/// workout share permission) or the owner — and every refusal leaving the ledger as it was.
struct WorkoutActivityTests {
    static let other = AppRegistration(bundleIdentifier: "com.example.other", name: "Other", readPurpose: "r", sharePurpose: "s")

    func activity(_ type: WorkoutActivityType, _ from: String, _ to: String, uuid: UUID = UUID(),
                  events: [WorkoutEvent] = []) throws -> WorkoutActivity {
        try WorkoutActivity(activityType: type, start: date(from), end: date(to), events: events, uuid: uuid)
    }

    // E10: activities within their workout, overlapping none, with UUIDs of their own.
    @Test func activitiesLieWithinTheirWorkoutOverlapNothingAndComeWithIt() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        let otherApp = try await HealthStore(ledger: ledger, app: Self.other)
        let owner = OwnerStore(ledger: ledger)
        let types: Set<ObjectType> = [.workout, .quantity(.activeEnergyBurned)]
        try await app.requestAuthorization(toShare: types, read: types)
        try await otherApp.requestAuthorization(toShare: [.workout], read: [])
        try await owner.grantRequested(app: tracker.bundleIdentifier)
        try await owner.grantRequested(app: Self.other.bundleIdentifier)
        let workout = try Workout(activityType: .swimBikeRun, start: date("2026-03-01T08:00:00Z"), end: date("2026-03-01T09:00:00Z"))
        let energy = try QuantitySample(type: .activeEnergyBurned, quantity: try Quantity(10, unit: "kcal"),
                                        start: date("2026-03-01T08:00:00Z"), end: date("2026-03-01T08:10:00Z"))
        try await app.save([.workout(workout), .quantity(energy)])

        let swim = try activity(.swimming, "2026-03-01T08:00:00Z", "2026-03-01T08:20:00Z",
                                events: [try WorkoutEvent(kind: .lap, date: date("2026-03-01T08:10:00Z"))])
        let bike = try activity(.cycling, "2026-03-01T08:20:00Z", "2026-03-01T08:40:00Z")
        try await app.addWorkoutActivities([bike, swim], to: workout.uuid)

        // Refusals, each naming the activity and the reason; nothing is appended.
        let before = await ledger.state.lastSequence
        let late = try activity(.running, "2026-03-01T08:50:00Z", "2026-03-01T09:10:00Z")
        await #expect(throws: HealthStoreError.refused(.invalidWorkoutActivity(late.uuid,
            "2026-03-01T08:50:00Z–2026-03-01T09:10:00Z is not within the workout (2026-03-01T08:00:00Z–2026-03-01T09:00:00Z)"))) {
            try await app.addWorkoutActivities([late], to: workout.uuid)
        }
        let overlapping = try activity(.running, "2026-03-01T08:30:00Z", "2026-03-01T08:50:00Z")
        await #expect(throws: HealthStoreError.refused(.invalidWorkoutActivity(overlapping.uuid,
            "overlaps activity \(bike.uuid.uuidString) (2026-03-01T08:20:00Z–2026-03-01T08:40:00Z)"))) {
            try await app.addWorkoutActivities([overlapping], to: workout.uuid)
        }
        let again = try activity(.running, "2026-03-01T08:40:00Z", "2026-03-01T08:50:00Z", uuid: swim.uuid)
        await #expect(throws: HealthStoreError.refused(.invalidWorkoutActivity(swim.uuid, "is already used by a workout activity"))) {
            try await app.addWorkoutActivities([again], to: workout.uuid)
        }
        let run = try activity(.running, "2026-03-01T08:40:00Z", "2026-03-01T09:00:00Z")
        await #expect(throws: HealthStoreError.notOwner(workout.uuid)) {
            try await otherApp.addWorkoutActivities([run], to: workout.uuid)
        }
        await #expect(throws: HealthStoreError.refused(.invalidWorkoutActivity(run.uuid, "is added to \(energy.uuid.uuidString), which is not a workout"))) {
            try await app.addWorkoutActivities([run], to: energy.uuid)
        }
        let missing = UUID()
        await #expect(throws: HealthStoreError.objectNotFound(missing)) {
            try await app.addWorkoutActivities([run], to: missing)
        }
        try await owner.decide(app: tracker.bundleIdentifier, [(type: .workout, share: .denied, read: nil)])
        let afterRevoke = await ledger.state.lastSequence
        #expect(afterRevoke == before + 1)
        await #expect(throws: HealthStoreError.authorizationDenied(type: ObjectType.workout.identifier)) {
            try await app.addWorkoutActivities([run], to: workout.uuid)
        }
        #expect(await ledger.state.lastSequence == afterRevoke)

        // The owner may add to any workout.
        try await owner.addWorkoutActivities([run], to: workout.uuid)
        let read = try await owner.execute(SampleQuery(type: .workout))
        guard case .workout(let back)? = read.first else { Issue.record("no workout"); return }
        #expect(back.activities == [swim, bike, run])
        #expect(back.activities.map(\.duration) == [1200, 1200, 1200])

        // A snapshot holds them (section 32); a reopen from it and verify agree.
        try await ledger.snapshot()
        try await ledger.close()
        let reopened = try Ledger.open(fs)
        #expect(reopened.openReport.snapshot != nil)
        #expect(await reopened.state.workoutActivities[workout.uuid] == [bike, swim, run])
        try await reopened.close()
        #expect(try LedgerVerifier.verify(fs).isIntact)
        let replayed = try Ledger.open(fs, options: LedgerOptions(useSnapshots: false))
        #expect(await replayed.state.workoutActivities[workout.uuid] == [bike, swim, run])
        replayed.abandon()
    }

    /// HKWorkoutBuilder.addWorkoutActivity: checked as added and at the end, written
    /// with the workout in one commit; `.atFinish` writes nothing before the finish and
    /// nothing at all when the finish is refused.
    @Test func aBuilderAddsActivitiesAndCommitsEverythingAtTheFinish() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        let types: Set<ObjectType> = [.workout, .quantity(.activeEnergyBurned), .quantity(.heartRate)]
        try await app.requestAuthorization(toShare: types, read: types)
        try await OwnerStore(ledger: ledger).decide(app: tracker.bundleIdentifier, [
            (type: .workout, share: .granted, read: .granted), (type: .quantity(.activeEnergyBurned), share: .granted, read: .granted),
            (type: .quantity(.heartRate), share: .denied, read: nil),
        ])
        let start = await ledger.state.lastSequence

        let builder = WorkoutBuilder(store: app, activityType: .swimBikeRun, saving: .atFinish)
        try await builder.beginCollection(at: date("2026-03-01T08:00:00Z"))
        let energy = try QuantitySample(type: .activeEnergyBurned, quantity: try Quantity(120, unit: "kcal"),
                                        start: date("2026-03-01T08:00:00Z"), end: date("2026-03-01T08:30:00Z"))
        try await builder.add([.quantity(energy)])
        let swim = try activity(.swimming, "2026-03-01T08:00:00Z", "2026-03-01T08:30:00Z")
        try await builder.addWorkoutActivity(swim)
        await #expect(throws: HealthStoreError.invalidArgument("workout builder: activity \(swim.uuid.uuidString) is already in the workout")) {
            try await builder.addWorkoutActivity(swim)
        }
        let early = try activity(.cycling, "2026-03-01T07:50:00Z", "2026-03-01T08:10:00Z")
        await #expect(throws: HealthStoreError.invalidArgument("workout builder: activity \(early.uuid.uuidString) starts before the workout (2026-03-01T08:00:00Z)")) {
            try await builder.addWorkoutActivity(early)
        }
        let overlapping = try activity(.cycling, "2026-03-01T08:20:00Z", "2026-03-01T08:40:00Z")
        await #expect(throws: HealthStoreError.invalidArgument("workout builder: activity \(overlapping.uuid.uuidString) overlaps activity \(swim.uuid.uuidString) (2026-03-01T08:00:00Z–2026-03-01T08:30:00Z)")) {
            try await builder.addWorkoutActivity(overlapping)
        }
        let bike = try activity(.cycling, "2026-03-01T08:30:00Z", "2026-03-01T09:10:00Z")
        try await builder.addWorkoutActivity(bike)
        await #expect(throws: HealthStoreError.invalidArgument("workout builder: activity \(bike.uuid.uuidString) ends after 2026-03-01T09:00:00Z")) {
            try await builder.endCollection(at: date("2026-03-01T09:00:00Z"))
        }
        try await builder.endCollection(at: date("2026-03-01T09:10:00Z"))
        #expect(await ledger.state.lastSequence == start)  // nothing written before the finish
        let workout = try await builder.finishWorkout()
        #expect(workout.activities == [swim, bike])
        #expect(workout.totalEnergyBurned == (try Quantity(120, unit: "kcal")))
        // One commit: the save (sample and workout), the association, the activities.
        #expect(await ledger.state.lastSequence == start + 3)
        #expect(try await app.samples(of: .quantity(.activeEnergyBurned), associatedWith: workout.uuid).map(\.uuid) == [energy.uuid])

        // A finish the rules refuse (heart rate may not be shared) writes nothing at all.
        let refused = WorkoutBuilder(store: app, activityType: .running, saving: .atFinish)
        try await refused.beginCollection(at: date("2026-03-02T08:00:00Z"))
        try await refused.add([.quantity(try QuantitySample(type: .heartRate, quantity: try Quantity(120, unit: "count/min"),
                                                            start: date("2026-03-02T08:05:00Z"), end: date("2026-03-02T08:05:00Z")))])
        try await refused.addWorkoutActivity(try activity(.running, "2026-03-02T08:00:00Z", "2026-03-02T08:30:00Z"))
        try await refused.endCollection(at: date("2026-03-02T08:30:00Z"))
        let beforeRefusal = await ledger.state.lastSequence
        await #expect(throws: HealthStoreError.authorizationDenied(type: QuantityType.heartRate.identifier)) {
            _ = try await refused.finishWorkout()
        }
        #expect(await ledger.state.lastSequence == beforeRefusal)
        #expect(try await app.execute(SampleQuery(type: .workout)).count == 1)
        try await ledger.close()
        #expect(try LedgerVerifier.verify(fs).isIntact)
    }
}
