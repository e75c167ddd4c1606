/// An amount with a unit, as HKQuantity.
///
/// Invariant: `value` is finite (checked at construction).
public struct Quantity: Hashable, Sendable, CustomStringConvertible {
    /// The number, in `unit`.
    public let value: Double
    /// The unit `value` is expressed in.
    public let unit: HealthUnit

    /// A quantity; throws `nonFiniteValue` for NaN or ±infinity.
    public init(_ value: Double, _ unit: HealthUnit) throws {
        guard value.isFinite else { throw HealthModelError.nonFiniteValue(field: "quantity value") }
        self.value = value
        self.unit = unit
    }

    /// A quantity from a unit string; throws the unit's parse error or `nonFiniteValue`.
    public init(_ value: Double, unit: String) throws {
        try self.init(value, try HealthUnit(unit))
    }

    /// The value in `unit`; throws `incompatibleUnits` where HealthKit would crash.
    public func doubleValue(for unit: HealthUnit) throws -> Double {
        if unit == self.unit { return value }
        return try self.unit.converter(to: unit).convert(value)
    }

    /// Whether the quantity can be expressed in `unit`.
    public func isCompatible(with unit: HealthUnit) -> Bool {
        self.unit.isCompatible(with: unit)
    }

    /// `72 count/min`.
    public var description: String { "\(value) \(unit.canonicalString)" }
}
