import Foundation

/// A date of birth: Gregorian year, month and day, as HealthKit's date-of-birth
/// components (no time, no time zone).
///
/// Invariant: the components name a real Gregorian date.
public struct DateOfBirth: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// Throws `invalidDateOfBirth` unless year-month-day is a real date (years 1…9999).
    public init(year: Int, month: Int, day: Int) throws {
        guard (1...9999).contains(year), CivilDate.isValid(year: year, month: month, day: day) else {
            throw HealthModelError.invalidDateOfBirth(year: year, month: month, day: day)
        }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `YYYY-MM-DD`, also written in Arabic-Indic (٠-٩) or extended
    /// Arabic-Indic (۰-۹) digits, as some exports do.
    public init(parsing text: String) throws {
        let ascii = String(text.unicodeScalars.map { scalar -> Character in
            switch scalar.value {
            case 0x0660...0x0669: Character(UnicodeScalar(scalar.value - 0x0660 + 0x30)!)
            case 0x06F0...0x06F9: Character(UnicodeScalar(scalar.value - 0x06F0 + 0x30)!)
            default: Character(scalar)
            }
        })
        let parts = ascii.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else {
            throw HealthModelError.invalidField(field: "dateOfBirth", reason: "expected YYYY-MM-DD, got '\(text)'")
        }
        try self.init(year: y, month: m, day: d)
    }

    /// Completed years of age on the calendar day year-month-day.
    ///
    /// Correct around the birthday (the tutorial's "this year − birth year" is wrong
    /// until the birthday each year). Someone born on 29 February becomes a year
    /// older on 1 March in common years (the rule of most jurisdictions that fix one,
    /// e.g. England and Hong Kong), on 29 February in leap years.
    public func age(onYear year: Int, month: Int, day: Int) -> Int {
        var age = year - self.year
        var birthdayMonth = self.month, birthdayDay = self.day
        if birthdayMonth == 2, birthdayDay == 29, !CivilDate.isLeapYear(year) {
            birthdayMonth = 3
            birthdayDay = 1
        }
        if (month, day) < (birthdayMonth, birthdayDay) { age -= 1 }
        return age
    }

    /// Completed years of age at `date`, reading the calendar day in `timeZone`.
    public func age(at date: Date, in timeZone: TimeZone = TimeZone(identifier: "UTC")!) -> Int {
        let seconds = date.timeIntervalSince1970 + Double(timeZone.secondsFromGMT(for: date))
        let civil = CivilDate.fromDaysSinceEpoch(Int((seconds / 86_400).rounded(.down)))
        return age(onYear: civil.year, month: civil.month, day: civil.day)
    }

    /// `YYYY-MM-DD`.
    public var description: String {
        ISO8601.pad(year, 4) + "-" + ISO8601.pad(month, 2) + "-" + ISO8601.pad(day, 2)
    }

    public static func < (a: DateOfBirth, b: DateOfBirth) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }
}

/// The value of one characteristic.
public enum CharacteristicValue: Hashable, Sendable, CustomStringConvertible {
    case dateOfBirth(DateOfBirth)
    case biologicalSex(BiologicalSex)
    case bloodType(BloodType)
    case fitzpatrickSkinType(FitzpatrickSkinType)
    case wheelchairUse(WheelchairUse)
    case activityMoveMode(ActivityMoveMode)
    case cardioFitnessMedicationsUse(CardioFitnessMedicationsUse)

    /// Which characteristic this is a value of.
    public var type: CharacteristicType {
        switch self {
        case .dateOfBirth: .dateOfBirth
        case .biologicalSex: .biologicalSex
        case .bloodType: .bloodType
        case .fitzpatrickSkinType: .fitzpatrickSkinType
        case .wheelchairUse: .wheelchairUse
        case .activityMoveMode: .activityMoveMode
        case .cardioFitnessMedicationsUse: .cardioFitnessMedicationsUse
        }
    }

    /// Parses a value of `type` from text (`1990-04-12`, `female`, `A+`,
    /// `HKBloodTypeONegative`, …).
    public init(type: CharacteristicType, text: String) throws {
        switch type {
        case .dateOfBirth: self = .dateOfBirth(try DateOfBirth(parsing: text))
        case .biologicalSex: self = .biologicalSex(try BiologicalSex(name: text))
        case .bloodType: self = .bloodType(try BloodType(name: text))
        case .fitzpatrickSkinType: self = .fitzpatrickSkinType(try FitzpatrickSkinType(name: text))
        case .wheelchairUse: self = .wheelchairUse(try WheelchairUse(name: text))
        case .activityMoveMode: self = .activityMoveMode(try ActivityMoveMode(name: text))
        case .cardioFitnessMedicationsUse: self = .cardioFitnessMedicationsUse(try CardioFitnessMedicationsUse(name: text))
        }
    }

    /// The date as `YYYY-MM-DD`, enums as HealthKit raw names.
    public var description: String {
        switch self {
        case .dateOfBirth(let v): v.description
        case .biologicalSex(let v): v.rawName
        case .bloodType(let v): v.rawName
        case .fitzpatrickSkinType(let v): v.rawName
        case .wheelchairUse(let v): v.rawName
        case .activityMoveMode(let v): v.rawName
        case .cardioFitnessMedicationsUse(let v): v.description
        }
    }

    /// What a person reads: `1990-04-12`, `Female`, `A+`, `Type III`.
    public var displayString: String {
        switch self {
        case .dateOfBirth(let v): v.description
        case .biologicalSex(let v): v.displayName
        case .bloodType(let v): v.displayName
        case .fitzpatrickSkinType(let v): v.displayName
        case .wheelchairUse(let v): v.displayName
        case .activityMoveMode(let v): v.displayName
        case .cardioFitnessMedicationsUse(let v): v.description
        }
    }
}
