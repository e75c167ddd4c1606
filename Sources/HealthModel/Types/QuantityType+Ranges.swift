/// The valid values of each quantity type, in its canonical unit: part of the type
/// table (the generated `QuantityType+Table.swift` lists identifiers, aggregation and
/// canonical units; this file the ranges, by the rule below, with the exceptions
/// named). A value outside is `valueOutOfRange` (exit 3 at the command line; the
/// importer keeps such a record raw with that reason).
///
/// - percentages (`%`): a fraction 0…1, as HealthKit stores them;
/// - temperatures (`degC`): above absolute zero (−273.15 °C; a body temperature
///   below 0 °C is implausible but not physically impossible for water);
/// - sound levels (`dBASPL`): any finite value (decibels are logarithmic);
/// - `height`, `bodyMass`, `leanBodyMass` and the heart rates (`heartRate`,
///   `restingHeartRate`, `walkingHeartRateAverage`): greater than 0;
/// - everything else (counts, distances, energies, durations, masses, volumes,
///   speeds, powers, pressures, concentrations): 0 or more.
public enum QuantityValueRange: String, Sendable, Hashable, CaseIterable {
    /// Any finite value.
    case any
    /// 0 or more.
    case nonNegative
    /// Greater than 0.
    case positive
    /// 0…1.
    case fraction
    /// Above −273.15 in degrees Celsius.
    case aboveAbsoluteZero

    /// Whether `value` (in the type's canonical unit) is in the range.
    public func contains(_ value: Double) -> Bool {
        switch self {
        case .any: value.isFinite
        case .nonNegative: value >= 0
        case .positive: value > 0
        case .fraction: (0...1).contains(value)
        case .aboveAbsoluteZero: value > -273.15
        }
    }

    /// The range as a person reads it, in `unit`.
    public func text(unit: String) -> String {
        switch self {
        case .any: "any finite value"
        case .nonNegative: "≥ 0 \(unit)"
        case .positive: "> 0 \(unit)"
        case .fraction: "0…1 (HealthKit stores percentages as fractions)"
        case .aboveAbsoluteZero: "> -273.15 \(unit) (absolute zero)"
        }
    }
}

extension QuantityType {
    /// The types whose values must be greater than 0 (a weight, height or heart rate
    /// of 0 is no measurement).
    static let positiveTypes: Set<String> = ["height", "bodyMass", "leanBodyMass", "heartRate", "restingHeartRate",
                                             "walkingHeartRateAverage"]

    /// The valid values of this type, in its canonical unit (by the rule above; a
    /// table lookup: every sample saved or imported asks).
    public var validRange: QuantityValueRange { Self.validRanges[Int(code)] }

    /// `validRange` of every type, by code.
    private static let validRanges: [QuantityValueRange] = allTypes.map { type in
        switch type.descriptor.canonicalUnit {
        case "%": .fraction
        case "degC": .aboveAbsoluteZero
        case "dBASPL": .any
        default: positiveTypes.contains(type.shortName) ? .positive : .nonNegative
        }
    }
}
