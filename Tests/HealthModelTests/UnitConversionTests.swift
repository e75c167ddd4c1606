import Testing
import HealthModel

/// Conversions checked against exact published factors (NIST SP 811, the
/// international yard and pound agreement, the thermochemical calorie).
struct UnitConversionTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let value: Double, from: String, to: String, expected: Double
        var testDescription: String { "\(value) \(from) → \(to)" }
    }

    static let glucose = "mmol<180.1558800000541>/L"

    static let cases: [Case] = [
        Case(value: 1, from: "lb", to: "kg", expected: 0.45359237),
        Case(value: 1, from: "kg", to: "lb", expected: 1 / 0.45359237),
        Case(value: 150, from: "lb", to: "kg", expected: 68.0388555),
        Case(value: 1, from: "oz", to: "g", expected: 28.349523125),
        Case(value: 16, from: "oz", to: "lb", expected: 1),
        Case(value: 1, from: "st", to: "lb", expected: 14),
        Case(value: 1, from: "st", to: "kg", expected: 6.35029318),
        Case(value: 1, from: "in", to: "m", expected: 0.0254),
        Case(value: 1, from: "in", to: "cm", expected: 2.54),
        Case(value: 70, from: "in", to: "m", expected: 1.778),
        Case(value: 1, from: "ft", to: "m", expected: 0.3048),
        Case(value: 1, from: "ft", to: "in", expected: 12),
        Case(value: 5, from: "ft", to: "cm", expected: 152.4),
        Case(value: 1, from: "yd", to: "ft", expected: 3),
        Case(value: 1, from: "yd", to: "m", expected: 0.9144),
        Case(value: 1, from: "mi", to: "m", expected: 1609.344),
        Case(value: 1, from: "mi", to: "km", expected: 1.609344),
        Case(value: 1, from: "mi", to: "ft", expected: 5280),
        Case(value: 1, from: "km", to: "m", expected: 1000),
        Case(value: 1, from: "mm", to: "cm", expected: 0.1),
        Case(value: 1, from: "Cal", to: "kcal", expected: 1),
        Case(value: 1, from: "kcal", to: "J", expected: 4184),
        Case(value: 1, from: "kcal", to: "kJ", expected: 4.184),
        Case(value: 1, from: "cal", to: "J", expected: 4.184),
        Case(value: 1, from: "kJ", to: "kcal", expected: 1 / 4.184),
        Case(value: 1, from: "Cal", to: "J", expected: 4184),
        Case(value: 98.6, from: "degF", to: "degC", expected: 37),
        Case(value: 37, from: "degC", to: "degF", expected: 98.6),
        Case(value: 0, from: "degC", to: "K", expected: 273.15),
        Case(value: 32, from: "degF", to: "degC", expected: 0),
        Case(value: -40, from: "degF", to: "degC", expected: -40),
        Case(value: 212, from: "degF", to: "K", expected: 373.15),
        Case(value: 310.15, from: "K", to: "degC", expected: 37),
        Case(value: 100, from: "mg/dL", to: glucose, expected: 1000 / 180.1558800000541),
        Case(value: 5.5, from: glucose, to: "mg/dL", expected: 5.5 * 18.01558800000541),
        Case(value: 1, from: "mol<180.1558800000541>", to: "g", expected: 180.1558800000541),
        Case(value: 1, from: "g", to: "mmol<180.1558800000541>", expected: 1000 / 180.1558800000541),
        Case(value: 1, from: "fl_oz_us", to: "mL", expected: 29.5735295625),
        Case(value: 1, from: "fl_oz_imp", to: "mL", expected: 28.4130625),
        Case(value: 1, from: "pt_us", to: "mL", expected: 473.176473),
        Case(value: 1, from: "pt_imp", to: "mL", expected: 568.26125),
        Case(value: 1, from: "cup_us", to: "mL", expected: 236.5882365),
        Case(value: 1, from: "cup_imp", to: "mL", expected: 284.130625),
        Case(value: 1, from: "L", to: "mL", expected: 1000),
        Case(value: 1, from: "l", to: "mL", expected: 1000),
        Case(value: 1, from: "dL", to: "mL", expected: 100),
        Case(value: 1, from: "L", to: "fl_oz_us", expected: 1 / 0.0295735295625),
        Case(value: 1, from: "L", to: "m^3", expected: 0.001),
        Case(value: 1, from: "m^3", to: "L", expected: 1000),
        Case(value: 1, from: "hr", to: "min", expected: 60),
        Case(value: 1, from: "d", to: "hr", expected: 24),
        Case(value: 1, from: "min", to: "s", expected: 60),
        Case(value: 1, from: "d", to: "s", expected: 86_400),
        Case(value: 1000, from: "ms", to: "s", expected: 1),
        Case(value: 10, from: "km/hr", to: "m/s", expected: 10_000.0 / 3600.0),
        Case(value: 1, from: "mi/hr", to: "km/hr", expected: 1.609344),
        Case(value: 1, from: "m/s", to: "km/hr", expected: 3.6),
        Case(value: 35, from: "mL/(kg*min)", to: "L/(kg*hr)", expected: 2.1),
        Case(value: 35, from: "mL/min·kg", to: "mL/(kg*min)", expected: 35),
        Case(value: 35, from: "mL/min·kg", to: "L/(kg*hr)", expected: 2.1),
        Case(value: 60, from: "count/min", to: "count/s", expected: 1),
        Case(value: 1, from: "count/s", to: "Hz", expected: 1),
        Case(value: 72, from: "count/min", to: "Hz", expected: 1.2),
        Case(value: 1, from: "Hz", to: "count/min", expected: 60),
        Case(value: 1, from: "s^-1", to: "Hz", expected: 1),
        Case(value: 1, from: "mmHg", to: "Pa", expected: 133.322387415),
        Case(value: 1, from: "atm", to: "kPa", expected: 101.325),
        Case(value: 1, from: "cmAq", to: "Pa", expected: 98.0665),
        Case(value: 1, from: "inHg", to: "Pa", expected: 3386.388640341),
        Case(value: 1, from: "kPa", to: "Pa", expected: 1000),
        Case(value: 1, from: "mcg", to: "mg", expected: 0.001),
        Case(value: 1, from: "mg", to: "g", expected: 0.001),
        Case(value: 1000, from: "mcg", to: "g", expected: 0.001),
        Case(value: 1, from: "kg", to: "g", expected: 1000),
        Case(value: 1, from: "mcS", to: "S", expected: 1e-6),
        Case(value: 1, from: "kW", to: "W", expected: 1000),
        Case(value: 1, from: "W", to: "J/s", expected: 1),
        Case(value: 1, from: "kcal/hr", to: "W", expected: 4184.0 / 3600.0),
        Case(value: 1, from: "kcal/hr·kg", to: "W/kg", expected: 4184.0 / 3600.0),
        Case(value: 1, from: "m^2", to: "cm^2", expected: 10_000),
        Case(value: 1, from: "km^2", to: "m^2", expected: 1e6),
        Case(value: 60, from: "dBASPL", to: "Pa", expected: 0.02),
        Case(value: 0.02, from: "Pa", to: "dBASPL", expected: 60),
        Case(value: 94, from: "dBASPL", to: "dBASPL", expected: 94),
        Case(value: 0.5, from: "%", to: "%", expected: 0.5),
        Case(value: 3, from: "IU", to: "IU", expected: 3),
        Case(value: 1, from: "kg/m.s^2", to: "Pa", expected: 1),
    ]

    @Test(arguments: cases)
    func convertsWithinOnePartInATrillion(_ c: Case) throws {
        let converter = try HealthUnit(c.from).converter(to: try HealthUnit(c.to))
        let got = converter.convert(c.value)
        let relative = c.expected == 0 ? abs(got) : abs(got - c.expected) / abs(c.expected)
        #expect(relative <= 1e-12, "\(c.value) \(c.from) → \(c.to) gave \(got), expected \(c.expected)")
    }

    @Test func thereAreAtLeastSixtyPublishedConversions() {
        #expect(Self.cases.count >= 60)
    }

    @Test func quantityDoubleValueConverts() throws {
        let weight = try Quantity(176.37, unit: "lb")
        #expect(abs(try weight.doubleValue(for: .kilogram) - 176.37 * 0.45359237) < 1e-12)
        #expect(weight.isCompatible(with: try HealthUnit("g")))
        #expect(!weight.isCompatible(with: .meter))
    }

    @Test func linearConversionIsOneMultiplyAdd() throws {
        let c = try HealthUnit("degF").converter(to: try HealthUnit("degC"))
        #expect(c.scale == 1 / 1.8)
        #expect(c.offset == -160.0 / 9.0)
        let k = try HealthUnit("lb").converter(to: .kilogram)
        #expect(k.scale == 0.45359237)
        #expect(k.offset == 0)
    }

    @Test func incompatibleConversionIsATypedErrorNamingBothUnits() {
        #expect(throws: HealthModelError.incompatibleUnits(from: "kg", to: "m", fromDimension: "mass", toDimension: "length")) {
            try HealthUnit("kg").converter(to: try HealthUnit("m"))
        }
        #expect(throws: HealthModelError.incompatibleUnits(from: "count", to: "%", fromDimension: "dimensionless", toDimension: "percent")) {
            try HealthUnit("count").converter(to: .percent)
        }
        #expect(throws: HealthModelError.incompatibleUnits(from: "IU", to: "mg", fromDimension: "insulin", toDimension: "mass")) {
            try HealthUnit("IU").converter(to: try HealthUnit("mg"))
        }
    }

    @Test func nanQuantityIsRefused() {
        #expect(throws: HealthModelError.nonFiniteValue(field: "quantity value")) { try Quantity(.nan, unit: "kg") }
        #expect(throws: HealthModelError.nonFiniteValue(field: "quantity value")) { try Quantity(.infinity, unit: "kg") }
    }
}
