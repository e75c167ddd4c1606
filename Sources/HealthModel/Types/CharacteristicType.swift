/// A characteristic: a fact about the person that only the owner sets and apps
/// may only read (HKCharacteristicTypeIdentifier…).
public enum CharacteristicType: UInt16, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case dateOfBirth = 0
    case biologicalSex = 1
    case bloodType = 2
    case fitzpatrickSkinType = 3
    case wheelchairUse = 4
    case activityMoveMode = 5
    case cardioFitnessMedicationsUse = 6

    /// HealthKit's raw identifier, e.g. `HKCharacteristicTypeIdentifierDateOfBirth`.
    public var identifier: String {
        "HKCharacteristicTypeIdentifier" + shortName.prefix(1).uppercased() + shortName.dropFirst()
    }

    /// HealthKit's Swift name, e.g. `dateOfBirth`.
    public var shortName: String {
        switch self {
        case .dateOfBirth: "dateOfBirth"
        case .biologicalSex: "biologicalSex"
        case .bloodType: "bloodType"
        case .fitzpatrickSkinType: "fitzpatrickSkinType"
        case .wheelchairUse: "wheelchairUse"
        case .activityMoveMode: "activityMoveMode"
        case .cardioFitnessMedicationsUse: "cardioFitnessMedicationsUse"
        }
    }

    /// The short name.
    public var description: String { shortName }

    /// Looks up by raw identifier or short form; throws `dataTypeNotAvailable`.
    public init(identifier: String) throws {
        guard let found = Self.allCases.first(where: { $0.identifier == identifier || $0.shortName == identifier }) else {
            throw HealthModelError.dataTypeNotAvailable(identifier: identifier)
        }
        self = found
    }
}

/// A correlation type: a sample that groups other samples (HKCorrelationTypeIdentifier…).
public enum CorrelationType: UInt16, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Systolic and diastolic blood pressure taken together.
    case bloodPressure = 0
    /// A food item: dietary samples of one meal entry.
    case food = 1

    /// `HKCorrelationTypeIdentifierBloodPressure` / `…Food`.
    public var identifier: String {
        switch self {
        case .bloodPressure: "HKCorrelationTypeIdentifierBloodPressure"
        case .food: "HKCorrelationTypeIdentifierFood"
        }
    }

    /// `bloodPressure` / `food`.
    public var shortName: String {
        switch self {
        case .bloodPressure: "bloodPressure"
        case .food: "food"
        }
    }

    /// The short name.
    public var description: String { shortName }

    /// Looks up by raw identifier or short form; throws `dataTypeNotAvailable`.
    public init(identifier: String) throws {
        guard let found = Self.allCases.first(where: { $0.identifier == identifier || $0.shortName == identifier }) else {
            throw HealthModelError.dataTypeNotAvailable(identifier: identifier)
        }
        self = found
    }

    /// Whether a sample of `type` may be a member of this correlation:
    /// blood pressure holds systolic and diastolic; food holds dietary types.
    public func admits(_ type: QuantityType) -> Bool {
        switch self {
        case .bloodPressure:
            return type == .bloodPressureSystolic || type == .bloodPressureDiastolic
        case .food:
            return type.shortName.hasPrefix("dietary")
        }
    }
}
