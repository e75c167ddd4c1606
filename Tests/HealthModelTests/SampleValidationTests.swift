import Foundation
import Testing
import HealthModel

struct SampleValidationTests {
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func bodyMassInCountPerMinuteIsRefused() throws {
        let q = try Quantity(70, unit: "count/min")
        #expect(throws: HealthModelError.unitNotAllowed(type: "HKQuantityTypeIdentifierBodyMass", unit: "count/min",
                                                        expectedDimension: "mass")) {
            try QuantitySample(type: .bodyMass, quantity: q, start: t0, end: t0)
        }
    }

    @Test func bloodGlucoseAcceptsMassAndMolarConcentrations() throws {
        _ = try QuantitySample(type: .bloodGlucose, quantity: try Quantity(95, unit: "mg/dL"), start: t0, end: t0)
        _ = try QuantitySample(type: .bloodGlucose, quantity: try Quantity(5.3, unit: "mmol<180.1558800000541>/L"), start: t0, end: t0)
    }

    @Test func endBeforeStartIsRefused() throws {
        let q = try Quantity(70, unit: "kg")
        let end = t0.addingTimeInterval(-1)
        #expect(throws: HealthModelError.endBeforeStart(field: "bodyMass", start: t0, end: end)) {
            try QuantitySample(type: .bodyMass, quantity: q, start: t0, end: end)
        }
    }

    @Test func nonFiniteDatesAreRefused() throws {
        let q = try Quantity(70, unit: "kg")
        #expect(throws: HealthModelError.nonFiniteValue(field: "bodyMass startDate")) {
            try QuantitySample(type: .bodyMass, quantity: q, start: Date(timeIntervalSince1970: .nan), end: t0)
        }
    }

    @Test func percentagesAreFractions() throws {
        _ = try QuantitySample(type: .bodyFatPercentage, quantity: try Quantity(0.161, .percent), start: t0, end: t0)
        #expect(throws: HealthModelError.valueOutOfRange(field: "bodyFatPercentage value", value: 16.1,
                                                         range: "0…1 (HealthKit stores percentages as fractions)")) {
            try QuantitySample(type: .bodyFatPercentage, quantity: try Quantity(16.1, .percent), start: t0, end: t0)
        }
    }

    @Test func categoryValuesMustBeLegalForTheType() throws {
        _ = try CategorySample(type: .sleepAnalysis, value: 3, start: t0, end: t0.addingTimeInterval(3600))
        #expect(throws: HealthModelError.invalidCategoryValue(type: "HKCategoryTypeIdentifierMindfulSession", value: "1")) {
            try CategorySample(type: .mindfulSession, value: 1, start: t0, end: t0)
        }
    }

    @Test func metadataSyncIdentityNeedsBothKeys() throws {
        let bad: Metadata = [Metadata.WellKnownKey.syncIdentifier: .string("abc")]
        #expect(throws: HealthModelError.invalidField(field: "metadata",
            reason: "HKMetadataKeySyncIdentifier and HKMetadataKeySyncVersion must be given together")) {
            try QuantitySample(type: .bodyMass, quantity: try Quantity(70, unit: "kg"), start: t0, end: t0, metadata: bad)
        }
        let good: Metadata = [Metadata.WellKnownKey.syncIdentifier: .string("abc"), Metadata.WellKnownKey.syncVersion: .integer(2)]
        let s = try QuantitySample(type: .bodyMass, quantity: try Quantity(70, unit: "kg"), start: t0, end: t0, metadata: good)
        #expect(try s.metadata.syncIdentity()?.identifier == "abc")
        #expect(try s.metadata.syncIdentity()?.version == 2)
        #expect(throws: HealthModelError.nonFiniteValue(field: "metadata[x]")) {
            try QuantitySample(type: .bodyMass, quantity: try Quantity(70, unit: "kg"), start: t0, end: t0, metadata: ["x": .number(.nan)])
        }
    }

    @Test func metadataKeepsKeysVerbatimAndInOrder() {
        var m = Metadata()
        m.append("meal", .string("Lunch"))
        m.append("Meal", .string("Dinner"))
        #expect(m.count == 2)
        #expect(m["meal"] == .string("Lunch"))
        #expect(m["Meal"] == .string("Dinner"))
        #expect(m.map(\.key) == ["meal", "Meal"])
    }

    @Test func workoutsValidateTotalsAndEvents() throws {
        let end = t0.addingTimeInterval(1800)
        let w = try Workout(activityType: .other, start: t0, end: end, totalEnergyBurned: try Quantity(250, unit: "kcal"),
                            metadata: [Metadata.WellKnownKey.workoutBrandName: .string("Prancercise")])
        #expect(w.duration == 1800)
        #expect(w.metadata[Metadata.WellKnownKey.workoutBrandName] == .string("Prancercise"))
        #expect(throws: HealthModelError.unitNotAllowed(type: "workout totalEnergyBurned", unit: "km",
                                                        expectedDimension: "energy (mass·length^2·time^-2)")) {
            try Workout(activityType: .running, start: t0, end: end, totalEnergyBurned: try Quantity(5, unit: "km"))
        }
        let late = try WorkoutEvent(kind: .pause, date: end.addingTimeInterval(1))
        #expect(throws: HealthModelError.self) {
            try Workout(activityType: .running, start: t0, end: end, events: [late])
        }
        #expect(throws: HealthModelError.valueOutOfRange(field: "workout duration", value: -1, range: "≥ 0")) {
            try Workout(activityType: .running, start: t0, end: end, duration: -1)
        }
    }

    @Test func correlationsAdmitOnlyTheirMemberTypes() throws {
        let systolic = try QuantitySample(type: .bloodPressureSystolic, quantity: try Quantity(120, unit: "mmHg"), start: t0, end: t0)
        let diastolic = try QuantitySample(type: .bloodPressureDiastolic, quantity: try Quantity(80, unit: "mmHg"), start: t0, end: t0)
        let bp = try Correlation(type: .bloodPressure, start: t0, end: t0, objects: [systolic, diastolic])
        #expect(bp.objects.count == 2)
        let steps = try QuantitySample(type: .stepCount, quantity: try Quantity(10, .count), start: t0, end: t0)
        #expect(throws: HealthModelError.invalidField(field: "bloodPressure objects",
            reason: "HKQuantityTypeIdentifierStepCount is not a member type of HKCorrelationTypeIdentifierBloodPressure")) {
            try Correlation(type: .bloodPressure, start: t0, end: t0, objects: [systolic, steps])
        }
    }
}
