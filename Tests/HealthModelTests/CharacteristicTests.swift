import Foundation
import Testing
import HealthModel

struct CharacteristicTests {
    @Test func ageAroundTheBirthday() throws {
        let dob = try DateOfBirth(year: 1990, month: 4, day: 12)
        #expect(dob.age(onYear: 2026, month: 4, day: 11) == 35)
        #expect(dob.age(onYear: 2026, month: 4, day: 12) == 36)
        #expect(dob.age(onYear: 2026, month: 4, day: 13) == 36)
        #expect(dob.age(onYear: 2026, month: 1, day: 1) == 35)  // "this year minus birth year" says 36
        #expect(dob.age(onYear: 2026, month: 12, day: 31) == 36)
    }

    @Test func ageForALeapDayBirth() throws {
        let dob = try DateOfBirth(year: 2000, month: 2, day: 29)
        // common year: a year older on 1 March
        #expect(dob.age(onYear: 2023, month: 2, day: 28) == 22)
        #expect(dob.age(onYear: 2023, month: 3, day: 1) == 23)
        // leap year: a year older on 29 February
        #expect(dob.age(onYear: 2024, month: 2, day: 28) == 23)
        #expect(dob.age(onYear: 2024, month: 2, day: 29) == 24)
        #expect(dob.age(onYear: 2024, month: 3, day: 1) == 24)
        #expect(dob.age(onYear: 2100, month: 2, day: 28) == 99)  // 2100 is not a leap year
        #expect(dob.age(onYear: 2100, month: 3, day: 1) == 100)
    }

    @Test func ageReadsTheCalendarDayInATimeZone() throws {
        let dob = try DateOfBirth(year: 1990, month: 4, day: 12)
        let instant = ISO8601.date(from: "2026-04-11T23:30:00Z")!
        #expect(dob.age(at: instant) == 35)
        #expect(dob.age(at: instant, in: TimeZone(identifier: "Europe/Berlin")!) == 36)
    }

