import Foundation
import Testing
import HealthModel
import HealthLedger
import LedgerCore
import LedgerLog
import TestSupport

/// HKWorkoutBuilder and HKWorkoutRouteBuilder on the store: samples saved as added,
/// the workout saved at the finish with totals and active time, and associated.
struct WorkoutBuilderTests {
    func energy(_ kcal: Double, _ from: String, _ to: String) throws -> Sample {
        .quantity(try QuantitySample(type: .activeEnergyBurned, quantity: try Quantity(kcal, unit: "kcal"), start: date(from), end: date(to)))
    }

    @Test func aBuiltWorkoutHasItsTotalsActiveTimeRouteAndSamples() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        let types: Set<ObjectType> = [.workout, .quantity(.activeEnergyBurned), .quantity(.distanceWalkingRunning)]
        try await app.requestAuthorization(toShare: types, read: types)
        try await OwnerStore(ledger: ledger).grantRequested(app: tracker.bundleIdentifier)

        let builder = WorkoutBuilder(store: app, activityType: .walking)
        await #expect(throws: HealthStoreError.invalidArgument("workout builder: add samples between beginCollection and endCollection")) {
            try await builder.add([try energy(1, "2026-03-01T08:00:00Z", "2026-03-01T08:01:00Z")])
        }
        try await builder.beginCollection(at: date("2026-03-01T08:00:00Z"))
        let first = try energy(100, "2026-03-01T08:00:00Z", "2026-03-01T08:10:00Z")
        try await builder.add([first])
        #expect(try await app.execute(SampleQuery(type: .quantity(.activeEnergyBurned))).count == 1)  // saved when added
        try await builder.add([try energy(150, "2026-03-01T08:15:00Z", "2026-03-01T08:30:00Z"),
                               .quantity(try QuantitySample(type: .distanceWalkingRunning, quantity: try Quantity(2, unit: "km"),
                                                            start: date("2026-03-01T08:00:00Z"), end: date("2026-03-01T08:30:00Z")))])
        try await builder.addWorkoutEvents([try WorkoutEvent(kind: .pause, date: date("2026-03-01T08:10:00Z")),
                                            try WorkoutEvent(kind: .resume, date: date("2026-03-01T08:15:00Z"))])
        try await builder.addMetadata(Metadata([MetadataEntry(key: Metadata.WellKnownKey.workoutBrandName, value: .string("Prancercise"))]))
        await #expect(throws: HealthStoreError.invalidArgument("workout builder: the end 2026-03-01T07:00:00Z is before the start 2026-03-01T08:00:00Z")) {
            try await builder.endCollection(at: date("2026-03-01T07:00:00Z"))
        }
        try await builder.endCollection(at: date("2026-03-01T08:30:00Z"))
        #expect(await builder.elapsedTime() == 1500)

        let routeBuilder = WorkoutRouteBuilder()
        try await routeBuilder.insertRouteData([RouteLocation(date: date("2026-03-01T08:00:00Z"), latitude: 21.3, longitude: -157.8),
                                                RouteLocation(date: date("2026-03-01T08:30:00Z"), latitude: 21.31, longitude: -157.81)])
        await #expect(throws: HealthStoreError.invalidArgument("route builder: a location at 2026-03-01T07:59:00Z is before 2026-03-01T08:30:00Z")) {
            try await routeBuilder.insertRouteData([RouteLocation(date: date("2026-03-01T07:59:00Z"), latitude: 0, longitude: 0)])
        }
        let workout = try await builder.finishWorkout(route: try await routeBuilder.route())
        #expect(workout.duration == 1500)
        #expect(workout.totalEnergyBurned == (try Quantity(250, unit: "kcal")))
        #expect(workout.totalDistance == (try Quantity(2000, unit: "m")))
        #expect(workout.events.map(\.kind) == [.pause, .resume])
        #expect(workout.routes.first?.locations.count == 2)
        #expect(workout.metadata[Metadata.WellKnownKey.workoutBrandName] == .string("Prancercise"))
        let stored = try await app.execute(SampleQuery(type: .workout))
        #expect(stored.map(\.uuid) == [workout.uuid])
        let attached = try await app.samples(of: .quantity(.activeEnergyBurned), associatedWith: workout.uuid,
                                             sort: [SampleSortDescriptor(.startDate, ascending: true)])
        #expect(attached.map(\.uuid).first == first.uuid)
        #expect(attached.count == 2)
        #expect(try await app.samples(of: .quantity(.distanceWalkingRunning), associatedWith: workout.uuid).count == 1)
        await #expect(throws: HealthStoreError.invalidArgument("workout builder: finishWorkout needs endCollection first")) {
            _ = try await builder.finishWorkout()
        }
        try await ledger.close()
        #expect(try LedgerVerifier.verify(fs).isIntact)
    }
}
