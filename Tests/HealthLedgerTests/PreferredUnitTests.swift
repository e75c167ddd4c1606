import Foundation
import Testing
import HealthModel
import HealthLedger
import LedgerCore
import LedgerLog
import TestSupport

/// HKHealthStore.preferredUnits(for:): by locale, and the owner's choice as an event.
struct PreferredUnitTests {
    @Test func theLocaleDecidesUnlessTheOwnerChose() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        let types: Set<QuantityType> = [.bodyMass, .height, .distanceWalkingRunning, .bodyTemperature, .heartRate]
        // As in HealthKit, the app must have asked for the types first.
        await #expect(throws: HealthStoreError.authorizationNotDetermined(type: "HKQuantityTypeIdentifierBodyMass")) {
            _ = try await app.preferredUnits(for: [.bodyMass], locale: "en_US")
        }
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass)],
                                           read: Set(types.map { ObjectType.quantity($0) }))
        let us = try await app.preferredUnits(for: types, locale: "en_US").mapValues(\.canonicalString)
        #expect(us == [.bodyMass: "lb", .height: "in", .distanceWalkingRunning: "mi", .bodyTemperature: "degF",
                       .heartRate: "count/min"])
        let de = try await app.preferredUnits(for: types, locale: "de_DE").mapValues(\.canonicalString)
        #expect(de == [.bodyMass: "kg", .height: "cm", .distanceWalkingRunning: "km", .bodyTemperature: "degC",
                       .heartRate: "count/min"])
        // The owner's choice wins over the locale, survives a snapshot, and clears.
        let before = await ledger.state.lastSequence
        try await owner.setPreferredUnit(try HealthUnit("kg"), for: .bodyMass)
        try await owner.setPreferredUnit(try HealthUnit("kg"), for: .bodyMass)  // the same again: no event
        #expect(await ledger.state.lastSequence == before + 1)
        #expect(try await app.preferredUnits(for: [.bodyMass], locale: "en_US") == [.bodyMass: try HealthUnit("kg")])
        await #expect(throws: HealthStoreError.invalidArgument("preferred unit count/min does not fit bodyMass (mass)")) {
            try await owner.setPreferredUnit(try HealthUnit("count/min"), for: .bodyMass)
        }
        try await owner.setPreferredUnit(try HealthUnit("m"), for: .height)
        try await owner.setPreferredUnit(nil, for: .height)
        #expect(await owner.preferredUnits(for: [.height, .bodyMass], locale: "en_GB")
                == [.height: try HealthUnit("cm"), .bodyMass: try HealthUnit("kg")])
        try await ledger.close()
        let reopened = try Ledger.open(fs)
        #expect(await reopened.state.preferredUnits == [.bodyMass: try HealthUnit("kg")])
        try await reopened.close()
        #expect(try LedgerVerifier.verify(fs).isIntact)
    }

    @Test func localeRegionsAndTheTable() throws {
        #expect(PreferredUnits.region(ofLocale: "en_US") == "US")
        #expect(PreferredUnits.region(ofLocale: "fr-CA") == "CA")
        #expect(PreferredUnits.region(ofLocale: "en_US@calendar=gregorian") == "US")
        #expect(PreferredUnits.region(ofLocale: "es_419") == "419")
        #expect(PreferredUnits.region(ofLocale: "en") == nil)
        #expect(PreferredUnits.usesCustomaryUnits(locale: "en_LR"))
        #expect(!PreferredUnits.usesCustomaryUnits(locale: "en_GB"))
        #expect(!PreferredUnits.usesCustomaryUnits(locale: "en"))
        #expect(PreferredUnits.unit(for: .distanceSwimming, locale: "en_US").canonicalString == "yd")
        #expect(PreferredUnits.unit(for: .walkingSpeed, locale: "en_US").canonicalString == "mi/hr")
        #expect(PreferredUnits.unit(for: .dietaryWater, locale: "ja_JP").canonicalString == "mL")
        // Every preferred unit converts to its type's canonical unit.
        for type in QuantityType.allTypes {
            for locale in ["en_US", "de_DE"] {
                #expect(PreferredUnits.unit(for: type, locale: locale).isCompatible(with: type.canonicalUnit), "\(type) \(locale)")
            }
        }
    }
}
