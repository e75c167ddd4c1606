/// A HealthKit quantity type (`HKQuantityTypeIdentifierBodyMass`, …).
///
/// Values exist only for the types this version knows (the table in
/// `QuantityType+Table.swift`, from HealthKit's SDK); `code` is the type's stable
/// number in the event format. Use `TypeIdentifier` to carry an identifier this
/// version does not know.
public struct QuantityType: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Stable code: the index in the append-only table.
    public let code: UInt16

    struct Descriptor: Sendable {
        let identifier: String
        let shortName: String
        let aggregation: AggregationStyle
        let canonicalUnit: String
    }

    init(uncheckedCode code: UInt16) { self.code = code }

    /// The type with stable code `code`, or `nil` when this version has none.
    public init?(code: UInt16) {
        guard Int(code) < Self.table.count else { return nil }
        self.code = code
    }

    /// Looks a type up by raw identifier (`HKQuantityTypeIdentifierBodyMass`) or short
    /// form (`bodyMass`). Throws `dataTypeNotAvailable` naming the identifier.
    public init(identifier: String) throws {
        guard let type = Self.byName[identifier] else {
            throw HealthModelError.dataTypeNotAvailable(identifier: identifier)
        }
        self = type
    }

    var descriptor: Descriptor { Self.table[Int(code)] }
    /// HealthKit's raw identifier, e.g. `HKQuantityTypeIdentifierBodyMass`.
    public var identifier: String { descriptor.identifier }
    /// HealthKit's Swift name, e.g. `bodyMass`.
    public var shortName: String { descriptor.shortName }
    /// How HealthKit aggregates samples of this type in statistics.
    public var aggregationStyle: AggregationStyle { descriptor.aggregation }
    /// HealthKit's canonical unit for the type; every quantity saved for the type must
    /// convert to it.
    public var canonicalUnit: HealthUnit { Self.canonicalUnits[Int(code)] }
    /// The dimension every quantity of this type has (from the canonical unit).
    public var dimension: UnitDimension { Self.dimensions[Int(code)] }
    /// Whether HealthKit stores values of this type as fractions 0…1 in `%`.
    public var isPercentage: Bool { Self.percentages[Int(code)] }
    /// The short name.
    public var description: String { shortName }

    /// Every quantity type, in code order.
    public static var allTypes: [QuantityType] { (0..<table.count).map { QuantityType(uncheckedCode: UInt16($0)) } }

    public static func < (lhs: QuantityType, rhs: QuantityType) -> Bool { lhs.code < rhs.code }

    /// Checks that `quantity` may be stored as this type: its unit converts to the
    /// canonical unit, and (unless `checkingRange` is false: a value read back from a
    /// log, accepted when it was written) its value in the canonical unit is in
    /// `validRange`.
    public func validate(_ quantity: Quantity, checkingRange: Bool = true) throws {
        try validate(value: quantity.value, unit: quantity.unit, checkingRange: checkingRange)
    }

    /// `validate(_:checkingRange:)` of a quantity given as its value and unit (the value
    /// finite, as a `Quantity`'s is): the one check, for callers that hold the two apart
    /// (the importer's direct encoding) and need build no `Quantity` per sample.
    public func validate(value: Double, unit: HealthUnit, checkingRange: Bool = true) throws {
        try validateUnit(unit)
        try validateValue(value, unit: unit, checkingRange: checkingRange)
    }

    /// The first half of `validate`: the unit converts to the canonical unit (the same
    /// answer for every value: a caller may ask once per unit).
    public func validateUnit(_ unit: HealthUnit) throws {
        guard unit.dimension == dimension || unit.isCompatible(with: canonicalUnit) else {
            throw HealthModelError.unitNotAllowed(type: identifier, unit: unit.canonicalString,
                                                  expectedDimension: dimension.description)
        }
    }

    /// The second half of `validate`: the value, in a unit `validateUnit` admits, is in
    /// range (a percentage a fraction; unless `checkingRange` is false, `validRange`).
    public func validateValue(_ value: Double, unit: HealthUnit, checkingRange: Bool = true) throws {
        try validateValue(value, unit: unit, canonical: checkingRange ? canonicalValue(value, unit: unit) : value,
                          checkingRange: checkingRange)
    }

    /// `validateValue(_:unit:checkingRange:)` of a value whose canonical-unit value the
    /// caller has already worked out (`canonical`; the importer's prepared units convert
    /// once per record for the statistics projection anyway).
    public func validateValue(_ value: Double, unit: HealthUnit, canonical: Double, checkingRange: Bool = true) throws {
        if isPercentage, !(0...1).contains(value) {
            throw HealthModelError.valueOutOfRange(field: "\(shortName) value", value: value,
                                                   range: "0…1 (HealthKit stores percentages as fractions)")
        }
        guard checkingRange else { return }
        let range = validRange
        // The lower bounds are about the sign, which a unit (a positive factor) keeps,
        // but for temperatures (an affine unit moves the zero).
        guard range.holdsLowerBound(range == .aboveAbsoluteZero ? canonical : value) else {
            throw HealthModelError.valueOutOfRange(field: "\(shortName) value", value: value,
                                                   range: range.text(unit: range == .aboveAbsoluteZero ? canonicalUnit.canonicalString : unit.canonicalString))
        }
        // The upper bound in the canonical unit, where statistics add values up (NaN fails).
        guard canonical.magnitude <= range.maximumMagnitude else {
            throw HealthModelError.valueOutOfRange(field: "\(shortName) value", value: value,
                                                   range: range.upperText(unit: canonicalUnit.canonicalString))
        }
    }

    /// `value`, in `unit` (one the type admits), in the type's canonical unit: one
    /// multiplication for a unit of the canonical unit's dimension (no cache is
    /// consulted: every sample saved asks), the unit's converter otherwise
    /// (temperatures, sound levels, molar units); the value as given when nothing
    /// converts it.
    public func canonicalValue(_ value: Double, unit: HealthUnit) -> Double {
        let canonical = canonicalUnit
        let a = unit.storage, b = canonical.storage
        if a === b { return value }
        if a.dimension == b.dimension, a.pointOffset == nil, b.pointOffset == nil, !a.isSoundPressureLevel, !b.isSoundPressureLevel {
            return value * (a.siFactor / b.siFactor)  // UnitConverter's linear scale, the same number
        }
        return (try? unit.converter(to: canonical).convert(value)) ?? value
    }

    static let canonicalUnits: [HealthUnit] = table.map {
        // The table is ours and tested: every canonical unit parses.
        try! HealthUnit($0.canonicalUnit)
    }
    /// `canonicalUnit.dimension` and `canonicalUnit == .percent` by code, worked out
    /// once: decoding asks both for every sample.
    static let dimensions: [UnitDimension] = canonicalUnits.map(\.dimension)
    static let percentages: [Bool] = canonicalUnits.map { $0 == .percent }

    static let byName: [String: QuantityType] = {
        var names: [String: QuantityType] = [:]
        for (i, d) in table.enumerated() {
            names[d.identifier] = QuantityType(uncheckedCode: UInt16(i))
            names[d.shortName] = QuantityType(uncheckedCode: UInt16(i))
        }
        return names
    }()
}

/// How a quantity type's samples combine (HKQuantityAggregationStyle).
public enum AggregationStyle: String, Sendable, CaseIterable {
    /// Samples add up (steps, energy).
    case cumulative
    /// Samples average arithmetically (body mass); HealthKit's `discreteArithmetic`.
    case discrete
    /// Samples average weighted by time (heart rate).
    case discreteTemporallyWeighted
    /// Levels combine as an equivalent continuous level (audio exposure).
    case discreteEquivalentContinuousLevel
}
