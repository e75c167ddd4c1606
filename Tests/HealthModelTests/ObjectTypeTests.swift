import Foundation
import Testing
import HealthModel
import TestSupport

struct ObjectTypeTests {
    static let referenceTable = SharedData.file("reference/quantity-types.tsv")

    @Test(.enabled(if: referenceTable != nil, "needs ../shared/reference/quantity-types.tsv (absent)"))
    func everyQuantityTypeOfTheReferenceTableIsKnownWithItsAggregationAndUnit() throws {
        let url = try #require(Self.referenceTable)
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").dropFirst()
        var count = 0
        for line in lines {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 3 else { continue }
            let type = try QuantityType(identifier: fields[0])
            #expect(type.identifier == fields[0])
            #expect(type.aggregationStyle.rawValue == fields[1], "\(fields[0])")
            #expect(type.canonicalUnit == (try HealthUnit(fields[2])), "\(fields[0])")
            #expect(try QuantityType(identifier: type.shortName) == type)
            // every typical unit written in exports fits the type
            for unit in fields.count > 3 ? fields[3].split(separator: " ").map(String.init) : [] {
                #expect(try HealthUnit(unit).isCompatible(with: type.canonicalUnit), "\(unit) for \(fields[0])")
            }
            count += 1
        }
        #expect(count == 118)
        #expect(QuantityType.allTypes.count == count)
    }

    @Test func shortFormsFollowHealthKitsSwiftNames() throws {
        #expect(try QuantityType(identifier: "bodyMass") == .bodyMass)
        #expect(try QuantityType(identifier: "HKQuantityTypeIdentifierVO2Max").shortName == "vo2Max")
        #expect(try QuantityType(identifier: "HKQuantityTypeIdentifierUVExposure").shortName == "uvExposure")
        #expect(QuantityType.heartRate.identifier == "HKQuantityTypeIdentifierHeartRate")
        #expect(QuantityType.heartRate.aggregationStyle == .discreteTemporallyWeighted)
        #expect(QuantityType.stepCount.aggregationStyle == .cumulative)
        #expect(QuantityType.environmentalAudioExposure.aggregationStyle == .discreteEquivalentContinuousLevel)
    }

