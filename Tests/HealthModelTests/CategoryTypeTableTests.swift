import Testing
import HealthModel

/// The category types HealthKit defines, with their values as Apple documents them
/// (HKCategoryTypeIdentifier and the HKCategoryValue… enumerations).
struct CategoryTypeTableTests {
    @Test func everyDocumentedCategoryTypeIsKnownWithItsCode() throws {
        #expect(CategoryType.allTypes.count == 71)
        // The first 18 keep their codes; the additions follow in table order.
        #expect(try CategoryType(identifier: "audioExposureEvent").code == 17)
        #expect(try CategoryType(identifier: "HKCategoryTypeIdentifierAbdominalCramps").code == 18)
        #expect(try CategoryType(identifier: "HKCategoryTypeIdentifierHypertensionEvent").code == 70)
        #expect(try ObjectType(identifier: "HKCategoryTypeIdentifierHeadache") == .category(try CategoryType(identifier: "headache")))
        let names = Set(CategoryType.allTypes.map(\.identifier))
        #expect(names.count == 71)
        for name in ["Acne", "BladderIncontinence", "ChestTightnessOrPain", "GeneralizedBodyAche", "LossOfSmell",
                     "RapidPoundingOrFlutteringHeartbeat", "Wheezing", "MoodChanges", "SleepChanges", "AppetiteChanges",
                     "Contraceptive", "PregnancyTestResult", "ProgesteroneTestResult", "BleedingDuringPregnancy",
                     "BleedingAfterPregnancy", "BleedingAfterMenopause", "Lactation", "Pregnancy",
                     "InfrequentMenstrualCycles", "IrregularMenstrualCycles", "PersistentIntermenstrualBleeding",
                     "ProlongedMenstrualPeriods", "SleepApneaEvent"] {
            #expect(names.contains("HKCategoryTypeIdentifier" + name), "missing \(name)")
        }
    }

    @Test func symptomsUseTheSharedSeverityValues() throws {
        let headache = try CategoryType(identifier: "headache")
        #expect(headache.values.map(\.value) == [0, 1, 2, 3, 4])
        #expect(headache.values.map(\.rawName) == [
            "HKCategoryValueSeverityUnspecified", "HKCategoryValueSeverityNotPresent", "HKCategoryValueSeverityMild",
            "HKCategoryValueSeverityModerate", "HKCategoryValueSeveritySevere"])
        #expect(try headache.value(named: "HKCategoryValueSeverityModerate") == 3)
        #expect(try headache.value(named: "severe") == 4)
        #expect(throws: HealthModelError.invalidCategoryValue(type: "HKCategoryTypeIdentifierHeadache",
                                                              value: "HKCategoryValueHeadacheModerate")) {
            try headache.value(named: "HKCategoryValueHeadacheModerate")
        }
        #expect(throws: HealthModelError.invalidCategoryValue(type: "HKCategoryTypeIdentifierHeadache", value: "5")) {
            try headache.validate(5)
        }
    }

    @Test func typesWithTheirOwnOrSharedEnumerationsNameValuesAsHealthKit() throws {
        #expect(try CategoryType(identifier: "moodChanges").rawName(of: 0) == "HKCategoryValuePresencePresent")
        #expect(try CategoryType(identifier: "sleepChanges").value(named: "HKCategoryValuePresenceNotPresent") == 1)
        #expect(try CategoryType(identifier: "appetiteChanges").rawName(of: 2) == "HKCategoryValueAppetiteChangesDecreased")
        let contraceptive = try CategoryType(identifier: "contraceptive")
        #expect(contraceptive.values.map(\.value) == Array(1...7))
        #expect(try contraceptive.value(named: "HKCategoryValueContraceptiveIntrauterineDevice") == 4)
        #expect(try CategoryType(identifier: "pregnancyTestResult").rawName(of: 2) == "HKCategoryValuePregnancyTestResultPositive")
        #expect(try CategoryType(identifier: "progesteroneTestResult").rawName(of: 3)
                == "HKCategoryValueProgesteroneTestResultIndeterminate")
        let bleeding = try CategoryType(identifier: "bleedingDuringPregnancy")
        #expect(bleeding.values.map(\.rawName) == [
            "HKCategoryValueVaginalBleedingUnspecified", "HKCategoryValueVaginalBleedingLight",
            "HKCategoryValueVaginalBleedingMedium", "HKCategoryValueVaginalBleedingHeavy", "HKCategoryValueVaginalBleedingNone"])
        #expect(try CategoryType(identifier: "lactation").values.map(\.rawName) == ["HKCategoryValueNotApplicable"])
        // The types that kept their own enumeration keep their names.
        #expect(CategoryType.menstrualFlow.rawName(of: 4) == "HKCategoryValueMenstrualFlowHeavy")
    }

    @Test func notificationsOnlyAppleComputesAreNotShareable() throws {
        #expect(ObjectType.category(try CategoryType(identifier: "sleepApneaEvent")).isAppleOnly)
        #expect(ObjectType.category(try CategoryType(identifier: "hypertensionEvent")).isAppleOnly)
        #expect(!ObjectType.category(try CategoryType(identifier: "headache")).isAppleOnly)
    }

    /// `isAppleOnly(code:)` (a bit per code, what replay asks for every sample) says yes
    /// for exactly the listed types and the activity summary, over every 16-bit code.
    @Test func appleOnlyByCodeIsTheListOverEveryCode() throws {
        let listed = try (ObjectType.appleOnlyQuantityTypes + ObjectType.appleOnlyCategoryTypes).map { try ObjectType(identifier: $0).code }
        let expected = Set(listed + [ObjectType.activitySummary.code])
        #expect(expected.count == 17)
        var found: Set<UInt16> = []
        for code in 0...UInt16.max where ObjectType.isAppleOnly(code: code) { found.insert(code) }
        #expect(found == expected)
        for code in 0...UInt16.max {
            if let type = ObjectType(code: code) { #expect(type.isAppleOnly == expected.contains(code)) }
        }
        #expect(!ObjectType.isAppleOnly(code: ObjectType.quantity(.stepCount).code))
    }
}
