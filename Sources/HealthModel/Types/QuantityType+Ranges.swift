/// The valid values of each quantity type, in its canonical unit: part of the type
/// table (the generated `QuantityType+Table.swift` lists identifiers, aggregation and
/// canonical units; this file the ranges, by the rule below, with the exceptions
/// named). A value outside is `valueOutOfRange` (exit 3 at the command line; the
/// importer keeps such a record raw with that reason).
///
/// - percentages (`%`): a fraction 0…1, as HealthKit stores them;
/// - temperatures (`degC`): above absolute zero (−273.15 °C; a body temperature
///   below 0 °C is implausible but not physically impossible for water);
/// - sound levels (`dBASPL`): −1,000…1,000 dB (decibels are logarithmic; their
///   average adds up 10^(L/10), which must stay finite);
/// - `height`, `bodyMass`, `leanBodyMass` and the heart rates (`heartRate`,
///   `restingHeartRate`, `walkingHeartRateAverage`): greater than 0;
/// - everything else (counts, distances, energies, durations, masses, volumes,
///   speeds, powers, pressures, concentrations): 0 or more.
///
/// And every value's magnitude is at most 10^15 in the canonical unit (since issue
/// 28: 1e308 steps is no measurement, and a day's sum of such values is infinite).
/// The bound keeps every sum a ledger can hold finite: a log holds at most 2^40
/// bytes (FORMAT.md, S3's record offsets) and a saved sample takes more than 40 of
/// them, so fewer than 2^35 (3.4·10^10) samples fall in any bucket, and their sum stays
/// below 3.4·10^25 in the canonical unit — below 10^283 in any unit of the same
/// dimension whose scale is within 10^±250 of it, and far below Double's 1.8·10^308.
/// Time-weighted averages multiply values by durations of at most 3.2·10^11 s (years
/// 1…9999): 10^15 × 3.2·10^11 × 3.4·10^10 ≈ 10^37. No real measurement comes near:
/// 10^15 steps, metres (a thousand times the Sun's distance), kilocalories or grams.
/// Values already in a log are read back unchecked (`checkingRange: false`): statistics
/// over such old values fail by name rather than drop a bucket (`StatisticsNotFinite`).
public enum QuantityValueRange: String, Sendable, Hashable, CaseIterable {
    /// A sound level: −1,000…1,000 (in dB).
    case soundLevel
    /// 0 or more.
    case nonNegative
    /// Greater than 0.
    case positive
    /// 0…1.
    case fraction
    /// Above −273.15 in degrees Celsius.
    case aboveAbsoluteZero

    /// The largest magnitude a value of any type has, in its canonical unit (see above).
    public static let maximumMagnitude = 1e15

    /// The largest magnitude a value in this range has, in the canonical unit.
    public var maximumMagnitude: Double {
        switch self {
        case .soundLevel: 1000
        case .fraction: 1
        default: Self.maximumMagnitude
        }
    }

    /// Whether `value` (in the type's canonical unit) is in the range: its lower bound
    /// and its largest magnitude.
    public func contains(_ value: Double) -> Bool {
        holdsLowerBound(value) && value.magnitude <= maximumMagnitude
    }

    /// Whether `value` is above the range's lower bound (for every range but
    /// temperatures that is a matter of sign, which any unit of the type keeps).
    public func holdsLowerBound(_ value: Double) -> Bool {
        switch self {
        case .soundLevel: value >= -maximumMagnitude
        case .nonNegative: value >= 0
        case .positive: value > 0
        case .fraction: (0...1).contains(value)
        case .aboveAbsoluteZero: value > -273.15
        }
    }

    /// The lower bound as a person reads it, in `unit`.
    public func text(unit: String) -> String {
        switch self {
        case .soundLevel: "-1000…1000 \(unit)"
        case .nonNegative: "≥ 0 \(unit)"
        case .positive: "> 0 \(unit)"
        case .fraction: "0…1 (HealthKit stores percentages as fractions)"
        case .aboveAbsoluteZero: "> -273.15 \(unit) (absolute zero)"
        }
    }

    /// The upper bound as a person reads it, in the canonical unit `unit`.
    public func upperText(unit: String) -> String {
        switch self {
        case .soundLevel, .fraction: text(unit: unit)
        default: "|value| ≤ 1e15 \(unit) (no measurement is larger, and sums must stay finite)"
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
        case "dBASPL": .soundLevel
        default: positiveTypes.contains(type.shortName) ? .positive : .nonNegative
        }
    }
}
