import Foundation

/// Every way a health value can be refused, in one place.
///
/// HealthKit raises an Objective-C exception (a crash) for several of these; we
/// never do. Each case names the offending input so the caller can say what was
/// wrong. Descriptions name identifiers, units and field names, never sample values
/// beyond the one that was refused.
public enum HealthModelError: Error, Hashable, Sendable {
    /// An object type identifier (raw `HK…Identifier…` or short form) names no type
    /// this version knows. HealthKit's `errorHealthDataUnavailable` family.
    case dataTypeNotAvailable(identifier: String)
    /// The identifier names a type of another kind than the call expects
    /// (for example a category type where a quantity type is required).
    case wrongKindOfType(identifier: String, expected: String)
    /// A category value (raw string or integer) that the category type does not define.
    case invalidCategoryValue(type: String, value: String)
    /// A workout activity type name or number this version does not know.
    case unknownWorkoutActivityType(String)
    /// A characteristic value string that names no value of the characteristic.
    case invalidCharacteristicValue(characteristic: String, value: String)

    /// A unit string that does not follow the HKUnit grammar. `offset` is the
    /// 0-based UTF-8 byte offset of the problem.
    case unitSyntax(unit: String, offset: Int, reason: String)
    /// A unit token that is neither a known unit nor a prefix + a prefixable unit.
    case unknownUnitToken(unit: String, token: String)
    /// A molar unit (`mol`, `mmol`, …) without its molar mass (`mmol<180.15588>`).
    case missingMolarMass(unit: String)
    /// A conversion between units of different dimensions.
    case incompatibleUnits(from: String, to: String, fromDimension: String, toDimension: String)

    /// A number that is NaN or infinite.
    case nonFiniteValue(field: String)
    /// A sample whose end date is before its start date.
    case endBeforeStart(field: String, start: Date, end: Date)
    /// A quantity whose unit does not fit the quantity type (a bodyMass in count/min).
    case unitNotAllowed(type: String, unit: String, expectedDimension: String)
    /// A value outside the range the type admits (a percentage outside 0…1,
    /// a negative count).
    case valueOutOfRange(field: String, value: Double, range: String)
    /// A date of birth that is not a real Gregorian date.
    case invalidDateOfBirth(year: Int, month: Int, day: Int)
    /// Any other field that fails validation; `reason` says why.
    case invalidField(field: String, reason: String)
    /// Text that is not an accepted ISO 8601 date or date-time (see `ISO8601.parse`).
    case invalidDate(text: String, reason: String)
    /// A date outside the range the ledger stores and prints (`ISO8601.validRange`, or
    /// the log's clock range for `recordedAt` instants); `range` names it.
    case dateOutOfRange(field: String, date: String, range: String)
}

extension HealthModelError: CustomStringConvertible {
    /// A one-line, human-readable description naming the offending input.
    public var description: String {
        switch self {
        case .dataTypeNotAvailable(let identifier):
            return "dataTypeNotAvailable: unknown object type identifier '\(identifier)'"
        case .wrongKindOfType(let identifier, let expected):
            return "wrongKindOfType: '\(identifier)' is not a \(expected) type"
        case .invalidCategoryValue(let type, let value):
            return "invalidCategoryValue: '\(value)' is not a value of \(type)"
        case .unknownWorkoutActivityType(let name):
            return "unknownWorkoutActivityType: '\(name)'"
        case .invalidCharacteristicValue(let characteristic, let value):
            return "invalidCharacteristicValue: '\(value)' is not a value of \(characteristic)"
        case .unitSyntax(let unit, let offset, let reason):
            return "unitSyntax: '\(unit)' at byte \(offset): \(reason)"
        case .unknownUnitToken(let unit, let token):
            return "unknownUnitToken: '\(token)' in unit '\(unit)'"
        case .missingMolarMass(let unit):
            return "missingMolarMass: '\(unit)' needs a molar mass, e.g. mmol<180.1558800000541>/L"
        case .incompatibleUnits(let from, let to, let fromDimension, let toDimension):
            return "incompatibleUnits: cannot convert '\(from)' (\(fromDimension)) to '\(to)' (\(toDimension))"
        case .nonFiniteValue(let field):
            return "nonFiniteValue: \(field) is NaN or infinite"
        case .endBeforeStart(let field, let start, let end):
            return "endBeforeStart: \(field) ends at \(ISO8601.string(end)) before it starts at \(ISO8601.string(start))"
        case .unitNotAllowed(let type, let unit, let expectedDimension):
            return "unitNotAllowed: \(type) takes units of \(expectedDimension), not '\(unit)'"
        case .valueOutOfRange(let field, let value, let range):
            return "valueOutOfRange: \(field) = \(value) is outside \(range)"
        case .invalidDateOfBirth(let year, let month, let day):
            return "invalidDateOfBirth: \(year)-\(month)-\(day) is not a Gregorian date"
        case .invalidField(let field, let reason):
            return "invalidField: \(field): \(reason)"
        case .invalidDate(let text, let reason):
            return "invalidDate: '\(text)' \(reason)"
        case .dateOutOfRange(let field, let date, let range):
            return "dateOutOfRange: \(field) \(date) is outside \(range)"
        }
    }

    /// The case name, stable for scripts and exit-code mapping (`unitSyntax`, …).
    public var code: String {
        String(description.prefix { $0 != ":" })
    }
}
