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

    /// `72 count/min`: the value (`ExportNumber` style: no `.0` on whole numbers) and
    /// the unit as spelled.
    public var description: String { "\(Self.format(value)) \(unit.spelling)" }

    /// A number as Apple writes it in exports and as HealthKit prints it: whole
    /// numbers without a fraction (`62`), others in the shortest form that reads
    /// back to the same double (`29.3`, `3.40897998046875`).
    public static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
