/// The physical dimension of a unit: integer exponents over base quantities.
///
/// The first six are SI base dimensions. The rest are HealthKit's own kinds of
/// quantity that convert to nothing else: `IU` (insulin units, an amount of
/// biological activity, not a mass), `dBHL` (hearing level), and `%` (HealthKit's
/// percent, stored as a fraction 0…1; whether it converts to `count` is not
/// documented by Apple, so we keep it apart rather than guess).
/// `count` is dimensionless: every exponent zero.
public struct UnitDimension: Hashable, Sendable, CustomStringConvertible {
    /// Exponents in the order of `UnitDimension.baseNames`.
    public private(set) var exponents: SIMD16<Int8>

    /// The names of the base dimensions, in exponent order.
    public static let baseNames = ["mass", "length", "time", "temperature", "amount", "current",
                                   "insulin", "hearingLevel", "percent"]

    static let mass = Self(index: 0), length = Self(index: 1), time = Self(index: 2)
    static let temperature = Self(index: 3), amount = Self(index: 4), current = Self(index: 5)
    static let insulin = Self(index: 6), hearingLevel = Self(index: 7), percent = Self(index: 8)

    /// The dimension of a plain number (`count`).
    public static let dimensionless = Self(exponents: .zero)

    init(exponents: SIMD16<Int8>) { self.exponents = exponents }

    init(index: Int) {
        var e = SIMD16<Int8>.zero
        e[index] = 1
        exponents = e
    }

    init(_ pairs: [(UnitDimension, Int8)]) {
        var e = SIMD16<Int8>.zero
        for (dimension, power) in pairs { e &+= dimension.exponents &* SIMD16(repeating: power) }
        exponents = e
    }

    /// The exponent of base dimension `index` (see `baseNames`).
    public func exponent(_ index: Int) -> Int { Int(exponents[index]) }

    static func * (lhs: Self, rhs: Self) -> Self { Self(exponents: lhs.exponents &+ rhs.exponents) }

    func raised(to power: Int) -> Self {
        Self(exponents: exponents &* SIMD16(repeating: Int8(truncatingIfNeeded: power)))
    }

    /// Whether this is the dimension of a plain number.
    public var isDimensionless: Bool { exponents == .zero }

    /// Base dimensions with their exponents, e.g. `length^3·mass^-1·time^-1`;
    /// `dimensionless` for a plain number. A well-known combination is named first:
    /// `energy (mass·length^2·time^-2)`.
    public var description: String {
        if isDimensionless { return "dimensionless" }
        let order = [0, 1, 2, 3, 4, 5, 6, 7, 8]
        // Positive exponents first, each group in base order, for a stable reading.
        var parts: [String] = []
        for positive in [true, false] {
            for i in order {
                let e = Int(exponents[i])
                guard e != 0, (e > 0) == positive else { continue }
                parts.append(e == 1 ? Self.baseNames[i] : "\(Self.baseNames[i])^\(e)")
            }
        }
        let formula = parts.joined(separator: "·")
        if let name = Self.names[self], name != formula { return "\(name) (\(formula))" }
        return formula
    }

    static let volume = length.raised(to: 3)
    static let energy = Self([(mass, 1), (length, 2), (time, -2)])
    static let pressure = Self([(mass, 1), (length, -1), (time, -2)])
    static let power = Self([(mass, 1), (length, 2), (time, -3)])
    static let voltage = Self([(mass, 1), (length, 2), (time, -3), (current, -1)])
    static let conductance = Self([(mass, -1), (length, -2), (time, 3), (current, 2)])

    static let names: [UnitDimension: String] = [
        volume: "volume", energy: "energy", pressure: "pressure", power: "power",
        voltage: "voltage", conductance: "conductance",
        time.raised(to: -1): "frequency",
        Self([(length, 1), (time, -1)]): "speed",
        Self([(mass, 1), (length, -3)]): "mass concentration",
        Self([(amount, 1), (length, -3)]): "molar concentration",
        Self([(length, 3), (mass, -1), (time, -1)]): "oxygen uptake",
        Self([(length, 2), (time, -2)]): "energy per mass",
        Self([(length, 2), (time, -3)]): "power per mass",
    ]
}
