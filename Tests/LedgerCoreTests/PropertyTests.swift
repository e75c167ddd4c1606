import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerLog
import TestSupport

/// Random valid (and invalid) command sequences over many seeds: the state folded
/// one event at a time equals a full replay, equals a snapshot plus the tail, with
/// equal digests; and verify accepts the log.
struct PropertyTests {
    static let types: [QuantityType] = [.bodyMass, .height, .heartRate, .stepCount, .activeEnergyBurned, .bodyFatPercentage,
                                        .bloodPressureSystolic, .bloodPressureDiastolic]
    static let units: [QuantityType: (String, ClosedRange<Double>)] = [
        .bodyMass: ("kg", 40...120), .height: ("cm", 150...200), .heartRate: ("count/min", 40...180),
        .stepCount: ("count", 0...2000), .activeEnergyBurned: ("kcal", 0...500), .bodyFatPercentage: ("%", 0.05...0.5),
        .bloodPressureSystolic: ("mmHg", 100...160), .bloodPressureDiastolic: ("mmHg", 60...100),
    ]
    static let apps = (1...3).map { AppRegistration(bundleIdentifier: "com.example.app\($0)", name: "App \($0)", readPurpose: "r", sharePurpose: "s") }

    /// Runs `steps` random commands; returns (events appended, commands refused).
    static func workload(_ ledger: Ledger, seed: UInt64, steps: Int, snapshotAt: Int) async throws -> (Int, Int) {
        var rng = SeededRandom(seed: seed)
        var refused = 0
        var savedByApp: [String: [UUID]] = [:]
        var syncVersions: [String: Int64] = [:]
        var clock = date("2025-01-01T00:00:00Z")
        for app in apps {
            try await ledger.append(.registerApp(app))
            // most types granted from the start, so that most saves go through
            let granted = types.filter { _ in Int.random(in: 0..<4, using: &rng) != 0 }.map(ObjectType.quantity) + [.category(.sleepAnalysis)]
            try await ledger.append(.decideAuthorization(bundleIdentifier: app.bundleIdentifier,
                                                          decisions: granted.map { ($0, .granted, .granted) }, basis: .owner))
        }
        for step in 0..<steps {
            if step == snapshotAt { try await ledger.snapshot() }
            let app = apps[Int.random(in: 0..<apps.count, using: &rng)]
            let roll = Int.random(in: 0..<100, using: &rng)
            clock = clock.addingTimeInterval(Double.random(in: 0...7200, using: &rng))
            // a tenth of the samples arrive out of order
            let start = Int.random(in: 0..<10, using: &rng) == 0 ? clock.addingTimeInterval(-Double.random(in: 0...86_400 * 30, using: &rng)) : clock
            let command: LedgerCommand
            switch roll {
            case 0..<62:
                var samples: [Sample] = []
                for _ in 0..<Int.random(in: 1...3, using: &rng) {
                    let type = types[Int.random(in: 0..<types.count, using: &rng)]
                    let (unit, range) = units[type]!
                    let end = start.addingTimeInterval(Double(Int.random(in: 0...3, using: &rng)) * 600)
                    samples.append(.quantity(try QuantitySample(type: type, quantity: try Quantity(Double.random(in: range, using: &rng), unit: unit),
                                                                start: start, end: end)))
                }
                if Int.random(in: 0..<10, using: &rng) == 0 {
                    let sys = try QuantitySample(type: .bloodPressureSystolic, quantity: try Quantity(120, unit: "mmHg"), start: start, end: start)
                    let dia = try QuantitySample(type: .bloodPressureDiastolic, quantity: try Quantity(80, unit: "mmHg"), start: start, end: start)
                    samples.append(.correlation(try Correlation(type: .bloodPressure, start: start, end: start, objects: [sys, dia])))
                }
                if Int.random(in: 0..<8, using: &rng) == 0 {
                    samples.append(.category(try CategorySample(type: .sleepAnalysis, value: Int.random(in: 0...5, using: &rng),
                                                                start: start, end: start.addingTimeInterval(3600))))
                }
                command = .save(bundleIdentifier: app.bundleIdentifier, samples: samples)
            case 62..<68:
                let key = "\(app.bundleIdentifier)/sync-\(Int.random(in: 0..<5, using: &rng))"
                let version = (syncVersions[key] ?? 0) + Int64.random(in: -1...2, using: &rng)
                let sample = try QuantitySample(type: .bodyMass, quantity: try Quantity(Double.random(in: 60...80, using: &rng), unit: "kg"),
                                                start: start, end: start, metadata: [
                                                    Metadata.WellKnownKey.syncIdentifier: .string(String(key.split(separator: "/").last!)),
                                                    Metadata.WellKnownKey.syncVersion: .integer(version)])
                command = .save(bundleIdentifier: app.bundleIdentifier, samples: [.quantity(sample)])
                if version > (syncVersions[key] ?? Int64.min) { syncVersions[key] = version }
            case 68..<78:
                let mine = savedByApp[app.bundleIdentifier] ?? []
                guard !mine.isEmpty else { continue }
                let victim = mine[Int.random(in: 0..<mine.count, using: &rng)]
                command = .delete(bundleIdentifier: Bool.random(using: &rng) ? nil : app.bundleIdentifier, uuids: [victim], reason: "test")
            case 78..<90:
                let type: ObjectType = Bool.random(using: &rng) ? .quantity(types[Int.random(in: 0..<types.count, using: &rng)]) : .category(.sleepAnalysis)
                let share: Answer? = [nil, .granted, .granted, .denied][Int.random(in: 0..<4, using: &rng)]
                let read: Answer? = [nil, .granted, .denied][Int.random(in: 0..<3, using: &rng)]
                command = .decideAuthorization(bundleIdentifier: app.bundleIdentifier, decisions: [(type, share, read)], basis: .owner)
            case 90..<95:
                command = Bool.random(using: &rng)
                    ? .setCharacteristic(.bloodType(BloodType(rawValue: Int.random(in: 0...8, using: &rng))!))
                    : .clearCharacteristic(.bloodType)
            default:
                command = .requestAuthorization(bundleIdentifier: app.bundleIdentifier,
                                                share: [.quantity(types[Int.random(in: 0..<types.count, using: &rng)])],
                                                read: [.characteristic(.dateOfBirth)])
            }
            do {
                let stored = try await ledger.append(command)
                for e in stored {
                    if case .samplesSaved(let ordinal, let saved) = e.event {
                        let bundle = apps[Int(ordinal) - 1].bundleIdentifier
                        savedByApp[bundle, default: []].append(contentsOf: saved.map(\.sample.uuid))
                    }
                }
            } catch is RuleViolation {
                refused += 1
            }
        }
        return (Int(await ledger.state.lastSequence), refused)
    }

