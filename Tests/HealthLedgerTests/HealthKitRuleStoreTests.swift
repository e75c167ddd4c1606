import Foundation
import Testing
import HealthModel
import HealthLedger
import LedgerCore
import TestSupport
import LedgerLog

/// HealthKit's rules, exactly, at the store. One test per rule, named for it; each
/// failed on the code before the fix.
struct HealthKitRuleStoreTests {
    func synced(_ type: QuantityType, _ value: Double, unit: String, version: Int64) throws -> Sample {
        .quantity(try QuantitySample(type: type, quantity: try Quantity(value, unit: unit), start: date("2026-02-01T08:00:00Z"),
                                     end: date("2026-02-01T08:00:00Z"), metadata: [
                                        Metadata.WellKnownKey.syncIdentifier: .string("x"),
                                        Metadata.WellKnownKey.syncVersion: .integer(version)]))
    }

    /// A height sample with the sync identifier of a bodyMass sample replaced it,
    /// even after the owner denied sharing bodyMass. Now: another type is refused, and
    /// the same type needs the permission a delete needs.
    @Test func syncReplacementMatchesTypeAndNeedsDeletePermission() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass), .quantity(.height)], read: [])
        try await owner.grantRequested(app: tracker.bundleIdentifier)
        try await app.save(try synced(.bodyMass, 70, unit: "kg", version: 1))
        await #expect(throws: HealthStoreError.refused(.syncReplacementTypeMismatch(
            syncIdentifier: "x", stored: "HKQuantityTypeIdentifierBodyMass", given: "HKQuantityTypeIdentifierHeight"))) {
            try await app.save(try synced(.height, 1.8, unit: "m", version: 2))
        }
        try await owner.decide(app: tracker.bundleIdentifier, [(.quantity(.bodyMass), .denied, nil)])
        let before = try await owner.execute(SampleQuery(type: .quantity(.bodyMass)))
        await #expect(throws: HealthStoreError.refused(.syncReplacementTypeMismatch(
            syncIdentifier: "x", stored: "HKQuantityTypeIdentifierBodyMass", given: "HKQuantityTypeIdentifierHeight"))) {
            try await app.save(try synced(.height, 1.8, unit: "m", version: 2))
        }
        await #expect(throws: HealthStoreError.authorizationDenied(type: "HKQuantityTypeIdentifierBodyMass")) {
            try await app.save(try synced(.bodyMass, 69, unit: "kg", version: 2))
        }
        #expect(try await owner.execute(SampleQuery(type: .quantity(.bodyMass))) == before)
        #expect(try await owner.execute(SampleQuery(type: .quantity(.height))).isEmpty)
        // The audit of the replaced object names the grant in force for its type.
        try await owner.decide(app: tracker.bundleIdentifier, [(.quantity(.bodyMass), .granted, nil)])
        try await app.save(try synced(.bodyMass, 69, unit: "kg", version: 3))
        let reader = try LogReader(ledger.fs)
        let history = try LedgerAudit.history(reader, of: .object(before[0].uuid))
        #expect(history.count == 2)
        #expect(history.last?.what.hasPrefix("replaced by ") == true)
        #expect(history.last?.authorization == "share sharingAuthorized, read notDetermined (owner)")
        try await ledger.close()
    }

    /// A date of birth after today gave a negative age. Refused now.
    @Test func futureDateOfBirthIsRefused() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let now = date("2026-03-01T12:00:00Z")
        await #expect(throws: HealthStoreError.invalidArgument("dateOfBirth 2030-01-01 is after today (2026-03-01 in GMT)")) {
            try await owner.setCharacteristic(.dateOfBirth(try DateOfBirth(year: 2030, month: 1, day: 1)), now: now)
        }
        await #expect(throws: HealthStoreError.invalidArgument("dateOfBirth 2026-03-02 is after today (2026-03-01 in GMT)")) {
            try await owner.setCharacteristic(.dateOfBirth(try DateOfBirth(year: 2026, month: 3, day: 2)), now: now)
        }
        #expect(await owner.characteristic(.dateOfBirth) == nil)
        try await owner.setCharacteristic(.dateOfBirth(try DateOfBirth(year: 2026, month: 3, day: 1)), now: now)
        #expect(await owner.characteristic(.dateOfBirth) == .dateOfBirth(try DateOfBirth(year: 2026, month: 3, day: 1)))
        try await ledger.close()
    }

    /// Deleting another app's object answered `notOwner`; HealthKit answers
    /// errorAuthorizationDenied, with the detail in the message.
    @Test func deletingAnotherAppsObjectIsAuthorizationDenied() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let other = try await HealthStore(ledger: ledger, app: healthApp)
        try await owner.decide(app: healthApp.bundleIdentifier, [(.quantity(.bodyMass), .granted, nil)])
        let theirs = UUID()
        try await other.save(try weight(80, at: "2026-02-01T08:00:00Z", uuid: theirs))
        let app = try await HealthStore(ledger: ledger, app: tracker)
        do {
            try await app.delete([theirs])
            Issue.record("the delete should have been refused")
        } catch let error as HealthStoreError {
            #expect(error.code == "authorizationDenied")
            #expect(error.description == "authorizationDenied: this app did not save \(theirs.uuidString); only the app that saved an object may delete it")
        }
        try await ledger.close()
    }

    /// −5 kg, −60 count/min, a negative workout energy or distance were stored,
    /// and a negative height gave a positive BMI.
    @Test func outOfRangeValuesAreRefusedAndBMIIsNilForNonPositiveInputs() throws {
        let at = date("2026-02-01T08:00:00Z")
        #expect(throws: HealthModelError.valueOutOfRange(field: "bodyMass value", value: -5, range: "> 0 kg")) {
            try QuantitySample(type: .bodyMass, quantity: try Quantity(-5, unit: "kg"), start: at, end: at)
        }
        #expect(throws: HealthModelError.valueOutOfRange(field: "heartRate value", value: -60, range: "> 0 count/min")) {
            try QuantitySample(type: .heartRate, quantity: try Quantity(-60, unit: "count/min"), start: at, end: at)
        }
        #expect(throws: HealthModelError.valueOutOfRange(field: "height value", value: 0, range: "> 0 m")) {
            try QuantitySample(type: .height, quantity: try Quantity(0, unit: "m"), start: at, end: at)
        }
        #expect(throws: HealthModelError.valueOutOfRange(field: "stepCount value", value: -1, range: "≥ 0 count")) {
            try QuantitySample(type: .stepCount, quantity: try Quantity(-1, unit: "count"), start: at, end: at)
        }
        #expect(throws: HealthModelError.valueOutOfRange(field: "workout totalEnergyBurned", value: -50, range: "≥ 0 kcal")) {
            try Workout(activityType: .running, start: at, end: at.addingTimeInterval(60), totalEnergyBurned: try Quantity(-50, unit: "kcal"))
        }
        #expect(throws: HealthModelError.valueOutOfRange(field: "workout totalDistance", value: -5, range: "≥ 0 km")) {
            try Workout(activityType: .running, start: at, end: at.addingTimeInterval(60), totalDistance: try Quantity(-5, unit: "km"))
        }
        // Temperatures: above absolute zero; a step count of 0 and a fraction of 1 are fine.
        _ = try QuantitySample(type: .bodyTemperature, quantity: try Quantity(-10, unit: "degC"), start: at, end: at)
        #expect(throws: HealthModelError.valueOutOfRange(field: "bodyTemperature value", value: -500, range: "> -273.15 degC (absolute zero)")) {
            try QuantitySample(type: .bodyTemperature, quantity: try Quantity(-500, unit: "degF"), start: at, end: at)
        }
        _ = try QuantitySample(type: .stepCount, quantity: try Quantity(0, unit: "count"), start: at, end: at)
        #expect(QuantityType.bodyMass.validRange == .positive)
        #expect(QuantityType.bodyFatPercentage.validRange == .fraction)
        #expect(QuantityType.stepCount.validRange == .nonNegative)
        // BMI: nil for a non-positive weight or height (two negatives made a positive BMI).
        #expect(try BodyMassIndex.compute(weight: try Quantity(-70, unit: "kg"), height: try Quantity(-1.75, unit: "m")) == nil)
        #expect(try BodyMassIndex.compute(weight: try Quantity(-5, unit: "kg"), height: try Quantity(1.75, unit: "m")) == nil)
        #expect(try BodyMassIndex.compute(weight: try Quantity(70, unit: "kg"), height: try Quantity(0, unit: "m")) == nil)
    }

    /// An app could save metadata keys starting with HK that HealthKit does not
    /// define; HealthKit refuses them for apps.
    @Test func unknownHKMetadataKeysAreRefusedForApps() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [])
        try await owner.grantRequested(app: tracker.bundleIdentifier)
        let at = date("2026-02-01T08:00:00Z")
        func sample(_ key: String) throws -> Sample {
            .quantity(try QuantitySample(type: .bodyMass, quantity: try Quantity(70, unit: "kg"), start: at, end: at,
                                         metadata: [key: .string("v")]))
        }
        await #expect(throws: HealthStoreError.invalidArgument("metadata key 'HKMadeUpKey' starts with HK but HealthKit defines no such key")) {
            try await app.save(try sample("HKMadeUpKey"))
        }
        try await app.save(try sample("HKDeviceSerialNumber"))
        try await app.save(try sample("HKMetadataKeyHeartRateMotionContext"))
        try await app.save(try sample("hkLowercaseIsTheAppsOwn"))
        #expect(try await owner.execute(SampleQuery(type: .quantity(.bodyMass))).count == 3)
        try await ledger.close()
    }

    /// An app could ask to share appleExerciseTime (and the owner grant it, and
    /// the app save it). HealthKit refuses to share the types only Apple computes.
    @Test func appleOnlyTypesAreNotShareable() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        let reason = "only Apple computes this type; apps may read it, never share it"
        for name in ["appleExerciseTime", "appleStandTime", "appleStandHour", "walkingHeartRateAverage", "atrialFibrillationBurden",
                     "appleSleepingWristTemperature", "appleMoveTime", "appleWalkingSteadiness"] {
            let type = try ObjectType(identifier: name)
            #expect(type.isAppleOnly, "\(name)")
            await #expect(throws: HealthStoreError.refused(.typeNotAuthorizable(type: type.identifier, reason: reason))) {
                try await app.requestAuthorization(toShare: [type], read: [])
            }
            await #expect(throws: HealthStoreError.refused(.typeNotAuthorizable(type: type.identifier, reason: reason))) {
                try await owner.decide(app: tracker.bundleIdentifier, [(type, .granted, nil)])
            }
        }
        // Reading them is fine, as is denying sharing; saving one is refused.
        try await app.requestAuthorization(toShare: [], read: [.quantity(.appleExerciseTime)])
        try await owner.decide(app: tracker.bundleIdentifier, [(.quantity(.appleExerciseTime), .denied, .granted)])
        let at = date("2026-02-01T08:00:00Z")
        await #expect(throws: HealthStoreError.refused(.typeNotAuthorizable(type: "HKQuantityTypeIdentifierAppleExerciseTime", reason: reason))) {
            try await app.save(.quantity(try QuantitySample(type: .appleExerciseTime, quantity: try Quantity(5, unit: "min"),
                                                            start: at, end: at.addingTimeInterval(300))))
        }
        #expect(!ObjectType.quantity(.bodyMass).isAppleOnly)
        try await ledger.close()
    }

    /// The rest of HKHealthStore: activityMoveMode() and cardioFitnessMedicationsUse()
    /// like the other characteristics (hidden without read permission).
    @Test func activityMoveModeAndCardioFitnessMedicationsUseAreOnTheStore() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        try await owner.setCharacteristic(.activityMoveMode(.appleMoveTime))
        try await owner.setCharacteristic(.cardioFitnessMedicationsUse([.betaBlockers]))
        #expect(try await app.activityMoveMode() == nil)
        #expect(try await app.cardioFitnessMedicationsUse() == [])
        try await app.requestAuthorization(toShare: [], read: [.characteristic(.activityMoveMode), .characteristic(.cardioFitnessMedicationsUse)])
        try await owner.grantRequested(app: tracker.bundleIdentifier)
        #expect(try await app.activityMoveMode() == .appleMoveTime)
        #expect(try await app.cardioFitnessMedicationsUse() == [.betaBlockers])
        try await ledger.close()
    }
}