    @Test func unknownIdentifierIsDataTypeNotAvailableNamingIt() {
        #expect(throws: HealthModelError.dataTypeNotAvailable(identifier: "HKQuantityTypeIdentifierFluxCapacitance")) {
            try QuantityType(identifier: "HKQuantityTypeIdentifierFluxCapacitance")
        }
        #expect(throws: HealthModelError.dataTypeNotAvailable(identifier: "bodymass")) { try ObjectType(identifier: "bodymass") }
    }

    @Test func everyKindParsesFromRawAndShortForms() throws {
        #expect(try ObjectType(identifier: "HKCharacteristicTypeIdentifierDateOfBirth") == .characteristic(.dateOfBirth))
        #expect(try ObjectType(identifier: "bloodType") == .characteristic(.bloodType))
        #expect(try ObjectType(identifier: "HKCategoryTypeIdentifierSleepAnalysis") == .category(.sleepAnalysis))
        #expect(try ObjectType(identifier: "mindfulSession") == .category(.mindfulSession))
        #expect(try ObjectType(identifier: "HKCorrelationTypeIdentifierBloodPressure") == .correlation(.bloodPressure))
        #expect(try ObjectType(identifier: "food") == .correlation(.food))
        #expect(try ObjectType(identifier: "HKWorkoutTypeIdentifier") == .workout)
        #expect(try ObjectType(identifier: "workouts") == .workout)
        #expect(ObjectType.characteristic(.activityMoveMode).identifier == "HKCharacteristicTypeIdentifierActivityMoveMode")
    }

    @Test func typeCodesAreStableAndRoundTrip() throws {
        var seen = Set<UInt16>()
        for type in ObjectType.allTypes {
            #expect(ObjectType(code: type.code) == type)
            #expect(seen.insert(type.code).inserted)
        }
        // Shipped codes never change (events/FORMAT.md, type codes).
        #expect(ObjectType.quantity(.bodyMass).code == 0x0200)
        #expect(ObjectType.quantity(.height).code == 0x0202)
        #expect(ObjectType.quantity(.bodyMassIndex).code == 0x0203)
        #expect(ObjectType.quantity(.heartRate).code == 0x0200 + 50)
        #expect(ObjectType.category(.sleepAnalysis).code == 0x0400)
        #expect(ObjectType.characteristic(.dateOfBirth).code == 0x0100)
        #expect(ObjectType.correlation(.food).code == 0x0501)
        #expect(ObjectType.workout.code == 0x0600)
        #expect(ObjectType.activitySummary.code == 0x0700)
        #expect(ObjectType(code: 0x0701) == nil)
        #expect(ObjectType(code: 0x0800) == nil)
        #expect(ObjectType(code: 0x02FF) == nil)
    }

    @Test func unknownIdentifiersAreCarriedVerbatim() {
        #expect(TypeIdentifier(parsing: "HKDataTypeSleepDurationGoal") == .unrecognized("HKDataTypeSleepDurationGoal"))
        #expect(TypeIdentifier(parsing: "HKDataTypeSleepDurationGoal").rawValue == "HKDataTypeSleepDurationGoal")
        #expect(TypeIdentifier(parsing: "HKQuantityTypeIdentifierStepCount") == .known(.quantity(.stepCount)))
    }

    @Test func categoryValuesUseHealthKitsNamesAndNumbers() throws {
        let sleep = CategoryType.sleepAnalysis
        #expect(sleep.identifier == "HKCategoryTypeIdentifierSleepAnalysis")
        #expect(try sleep.value(named: "HKCategoryValueSleepAnalysisInBed") == 0)
        #expect(try sleep.value(named: "HKCategoryValueSleepAnalysisAsleepUnspecified") == 1)
        #expect(try sleep.value(named: "HKCategoryValueSleepAnalysisAsleep") == 1)  // before iOS 16
        #expect(try sleep.value(named: "awake") == 2)
        #expect(try sleep.value(named: "HKCategoryValueSleepAnalysisAsleepCore") == 3)
        #expect(try sleep.value(named: "asleepDeep") == 4)
        #expect(try sleep.value(named: "HKCategoryValueSleepAnalysisAsleepREM") == 5)
        #expect(sleep.rawName(of: 3) == "HKCategoryValueSleepAnalysisAsleepCore")
        #expect(try CategoryType.appleStandHour.value(named: "HKCategoryValueAppleStandHourIdle") == 1)
        #expect(try CategoryType.mindfulSession.value(named: "HKCategoryValueNotApplicable") == 0)
        #expect(try CategoryType.menstrualFlow.value(named: "heavy") == 4)
        #expect(throws: HealthModelError.invalidCategoryValue(type: "HKCategoryTypeIdentifierSleepAnalysis", value: "napping")) {
            try sleep.value(named: "napping")
        }
        #expect(throws: HealthModelError.invalidCategoryValue(type: "HKCategoryTypeIdentifierSleepAnalysis", value: "6")) {
            try sleep.validate(6)
        }
        for name in ["highHeartRateEvent", "lowHeartRateEvent", "irregularHeartRhythmEvent"] {
            #expect(try CategoryType(identifier: name).values.map(\.value) == [0])
        }
    }

    @Test func workoutActivityTypesUseHealthKitsRawValues() throws {
        #expect(try WorkoutActivityType(name: "HKWorkoutActivityTypeRunning") == .running)
        #expect(WorkoutActivityType.running.rawValue == 37)
        #expect(WorkoutActivityType.walking.rawValue == 52)
        #expect(WorkoutActivityType.cycling.rawValue == 13)
        #expect(WorkoutActivityType.swimming.rawValue == 46)
        #expect(WorkoutActivityType.hiking.rawValue == 24)
        #expect(WorkoutActivityType.yoga.rawValue == 57)
        #expect(WorkoutActivityType.highIntensityIntervalTraining.rawValue == 63)
        #expect(WorkoutActivityType.traditionalStrengthTraining.rawValue == 50)
        #expect(WorkoutActivityType.functionalStrengthTraining.rawValue == 20)
        #expect(WorkoutActivityType.dance.rawValue == 14)
        #expect(WorkoutActivityType.mixedCardio.rawValue == 73)
        #expect(WorkoutActivityType.other.rawValue == 3000)
        #expect(try WorkoutActivityType(name: "hiit") == .highIntensityIntervalTraining)
        #expect(try WorkoutActivityType(name: "HKWorkoutActivityTypeMixedMetabolicCardioTraining") == .mixedMetabolicCardioTraining)
        #expect(WorkoutActivityType.highIntensityIntervalTraining.identifier == "HKWorkoutActivityTypeHighIntensityIntervalTraining")
        #expect(throws: HealthModelError.unknownWorkoutActivityType("Prancercise")) { try WorkoutActivityType(name: "Prancercise") }
    }
}
