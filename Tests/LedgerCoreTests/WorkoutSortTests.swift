import Foundation
import HealthModel
@testable import LedgerCore
import LedgerLog
import Testing
import TestSupport

/// Workouts sorted by duration, total energy and total distance (HKWorkoutSortIdentifier…):
/// missing totals smallest, ties by start, end, then log order, descending the exact reverse.
struct WorkoutSortTests {
    static func workout(_ n: Int, _ activity: WorkoutActivityType, _ start: String, _ end: String, duration: Double,
                        energy: Quantity?, distance: Quantity?) throws -> Sample {
        .workout(try Workout(activityType: activity, start: date(start), end: date(end), duration: duration,
                             totalEnergyBurned: energy, totalDistance: distance, uuid: fixedUUID(n)))
    }

    /// Six workouts: 1 and 4 equal in every field but their save (4 later); 3 ties 1
    /// on duration; 2 ties 1 and 4 on distance in another unit; 2 and 6 have no energy,
    /// 3 and 5 no distance; 3's energy is in kJ.
    static func ledger(_ fs: SimulatedFileSystem) async throws -> Ledger {
        let ledger = try makeLedger(fs)
        try await ledger.grant(appA, share: [.workout])
        let kcal = { (v: Double) in try Quantity(v, unit: "kcal") }
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [
            try workout(1, .running, "2026-03-01T08:00:00Z", "2026-03-01T09:00:00Z", duration: 3600, energy: try kcal(300),
                        distance: try Quantity(5, unit: "km")),
            try workout(2, .cycling, "2026-03-01T10:00:00Z", "2026-03-01T10:30:00Z", duration: 1800, energy: nil,
                        distance: try Quantity(5000, unit: "m")),
            try workout(3, .running, "2026-03-01T07:00:00Z", "2026-03-01T08:00:00Z", duration: 3600,
                        energy: try Quantity(836.8, unit: "kJ"), distance: nil)]))
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [
            try workout(4, .running, "2026-03-01T08:00:00Z", "2026-03-01T09:00:00Z", duration: 3600, energy: try kcal(300),
                        distance: try Quantity(5, unit: "km")),
            try workout(5, .yoga, "2026-03-01T06:00:00Z", "2026-03-01T06:20:00Z", duration: 1200, energy: try kcal(100),
                        distance: nil),
            try workout(6, .cycling, "2026-03-01T11:00:00Z", "2026-03-01T12:00:00Z", duration: 2400, energy: nil,
                        distance: try Quantity(2, unit: "km"))]))
        return ledger
    }

    @Test func everyWorkoutKeyInBothDirections() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try await Self.ledger(fs)
        let ascending: [(SampleSortKey, [Int])] = [
            (.workoutDuration, [5, 2, 6, 3, 1, 4]),
            (.workoutEnergy, [2, 6, 5, 3, 1, 4]),
            (.workoutDistance, [5, 3, 6, 1, 4, 2]),
        ]
        for (key, order) in ascending {
            for up in [true, false] {
                let expected = (up ? order : order.reversed()).map(fixedUUID)
                let q = SampleQuery(type: .workout, sort: [SampleSortDescriptor(key, ascending: up)])
                #expect(try await ledger.samples(q, visibility: .everything).map(\.uuid) == expected, "\(key) \(up)")
                // tiny chunks, and pages of two joined, give the same order
                let paged = try await ledger.read { state throws -> [UUID] in
                    let reader = try SampleReader(fs, chunkSize: 2, tableBudget: 3)
                    var page = q
                    page.limit = 2
                    var out: [UUID] = [], after: UUID?
                    repeat {
                        let p = try reader.page(page, visibility: .everything, after: after, in: &state)
                        out += p.samples.map(\.uuid)
                        after = p.next
                    } while after != nil
                    return out
                }
                #expect(paged == expected, "\(key) \(up) paged")
            }
        }
        // a filter and a date predicate apply before sorting; limit takes the first
        var running = SampleQuery(type: .workout, predicate: DatePredicate(start: date("2026-03-01T07:30:00Z"), end: nil),
                                  limit: 1, sort: [SampleSortDescriptor(.workoutEnergy, ascending: false)],
                                  filter: .workoutActivity(.running))
        #expect(try await ledger.samples(running, visibility: .everything).map(\.uuid) == [fixedUUID(4)])
        running.limit = 0
        #expect(try await ledger.samples(running, visibility: .everything).map(\.uuid) == [4, 1, 3].map(fixedUUID))
        // a workout key then a date key: distance ascending, then end descending (then start, slot descending)
        let mixed = SampleQuery(type: .workout, sort: [SampleSortDescriptor(.workoutDistance, ascending: true),
                                                       SampleSortDescriptor(.endDate, ascending: false)])
        #expect(try await ledger.samples(mixed, visibility: .everything).map(\.uuid) == [3, 5, 6, 2, 4, 1].map(fixedUUID))
    }

    /// A cursor naming a workout deleted since still resumes in its place.
    @Test func cursorOfDeletedWorkout() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try await Self.ledger(fs)
        let q = SampleQuery(type: .workout, limit: 2, sort: [SampleSortDescriptor(.workoutDuration, ascending: true)])
        let first = try await ledger.read { state in try SampleReader(fs).page(q, visibility: .everything, in: &state) }
        #expect(first.samples.map(\.uuid) == [5, 2].map(fixedUUID))
        #expect(first.next == fixedUUID(2))
        try await ledger.append(.delete(bundleIdentifier: nil, uuids: [fixedUUID(2)], reason: nil))
        let second = try await ledger.read { state in
            try SampleReader(fs).page(q, visibility: .everything, after: first.next, in: &state)
        }
        #expect(second.samples.map(\.uuid) == [6, 3].map(fixedUUID))
    }
}
