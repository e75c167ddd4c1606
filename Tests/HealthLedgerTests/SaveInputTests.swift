import Foundation
import HealthLedger
import HealthModel
import LedgerCore
import Testing
import TestSupport

/// Input rules held at the store API, so that no front end goes around
/// them: what an app saves is held to the model's bounds and HealthKit's metadata
/// types, a workout's events end within it, and the importer's namespace is not an
/// app's.
struct SaveInputTests {
    static let types: Set<ObjectType> = [.quantity(.stepCount), .quantity(.bodyMass), .workout]

    static func store(_ ledger: Ledger) async throws -> HealthStore {
        let store = try await HealthStore(ledger: ledger, app: tracker)
        try await store.requestAuthorization(toShare: Self.types, read: Self.types)
        try await OwnerStore(ledger: ledger).decide(app: tracker.bundleIdentifier, Self.types.sorted().map { ($0, Answer.granted, Answer.granted) })
        return store
    }

    /// A sample made unchecked (as values read back from a log are) is still held to
    /// its type's range when an app saves it.
    @Test func anAppCannotSaveAValueBeyondItsTypesBound() async throws {
        let ledger = try makeLedger()
        let store = try await Self.store(ledger)
        let before = await ledger.state.lastSequence
        let common = try SampleCommon(startDate: date("2026-03-01T08:00:00Z"), endDate: date("2026-03-01T09:00:00Z"))
        let huge = try QuantitySample(type: .stepCount, quantity: try Quantity(1e308, .count), common: common, checkingRange: false)
        await #expect(throws: HealthModelError.valueOutOfRange(field: "stepCount value", value: 1e308,
                                                               range: "|value| ≤ 1e15 count (no measurement is larger, and sums must stay finite)")) {
            try await store.save(.quantity(huge))
        }
        #expect(await ledger.state.lastSequence == before)
    }

    @Test func aWorkoutsEventsEndWithinIt() async throws {
        let ledger = try makeLedger()
        let store = try await Self.store(ledger)
        let start = date("2026-03-01T08:00:00Z"), end = date("2026-03-01T09:00:00Z")
        let long = try WorkoutEvent(kind: .segment, date: date("2026-03-01T08:50:00Z"), duration: 36_000)
        let workout = try Workout(activityType: .running, start: start, end: end, events: [long])
        await #expect(throws: HealthStoreError.invalidArgument("workout \(workout.uuid.uuidString): a HKWorkoutEventTypeSegment event at 2026-03-01T08:50:00Z lasting 36000 s ends after the workout (2026-03-01T09:00:00Z)")) {
            try await store.save(.workout(workout))
        }
        let builder = WorkoutBuilder(store: store, activityType: .running)
        try await builder.beginCollection(at: start)
        try await builder.addWorkoutEvents([long])
        await #expect(throws: HealthStoreError.invalidArgument("workout builder: a HKWorkoutEventTypeSegment event at 2026-03-01T08:50:00Z lasting 36000 s ends after 2026-03-01T09:00:00Z")) {
            try await builder.endCollection(at: end)
        }
        #expect(await ledger.state.samples.count == 0)
        let fits = try WorkoutEvent(kind: .segment, date: date("2026-03-01T08:50:00Z"), duration: 600)
        try await store.save(.workout(try Workout(activityType: .running, start: start, end: end, events: [fits])))
    }

    @Test func healthKitsBooleanMetadataKeysTakeBooleans() async throws {
        let ledger = try makeLedger()
        let store = try await Self.store(ledger)
        func weighing(_ entered: MetadataValue) throws -> Sample {
            .quantity(try QuantitySample(type: .bodyMass, quantity: try Quantity(70, unit: "kg"), start: date("2026-03-01T08:00:00Z"),
                                         end: date("2026-03-01T08:00:00Z"), metadata: [Metadata.WellKnownKey.wasUserEntered: entered]))
        }
        await #expect(throws: HealthModelError.invalidField(field: "metadata[HKWasUserEntered]",
                                                            reason: "HealthKit's HKWasUserEntered is a boolean (true or false), not the string \"yes\"")) {
            try await store.save(try weighing(.string("yes")))
        }
        await #expect(throws: HealthModelError.invalidField(field: "metadata[HKIndoorWorkout]",
                                                            reason: "HealthKit's HKIndoorWorkout is a boolean (true or false), not 2")) {
            try await store.save(.workout(try Workout(activityType: .running, start: date("2026-03-01T08:00:00Z"),
                                                      end: date("2026-03-01T09:00:00Z"), metadata: ["HKIndoorWorkout": .integer(2)])))
        }
        #expect(await ledger.state.samples.count == 0)
        try await store.save([try weighing(.bool(true)), try weighing(.integer(0))])
        #expect(await ledger.state.samples.count == 2)
    }

    /// Rule E13 at the store API: an app named `export:…`, or marked imported, is refused.
    @Test func anAppCannotTakeTheImportersNamespace() async throws {
        let ledger = try makeLedger()
        let squatter = AppRegistration(bundleIdentifier: "export:Health", name: "Health", readPurpose: "r", sharePurpose: "s")
        await #expect(throws: HealthStoreError.refused(.reservedForImports("export:Health: only an import registers or renames an app named export:NAME or marks an app imported (the importer's sources)"))) {
            _ = try await HealthStore(ledger: ledger, app: squatter)
        }
        let flagged = AppRegistration(bundleIdentifier: "com.example.f", name: "F", readPurpose: "r", sharePurpose: "s", imported: true)
        await #expect(throws: HealthStoreError.refused(.reservedForImports("com.example.f: only an import registers or renames an app named export:NAME or marks an app imported (the importer's sources)"))) {
            _ = try await HealthStore(ledger: ledger, app: flagged)
        }
        #expect(await ledger.state.lastSequence == 0)
    }
}
