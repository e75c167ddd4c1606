import Foundation
import HealthModel
import LedgerCore
import LedgerLog
import TestSupport

/// Deterministic UUIDs for golden files: 00000000-0000-4000-8000-0000000000NN.
func fixedUUID(_ n: Int) -> UUID {
    let hex = String(n, radix: 16)
    return UUID(uuidString: "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex)!
}

/// Dates in the story, from ISO 8601 text.
func date(_ text: String) -> Date { ISO8601.date(from: text)! }

enum Story {
    static let tracker = AppRegistration(
        bundleIdentifier: "com.raywenderlich.PrancerciseTracker", name: "Prancercise Tracker",
        readPurpose: "Prancercise Tracker reads your date of birth, sex, blood type, height and weight to show your profile and BMI.",
        sharePurpose: "Prancercise Tracker saves your BMI and your Prancercise workouts.")
    static let health = AppRegistration(bundleIdentifier: "com.apple.Health", name: "Health",
                                        readPurpose: nil, sharePurpose: "Entries you type into Health.")

    static let share: Set<ObjectType> = [.quantity(.bodyMassIndex), .quantity(.activeEnergyBurned), .workout]
    static let read: Set<ObjectType> = [.characteristic(.dateOfBirth), .characteristic(.bloodType),
                                        .characteristic(.biologicalSex), .quantity(.bodyMassIndex), .quantity(.height),
                                        .quantity(.bodyMass), .workout]

    /// The tutorial's journey, as commands with fixed UUIDs and dates.
    static func commands() throws -> [LedgerCommand] {
        let height = try QuantitySample(type: .height, quantity: try Quantity(1.75, unit: "m"),
                                        start: date("2026-02-27T08:00:00Z"), end: date("2026-02-27T08:00:00Z"), uuid: fixedUUID(1),
                                        metadata: [Metadata.WellKnownKey.wasUserEntered: .bool(true)])
        let weight = try QuantitySample(type: .bodyMass, quantity: try Quantity(70, unit: "kg"),
                                        start: date("2026-02-28T07:30:00Z"), end: date("2026-02-28T07:30:00Z"), uuid: fixedUUID(2),
                                        metadata: [Metadata.WellKnownKey.wasUserEntered: .bool(true)])
        let bmiValue = 70 / (1.75 * 1.75)
        let bmi = try QuantitySample(type: .bodyMassIndex, quantity: try Quantity(bmiValue, .count),
                                     start: date("2026-03-01T09:00:00Z"), end: date("2026-03-01T09:00:00Z"), uuid: fixedUUID(3))
        let start = date("2026-03-01T10:00:00Z"), end = date("2026-03-01T10:30:00Z")
        let energy = try QuantitySample(type: .activeEnergyBurned, quantity: try Quantity(250, unit: "kcal"),
                                        start: start, end: end, uuid: fixedUUID(4))
        let workout = try Workout(activityType: .other, start: start, end: end, totalEnergyBurned: try Quantity(250, unit: "kcal"),
                                  uuid: fixedUUID(5), metadata: [Metadata.WellKnownKey.workoutBrandName: .string("Prancercise")])
        return [
            .registerApp(tracker),
            .requestAuthorization(bundleIdentifier: tracker.bundleIdentifier, share: share, read: read),
            .decideAuthorization(bundleIdentifier: tracker.bundleIdentifier, decisions:
                read.union(share).sorted().map { t in (t, share.contains(t) ? .granted : nil, read.contains(t) ? .granted : nil) },
                basis: .owner),
            .setCharacteristic(.dateOfBirth(try DateOfBirth(year: 1990, month: 4, day: 12))),
            .setCharacteristic(.biologicalSex(.female)),
            .setCharacteristic(.bloodType(.aPositive)),
            .registerApp(health),
            .decideAuthorization(bundleIdentifier: health.bundleIdentifier,
                                 decisions: [(.quantity(.height), .granted, .granted), (.quantity(.bodyMass), .granted, .granted)],
                                 basis: .owner),
            .save(bundleIdentifier: health.bundleIdentifier, samples: [.quantity(height)]),
            .save(bundleIdentifier: health.bundleIdentifier, samples: [.quantity(weight)]),
            .save(bundleIdentifier: tracker.bundleIdentifier, samples: [.quantity(bmi)]),
            .save(bundleIdentifier: tracker.bundleIdentifier, samples: [.workout(workout), .quantity(energy)]),
        ]
    }

    /// Runs the story into a ledger with a fixed id and clock (2026-03-01T12:00:00Z,
    /// one second per batch).
    static func write(to fs: any LogFileSystem) async throws -> Ledger {
        let clock = SteppingClock(start: 1_772_366_400_000_000_000, step: 1_000_000_000)
        let ledger = try Ledger.create(fs, ledgerId: fixedLedgerId,
                                       options: LedgerOptions(log: LogWriterOptions(clock: clock.function, allocationChunk: smallChunk)))
        for command in try commands() { try await ledger.append(command) }
        return ledger
    }
}
