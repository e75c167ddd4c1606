import Foundation
import Testing
import HealthModel
import HealthLedger
import LedgerCore
import LedgerLog
import TestSupport

/// The tutorial's whole journey through the API, every value asserted.
struct JourneyTests {
    @Test func theTutorialsJourney() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)

        let share: Set<ObjectType> = [.quantity(.bodyMassIndex), .quantity(.activeEnergyBurned), .workout]
        let read: Set<ObjectType> = [.characteristic(.dateOfBirth), .characteristic(.bloodType), .characteristic(.biologicalSex),
                                     .quantity(.bodyMassIndex), .quantity(.height), .quantity(.bodyMass), .workout]
        try await app.requestAuthorization(toShare: share, read: read)
        #expect(try await app.authorizationStatus(for: .quantity(.bodyMassIndex)) == .notDetermined)
        // Before the owner answers, characteristics look unset and date of birth throws.
        await #expect(throws: HealthStoreError.noData(characteristic: "HKCharacteristicTypeIdentifierDateOfBirth")) {
            try await app.dateOfBirthComponents()
        }

        try await owner.grantRequested(app: tracker.bundleIdentifier)
        try await owner.setCharacteristic(.dateOfBirth(try DateOfBirth(year: 1990, month: 4, day: 12)))
        try await owner.setCharacteristic(.biologicalSex(.female))
        try await owner.setCharacteristic(.bloodType(.aPositive))
        #expect(try await app.authorizationStatus(for: .quantity(.bodyMassIndex)) == .sharingAuthorized)
        #expect(try await app.authorizationStatus(for: .quantity(.height)) == .notDetermined)  // read only: never revealed

        // Height and weight come from a second source: the owner's manual entries.
        let health = try await HealthStore(ledger: ledger, app: healthApp)
        try await health.requestAuthorization(toShare: [.quantity(.height), .quantity(.bodyMass)], read: [])
        try await owner.grantRequested(app: healthApp.bundleIdentifier)
        try await health.save(.quantity(try QuantitySample(type: .height, quantity: try Quantity(175, unit: "cm"),
                                                           start: date("2026-02-27T08:00:00Z"), end: date("2026-02-27T08:00:00Z"))))
        try await health.save(try weight(70, at: "2026-02-28T07:30:00Z"))
        try await health.save(try weight(90, at: "2027-01-01T00:00:00Z"))  // dated in the future: not "most recent"

        let now = date("2026-03-01T12:00:00Z")
        let profile = try await ProfileScreen.load(from: app, now: now)
        #expect(profile.age == 35)  // born 1990-04-12; "this year minus birth year" would say 36
        #expect(profile.biologicalSex == .female)
        #expect(profile.bloodType == .aPositive)
        #expect(profile.heightText == "5 ft, 8.898 in")
        #expect(profile.weightText == "154.324 lb")
        #expect(profile.bodyMassIndexText == "22.86")
        let de = try await ProfileScreen.load(from: app, now: now, locale: Locale(identifier: "de_DE"))
        #expect(de.heightText == "175 cm")
        #expect(de.weightText == "70 kg")

        // Save the BMI, then log a Prancercise workout with its active energy.
        let bmi = try #require(profile.bodyMassIndex)
        try await app.save(.quantity(try QuantitySample(type: .bodyMassIndex, quantity: bmi, start: now, end: now)))
        let start = date("2026-03-01T10:00:00Z"), end = date("2026-03-01T10:30:00Z")
        let energy = try Quantity(250, unit: "kcal")
        try await app.save([
            .workout(try Workout(activityType: .other, start: start, end: end, totalEnergyBurned: energy,
                                 metadata: [Metadata.WellKnownKey.workoutBrandName: .string("Prancercise")])),
            .quantity(try QuantitySample(type: .activeEnergyBurned, quantity: energy, start: start, end: end)),
        ])
        let saved = try #require(try await app.mostRecentSample(for: .quantity(.bodyMassIndex), now: now.addingTimeInterval(1)))
        guard case .quantity(let s) = saved else { Issue.record("not a quantity"); return }
        #expect(abs(s.quantity.value - 70 / (1.75 * 1.75)) < 1e-12)
        #expect(s.source?.bundleIdentifier == tracker.bundleIdentifier)
        let workouts = try await app.execute(SampleQuery(type: .workout))
        guard case .workout(let w)? = workouts.first else { Issue.record("no workout"); return }
        #expect(w.activityType == .other)
        #expect(w.metadata[Metadata.WellKnownKey.workoutBrandName] == .string("Prancercise"))
        #expect(w.totalEnergyBurned == energy)
        #expect(w.duration == 1800)

        let events = await ledger.state.lastSequence
        try await ledger.close()
        let report = try LedgerVerifier.verify(fs)
        #expect(report.isIntact)
        #expect(report.events == events)
    }

    @Test func availabilityNamesWhatIsMissing() throws {
        let dir = TemporaryDirectory()
        #expect(!HealthStore.isHealthDataAvailable(at: dir.path))
        #expect(throws: HealthStoreError.notAvailableOnDevice(path: dir.path, reason: "no ledger folder (run `healthledger init`)")) {
            try HealthStore.checkAvailability(at: dir.path)
        }
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        #expect(throws: HealthStoreError.notAvailableOnDevice(path: dir.path, reason: "the folder holds no ledger")) {
            try HealthStore.checkAvailability(at: dir.path)
        }
    }

    @Test func requestsNeedPurposeStringsAndRefuseCharacteristicsToShare() async throws {
        let ledger = try makeLedger()
        let mute = AppRegistration(bundleIdentifier: "com.example.mute", name: "Mute", readPurpose: nil, sharePurpose: nil)
        let app = try await HealthStore(ledger: ledger, app: mute)
        await #expect(throws: HealthStoreError.missingUsageDescription(app: "com.example.mute", missing: "share (NSHealthUpdateUsageDescription)")) {
            try await app.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [])
        }
        await #expect(throws: HealthStoreError.missingUsageDescription(app: "com.example.mute", missing: "read (NSHealthShareUsageDescription)")) {
            try await app.requestAuthorization(toShare: [], read: [.quantity(.bodyMass)])
        }
        let before = await ledger.state.lastSequence
        let full = try await HealthStore(ledger: ledger, app: tracker)
        await #expect(throws: HealthStoreError.self) {
            try await full.requestAuthorization(toShare: [.characteristic(.bloodType)], read: [])
        }
        #expect(await ledger.state.lastSequence == before + 1)  // only the tracker's registration
        // asking again for what was answered records nothing new
        try await full.requestAuthorization(toShare: [.workout], read: [])
        let afterFirst = await ledger.state.lastSequence
        try await full.requestAuthorization(toShare: [.workout], read: [])
        #expect(await ledger.state.lastSequence == afterFirst)
    }

    @Test func syncIdentifiersReplaceAndDeleteObjectsCounts() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [.quantity(.bodyMass)])
        try await owner.grantRequested(app: tracker.bundleIdentifier)
        func synced(_ v: Int64, _ kg: Double) throws -> Sample {
            .quantity(try QuantitySample(type: .bodyMass, quantity: try Quantity(kg, unit: "kg"), start: date("2026-02-01T08:00:00Z"),
                                         end: date("2026-02-01T08:00:00Z"), metadata: [
                                            Metadata.WellKnownKey.syncIdentifier: .string("scale"),
                                            Metadata.WellKnownKey.syncVersion: .integer(v)]))
        }
        try await app.save(try synced(1, 70))
        try await app.save(try synced(2, 69))
        let all = try await app.execute(SampleQuery(type: .quantity(.bodyMass)))
        #expect(all.count == 1)
        guard case .quantity(let kept)? = all.first else { Issue.record("none"); return }
        #expect(kept.quantity.value == 69)
        await #expect(throws: HealthStoreError.refused(.syncVersionNotNewer(syncIdentifier: "scale", stored: 2, given: 2))) {
            try await app.save(try synced(2, 68))
        }
        try await app.save([try weight(71, at: "2026-02-02T08:00:00Z"), try weight(72, at: "2026-02-05T08:00:00Z")])
        let deleted = try await app.deleteObjects(of: .quantity(.bodyMass),
                                                  predicate: DatePredicate(start: date("2026-02-02T00:00:00Z"), end: nil))
        #expect(deleted == 2)
        #expect(try await app.deleteObjects(of: .quantity(.bodyMass), predicate: DatePredicate(start: date("2030-01-01T00:00:00Z"), end: nil)) == 0)
        #expect(try await app.execute(SampleQuery(type: .quantity(.bodyMass))).count == 1)
    }
}