    @Test(.tags(.sweep), .disabled(if: Sweeps.leftOut, Sweeps.reason), arguments: [UInt64(1), 2, 3, 4, 5])
    func foldReplayAndSnapshotPlusTailAgree(seed: UInt64) async throws {
        let fs = SimulatedFileSystem(seed: seed)
        let ledger = try makeLedger(fs)
        let (events, refused) = try await Self.workload(ledger, seed: seed, steps: 6000, snapshotAt: 3000)
        #expect(events >= 2000, "seed \(seed): \(events) events")  // 5 seeds: over 10,000 events
        #expect(refused > 0, "the workload should also try what the rules refuse")
        let folded = await ledger.state
        try await ledger.close()

        let reader = try LogReader(fs)
        let replayed = try StateLoader.load(fs, reader: reader, useSnapshots: false)
        #expect(replayed.snapshot == nil)
        #expect(StateDifference.first(folded, replayed.state) == nil)
        #expect(replayed.state.digest() == folded.digest())

        let fromSnapshot = try StateLoader.load(fs, reader: reader, useSnapshots: true)
        #expect(fromSnapshot.snapshot != nil && fromSnapshot.replayed < UInt64(events))
        #expect(StateDifference.first(folded, fromSnapshot.state) == nil)
        #expect(fromSnapshot.state.digest() == folded.digest())
        #expect(fromSnapshot.state == folded)

        let report = try LedgerVerifier.verify(fs)
        #expect(report.isIntact)
        #expect(report.snapshotsChecked >= 1)
        #expect(report.digest == folded.digest())
    }
}