    @Test func invalidDatesOfBirthAreRefused() throws {
        #expect(throws: HealthModelError.invalidDateOfBirth(year: 2023, month: 2, day: 29)) {
            try DateOfBirth(year: 2023, month: 2, day: 29)
        }
        #expect(throws: HealthModelError.invalidDateOfBirth(year: 1990, month: 13, day: 1)) {
            try DateOfBirth(year: 1990, month: 13, day: 1)
        }
        #expect(try DateOfBirth(parsing: "١٩٨٤-٠٦-١٦") == DateOfBirth(year: 1984, month: 6, day: 16))
        #expect(try DateOfBirth(parsing: "۱۹۸۴-۰۶-۱۶") == DateOfBirth(year: 1984, month: 6, day: 16))
    }

    @Test func characteristicNamesFollowHealthKit() throws {
        #expect(try BloodType(name: "A+") == .aPositive)
        #expect(try BloodType(name: "HKBloodTypeONegative") == .oNegative)
        #expect(BloodType.abPositive.rawName == "HKBloodTypeABPositive")
        #expect(try BloodType(name: "HKBloodTypeABNegative") == .abNegative)
        #expect(BloodType.abNegative.displayName == "AB-")
        #expect(BloodType.oNegative.rawValue == 8)
        #expect(try BiologicalSex(name: "female") == .female)
        #expect(try BiologicalSex(name: "HKBiologicalSexOther") == .other)
        #expect(BiologicalSex.male.rawName == "HKBiologicalSexMale")
        #expect(BiologicalSex.male.rawValue == 2)
        #expect(try FitzpatrickSkinType(name: "HKFitzpatrickSkinTypeVI") == .typeVI)
        #expect(FitzpatrickSkinType.typeIII.rawName == "HKFitzpatrickSkinTypeIII")
        #expect(FitzpatrickSkinType.typeIII.displayName == "Type III")
        #expect(try WheelchairUse(name: "HKWheelchairUseNo") == .no)
        #expect(try ActivityMoveMode(name: "appleMoveTime").rawValue == 2)
        #expect(try CharacteristicValue(type: .bloodType, text: "AB+") == .bloodType(.abPositive))
        #expect(throws: HealthModelError.invalidCharacteristicValue(characteristic: "HKCharacteristicTypeIdentifierBloodType", value: "C+")) {
            try BloodType(name: "C+")
        }
        #expect(try CardioFitnessMedicationsUse(name: "None") == [])
    }

    @Test func bmiFromAnyCompatibleUnits() throws {
        let bmi = try #require(try BodyMassIndex.compute(weight: try Quantity(80, unit: "kg"), height: try Quantity(1.8, unit: "m")))
        #expect(bmi.unit == .count)
        #expect(abs(bmi.value - 80 / (1.8 * 1.8)) < 1e-12)
        #expect(BodyMassIndex.formatted(bmi) == "24.69")
        let imperial = try #require(try BodyMassIndex.compute(weight: try Quantity(176.37, unit: "lb"), height: try Quantity(70, unit: "in")))
        #expect(abs(imperial.value - (176.37 * 0.45359237) / (1.778 * 1.778)) < 1e-12)
        #expect(BodyMassIndex.formatted(imperial) == "25.31")
        #expect(try BodyMassIndex.compute(weight: try Quantity(80, unit: "kg"), height: try Quantity(0, unit: "cm")) == nil)
        #expect(try BodyMassIndex.compute(weight: nil, height: try Quantity(1.8, unit: "m")) == nil)
        #expect(try BodyMassIndex.compute(weight: try Quantity(80, unit: "kg"), height: nil) == nil)
        #expect(throws: HealthModelError.self) {
            try BodyMassIndex.compute(weight: try Quantity(80, unit: "kg"), height: try Quantity(80, unit: "kg"))
        }
    }

    @Test func personFormattingOfMassAndHeight() throws {
        let us = Locale(identifier: "en_US"), de = Locale(identifier: "de_DE")
        #expect(try PersonFormatting.bodyMass(try Quantity(80, unit: "kg"), locale: us) == "176.37 lb")
        #expect(try PersonFormatting.height(try Quantity(1.8, unit: "m"), locale: us) == "5 ft, 10.866 in")
        #expect(try PersonFormatting.bodyMass(try Quantity(63.5, unit: "kg"), locale: de) == "63,5 kg")
        #expect(try PersonFormatting.height(try Quantity(70, unit: "in"), locale: de) == "177,8 cm")
    }

    @Test func iso8601ReadsAndWritesExactly() throws {
        #expect(ISO8601.date(from: "2026-03-01T12:00Z")?.timeIntervalSince1970 == 1_772_366_400)
        #expect(ISO8601.date(from: "2026-03-01T13:00:00+01:00")?.timeIntervalSince1970 == 1_772_366_400)
        #expect(ISO8601.date(from: "2026-03-01")?.timeIntervalSince1970 == 1_772_323_200)
        #expect(ISO8601.string(Date(timeIntervalSince1970: 1_772_366_400.25)) == "2026-03-01T12:00:00.25Z")
        #expect(ISO8601.string(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
        #expect(ISO8601.date(from: "2026-02-30") == nil)
        #expect(ISO8601.date(from: "yesterday") == nil)
    }
}

/// A date alone is a day boundary in a time zone (the owner's).
struct DayBoundaryTests {
    @Test func aDateAloneStartsTheDayInTheZone() throws {
        let honolulu = TimeZone(identifier: "Pacific/Honolulu")!
        #expect(try ISO8601.parse("2026-02-01", dayStartIn: honolulu) == ISO8601.parse("2026-02-01T10:00:00Z"))
        // New York's clocks moved at 02:00 on 2026-03-08: midnight was still EST (−5).
        let newYork = TimeZone(identifier: "America/New_York")!
        #expect(try ISO8601.parse("2026-03-08", dayStartIn: newYork) == ISO8601.parse("2026-03-08T05:00:00Z"))
        #expect(try ISO8601.parse("2026-03-09", dayStartIn: newYork) == ISO8601.parse("2026-03-09T04:00:00Z"))
        // A date-time keeps its own offset.
        #expect(try ISO8601.parse("2026-03-09T00:00:00Z", dayStartIn: newYork) == ISO8601.parse("2026-03-09T00:00:00Z"))
        #expect(throws: HealthModelError.invalidDate(text: "0001-01-01", reason: "starts outside \(ISO8601.validRangeText) in Asia/Tokyo")) {
            try ISO8601.parse("0001-01-01", dayStartIn: TimeZone(identifier: "Asia/Tokyo")!)
        }
    }
}
