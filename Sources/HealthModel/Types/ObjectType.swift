/// Any HealthKit object type this version knows: a characteristic, quantity,
/// category, correlation, or the workout type.
///
/// `code` is the type's stable 16-bit number in the event format
/// (events/FORMAT.md, "type codes"): the kind in the high byte range, the
/// per-kind table index below it.
public enum ObjectType: Hashable, Sendable, Comparable, CustomStringConvertible {
    case characteristic(CharacteristicType)
    case quantity(QuantityType)
    case category(CategoryType)
    case correlation(CorrelationType)
    case workout
    /// HKActivitySummaryType: the days of activity rings. Apps may read it, never
    /// share it (only Apple computes the rings).
    case activitySummary

    /// `HKWorkoutTypeIdentifier`, the raw identifier of the workout type.
    public static let workoutIdentifier = "HKWorkoutTypeIdentifier"
    /// `HKActivitySummaryTypeIdentifier`, the raw identifier of the activity summary type.
    public static let activitySummaryIdentifier = "HKActivitySummaryTypeIdentifier"

    /// Looks a type up by raw identifier or short form, whatever its kind;
    /// throws `dataTypeNotAvailable` naming the identifier.
    public init(identifier: String) throws {
        if let q = QuantityType.byName[identifier] {
            self = .quantity(q)
        } else if let c = CategoryType.byName[identifier] {
            self = .category(c)
        } else if let c = try? CharacteristicType(identifier: identifier) {
            self = .characteristic(c)
        } else if let c = try? CorrelationType(identifier: identifier) {
            self = .correlation(c)
        } else if identifier == Self.workoutIdentifier || identifier == "workout" || identifier == "workouts"
                    || identifier == "workoutType" {
            self = .workout
        } else if identifier == Self.activitySummaryIdentifier || identifier == "activitySummary" {
            self = .activitySummary
        } else {
            throw HealthModelError.dataTypeNotAvailable(identifier: identifier)
        }
    }

    /// HealthKit's raw identifier.
    public var identifier: String {
        switch self {
        case .characteristic(let t): t.identifier
        case .quantity(let t): t.identifier
        case .category(let t): t.identifier
        case .correlation(let t): t.identifier
        case .workout: Self.workoutIdentifier
        case .activitySummary: Self.activitySummaryIdentifier
        }
    }

    /// HealthKit's Swift name (`bodyMass`, `sleepAnalysis`, `workout`).
    public var shortName: String {
        switch self {
        case .characteristic(let t): t.shortName
        case .quantity(let t): t.shortName
        case .category(let t): t.shortName
        case .correlation(let t): t.shortName
        case .workout: "workout"
        case .activitySummary: "activitySummary"
        }
    }

    /// The short name.
    public var description: String { shortName }

    /// Whether samples of this type exist (everything but characteristics).
    /// Only sample types can be shared (written).
    public var isSampleType: Bool {
        switch self {
        case .characteristic, .activitySummary: false
        default: true
        }
    }

    /// The stable type code (see the type's documentation).
    public var code: UInt16 {
        switch self {
        case .characteristic(let t): 0x0100 | t.rawValue
        case .quantity(let t): 0x0200 | t.code
        case .category(let t): 0x0400 | t.code
        case .correlation(let t): 0x0500 | t.rawValue
        case .workout: 0x0600
        case .activitySummary: 0x0700
        }
    }

    /// The type with stable code `code`, or `nil` when this version has none.
    public init?(code: UInt16) {
        let index = code & 0x00FF
        switch code & 0xFF00 {
        case 0x0100: guard let t = CharacteristicType(rawValue: index) else { return nil }; self = .characteristic(t)
        case 0x0200, 0x0300:
            guard let t = QuantityType(code: code - 0x0200) else { return nil }; self = .quantity(t)
        case 0x0400: guard let t = CategoryType(code: index) else { return nil }; self = .category(t)
        case 0x0500: guard let t = CorrelationType(rawValue: index) else { return nil }; self = .correlation(t)
        case 0x0600: guard index == 0 else { return nil }; self = .workout
        case 0x0700: guard index == 0 else { return nil }; self = .activitySummary
        default: return nil
        }
    }

    public static func < (lhs: ObjectType, rhs: ObjectType) -> Bool { lhs.code < rhs.code }

    /// Every type this version knows, in code order.
    public static var allTypes: [ObjectType] {
        CharacteristicType.allCases.map { .characteristic($0) } + QuantityType.allTypes.map { .quantity($0) }
            + CategoryType.allTypes.map { .category($0) } + CorrelationType.allCases.map { .correlation($0) }
            + [.workout, .activitySummary]
    }
}

/// A type identifier as written by someone else: either a type this version knows,
/// or a raw string kept verbatim (new HealthKit releases add types every year, and
/// an importer must not lose records of a type it does not know yet).
public enum TypeIdentifier: Hashable, Sendable, CustomStringConvertible {
    case known(ObjectType)
    case unrecognized(String)

    /// Never fails: an identifier this version does not know is kept verbatim.
    public init(parsing raw: String) {
        if let type = try? ObjectType(identifier: raw) { self = .known(type) } else { self = .unrecognized(raw) }
    }

    /// The raw identifier (HealthKit's for a known type, verbatim otherwise).
    public var rawValue: String {
        switch self {
        case .known(let t): t.identifier
        case .unrecognized(let s): s
        }
    }

    /// The raw value.
    public var description: String { rawValue }
}
