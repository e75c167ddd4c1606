/// A characteristic whose values are named by HealthKit (`HKBiologicalSexFemale`).
///
/// Every such enum parses from HealthKit's raw name, its Swift name, and a display
/// string, and prints HealthKit's raw name.
/// (Not `CustomStringConvertible`: `shortName` is the case name from `String(describing:)`.)
public protocol NamedCharacteristic: RawRepresentable<Int>, CaseIterable, Hashable, Sendable {
    /// The characteristic's type.
    static var characteristicType: CharacteristicType { get }
    /// HealthKit's prefix of raw names, e.g. `HKBiologicalSex`.
    static var rawNamePrefix: String { get }
    /// Extra accepted spellings (display strings such as `A+`).
    var displayName: String { get }
    /// HealthKit's raw name (a requirement so that `BloodType` can spell `AB`).
    var rawName: String { get }
}

extension NamedCharacteristic {
    /// HealthKit's Swift case name (`female`, `aPositive`, `typeIII`).
    public var shortName: String { String(describing: self) }
    /// HealthKit's raw name, e.g. `HKBiologicalSexFemale`, `HKBloodTypeAPositive`.
    public var rawName: String { defaultRawName }

    var defaultRawName: String {
        let s = shortName.hasPrefix("type") ? String(shortName.dropFirst(4)) : shortName
        return Self.rawNamePrefix + s.prefix(1).uppercased() + s.dropFirst()
    }

    /// Parses a raw name, short name, display string or HealthKit's number;
    /// throws `invalidCharacteristicValue`.
    public init(name: String) throws {
        let found = Self.allCases.first { $0.rawName == name || $0.shortName == name || $0.displayName == name }
            ?? Self.allCases.first { $0.shortName.lowercased() == name.lowercased() || $0.displayName.lowercased() == name.lowercased() }
            ?? Int(name).flatMap(Self.init(rawValue:))
        guard let found else {
            throw HealthModelError.invalidCharacteristicValue(characteristic: Self.characteristicType.identifier, value: name)
        }
        self = found
    }
}

/// Biological sex (HKBiologicalSex).
public enum BiologicalSex: Int, NamedCharacteristic {
    case notSet = 0, female, male, other
    public static let characteristicType = CharacteristicType.biologicalSex
    public static let rawNamePrefix = "HKBiologicalSex"
    /// `Female`, `Male`, `Other`, `Not Set`.
    public var displayName: String {
        switch self {
        case .notSet: "Not Set"
        case .female: "Female"
        case .male: "Male"
        case .other: "Other"
        }
    }
}

/// Blood type (HKBloodType).
public enum BloodType: Int, NamedCharacteristic {
    case notSet = 0, aPositive, aNegative, bPositive, bNegative, abPositive, abNegative, oPositive, oNegative
    public static let characteristicType = CharacteristicType.bloodType
    public static let rawNamePrefix = "HKBloodType"
    /// `A+` … `O-`; `Not Set`.
    public var displayName: String {
        switch self {
        case .notSet: "Not Set"
        case .aPositive: "A+"
        case .aNegative: "A-"
        case .bPositive: "B+"
        case .bNegative: "B-"
        case .abPositive: "AB+"
        case .abNegative: "AB-"
        case .oPositive: "O+"
        case .oNegative: "O-"
        }
    }
}

extension BloodType {
    /// HealthKit's raw name: `HKBloodTypeABPositive` keeps "AB" upper case.
    public var rawName: String {
        switch self {
        case .abPositive: "HKBloodTypeABPositive"
        case .abNegative: "HKBloodTypeABNegative"
        default: defaultRawName
        }
    }
}

/// Fitzpatrick skin type (HKFitzpatrickSkinType): I (always burns) … VI.
public enum FitzpatrickSkinType: Int, NamedCharacteristic {
    case notSet = 0, typeI, typeII, typeIII, typeIV, typeV, typeVI
    public static let characteristicType = CharacteristicType.fitzpatrickSkinType
    public static let rawNamePrefix = "HKFitzpatrickSkinType"
    /// `Type I` … `Type VI`; `Not Set`.
    public var displayName: String {
        self == .notSet ? "Not Set" : "Type " + shortName.dropFirst(4)
    }
}

/// Wheelchair use (HKWheelchairUse).
public enum WheelchairUse: Int, NamedCharacteristic {
    case notSet = 0, no, yes
    public static let characteristicType = CharacteristicType.wheelchairUse
    public static let rawNamePrefix = "HKWheelchairUse"
    /// `No`, `Yes`, `Not Set`.
    public var displayName: String {
        switch self {
        case .notSet: "Not Set"
        case .no: "No"
        case .yes: "Yes"
        }
    }
}

/// Activity move mode (HKActivityMoveMode): what the Move ring counts.
public enum ActivityMoveMode: Int, NamedCharacteristic {
    case activeEnergy = 1, appleMoveTime
    public static let characteristicType = CharacteristicType.activityMoveMode
    public static let rawNamePrefix = "HKActivityMoveMode"
    /// `Active Energy`, `Move Time`.
    public var displayName: String { self == .activeEnergy ? "Active Energy" : "Move Time" }
}

/// Medications that affect cardio fitness (HKCardioFitnessMedicationsUse, an option set).
public struct CardioFitnessMedicationsUse: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Calcium channel blockers.
    public static let calciumChannelBlockers = CardioFitnessMedicationsUse(rawValue: 1)
    /// Beta blockers.
    public static let betaBlockers = CardioFitnessMedicationsUse(rawValue: 2)

    /// Parses `None`, `CalciumChannelBlockers`, `BetaBlockers`, joined by `,` or `|`,
    /// or a number; throws `invalidCharacteristicValue`.
    public init(name: String) throws {
        if let number = Int(name), number >= 0, number <= 3 { self.init(rawValue: number); return }
        var value = CardioFitnessMedicationsUse()
        for part in name.split(whereSeparator: { $0 == "," || $0 == "|" }) {
            switch part.trimmingCharacters(in: .whitespaces).lowercased() {
            case "none", "hkcardiofitnessmedicationsusenone": break
            case "calciumchannelblockers", "hkcardiofitnessmedicationsusecalciumchannelblockers": value.insert(.calciumChannelBlockers)
            case "betablockers", "hkcardiofitnessmedicationsusebetablockers": value.insert(.betaBlockers)
            default:
                throw HealthModelError.invalidCharacteristicValue(
                    characteristic: CharacteristicType.cardioFitnessMedicationsUse.identifier, value: name)
            }
        }
        self = value
    }

    /// `None`, `CalciumChannelBlockers`, `BetaBlockers`, or both joined by `,`.
    public var description: String {
        if isEmpty { return "None" }
        var parts: [String] = []
        if contains(.calciumChannelBlockers) { parts.append("CalciumChannelBlockers") }
        if contains(.betaBlockers) { parts.append("BetaBlockers") }
        return parts.joined(separator: ",")
    }
}

import Foundation
