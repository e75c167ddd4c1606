/// A base unit token of the HKUnit grammar (`g`, `lb`, `mol`, `degC`, …) with its
/// dimension and its exact factor to the SI unit of that dimension.
///
/// Factors are the exact definitions (NIST SP 811), not the rounded values in
/// Apple's header comments (`lb` is 0.45359237 kg exactly, not 453.592 g).
struct UnitAtom: Sendable {
    /// How a value in this unit maps onto SI.
    enum Scale: Sendable {
        /// SI value = value × factor.
        case linear
        /// Celsius: K = degC + 273.15 (affine when the unit stands alone).
        case celsius
        /// Fahrenheit: K = (degF + 459.67) / 1.8 (affine when the unit stands alone).
        case fahrenheit
        /// Sound pressure level: p = 2e-5 Pa × 10^(dB/20) (only alone).
        case decibelSoundPressure
    }

    let symbol: String
    let dimension: UnitDimension
    /// SI value of one unit (for affine and log units: of one unit *interval*).
    let factor: Double
    let prefixable: Bool
    let scale: Scale

    /// Every base token. `l` is an alias of `L`; `Cal` (food calorie) equals `kcal`
    /// in value but is its own token, as in HealthKit.
    static let all: [UnitAtom] = {
        let d = UnitDimension.self
        return [
            UnitAtom(symbol: "g", dimension: d.mass, factor: 0.001, prefixable: true, scale: .linear),
            UnitAtom(symbol: "oz", dimension: d.mass, factor: 0.028349523125, prefixable: false, scale: .linear),
            UnitAtom(symbol: "lb", dimension: d.mass, factor: 0.45359237, prefixable: false, scale: .linear),
            UnitAtom(symbol: "st", dimension: d.mass, factor: 6.35029318, prefixable: false, scale: .linear),
            UnitAtom(symbol: "m", dimension: d.length, factor: 1, prefixable: true, scale: .linear),
            UnitAtom(symbol: "in", dimension: d.length, factor: 0.0254, prefixable: false, scale: .linear),
            UnitAtom(symbol: "ft", dimension: d.length, factor: 0.3048, prefixable: false, scale: .linear),
            UnitAtom(symbol: "yd", dimension: d.length, factor: 0.9144, prefixable: false, scale: .linear),
            UnitAtom(symbol: "mi", dimension: d.length, factor: 1609.344, prefixable: false, scale: .linear),
            UnitAtom(symbol: "L", dimension: d.volume, factor: 0.001, prefixable: true, scale: .linear),
            UnitAtom(symbol: "fl_oz_us", dimension: d.volume, factor: 0.0000295735295625, prefixable: false, scale: .linear),
            UnitAtom(symbol: "fl_oz_imp", dimension: d.volume, factor: 0.0000284130625, prefixable: false, scale: .linear),
            UnitAtom(symbol: "pt_us", dimension: d.volume, factor: 0.000473176473, prefixable: false, scale: .linear),
            UnitAtom(symbol: "pt_imp", dimension: d.volume, factor: 0.00056826125, prefixable: false, scale: .linear),
            UnitAtom(symbol: "cup_us", dimension: d.volume, factor: 0.0002365882365, prefixable: false, scale: .linear),
            UnitAtom(symbol: "cup_imp", dimension: d.volume, factor: 0.000284130625, prefixable: false, scale: .linear),
            UnitAtom(symbol: "s", dimension: d.time, factor: 1, prefixable: true, scale: .linear),
            UnitAtom(symbol: "min", dimension: d.time, factor: 60, prefixable: false, scale: .linear),
            UnitAtom(symbol: "hr", dimension: d.time, factor: 3600, prefixable: false, scale: .linear),
            UnitAtom(symbol: "d", dimension: d.time, factor: 86_400, prefixable: false, scale: .linear),
            UnitAtom(symbol: "J", dimension: d.energy, factor: 1, prefixable: true, scale: .linear),
            UnitAtom(symbol: "cal", dimension: d.energy, factor: 4.184, prefixable: true, scale: .linear),
            UnitAtom(symbol: "Cal", dimension: d.energy, factor: 4184, prefixable: false, scale: .linear),
            UnitAtom(symbol: "K", dimension: d.temperature, factor: 1, prefixable: true, scale: .linear),
            UnitAtom(symbol: "degC", dimension: d.temperature, factor: 1, prefixable: false, scale: .celsius),
            UnitAtom(symbol: "degF", dimension: d.temperature, factor: 1 / 1.8, prefixable: false, scale: .fahrenheit),
            UnitAtom(symbol: "Pa", dimension: d.pressure, factor: 1, prefixable: true, scale: .linear),
            UnitAtom(symbol: "mmHg", dimension: d.pressure, factor: 133.322387415, prefixable: false, scale: .linear),
            UnitAtom(symbol: "cmAq", dimension: d.pressure, factor: 98.0665, prefixable: false, scale: .linear),
            UnitAtom(symbol: "atm", dimension: d.pressure, factor: 101_325, prefixable: false, scale: .linear),
            UnitAtom(symbol: "inHg", dimension: d.pressure, factor: 3386.388640341, prefixable: false, scale: .linear),
            UnitAtom(symbol: "count", dimension: d.dimensionless, factor: 1, prefixable: false, scale: .linear),
            UnitAtom(symbol: "%", dimension: d.percent, factor: 1, prefixable: false, scale: .linear),
            UnitAtom(symbol: "S", dimension: d.conductance, factor: 1, prefixable: true, scale: .linear),
            UnitAtom(symbol: "V", dimension: d.voltage, factor: 1, prefixable: true, scale: .linear),
            UnitAtom(symbol: "W", dimension: d.power, factor: 1, prefixable: true, scale: .linear),
            UnitAtom(symbol: "Hz", dimension: d.time.raised(to: -1), factor: 1, prefixable: true, scale: .linear),
            UnitAtom(symbol: "IU", dimension: d.insulin, factor: 1, prefixable: false, scale: .linear),
            UnitAtom(symbol: "dBASPL", dimension: d.pressure, factor: 1, prefixable: false, scale: .decibelSoundPressure),
            UnitAtom(symbol: "dBHL", dimension: d.hearingLevel, factor: 1, prefixable: false, scale: .linear),
            UnitAtom(symbol: "mol", dimension: d.amount, factor: 1, prefixable: true, scale: .linear),
        ]
    }()

    /// Index of `mol` in `all`: molar units carry a molar mass.
    static let molIndex = all.firstIndex { $0.symbol == "mol" }!

    /// Token → index in `all`; `l` is accepted for `L`.
    static let bySymbol: [String: Int] = {
        var table: [String: Int] = [:]
        for (i, atom) in all.enumerated() { table[atom.symbol] = i }
        table["l"] = table["L"]
        return table
    }()
}

/// SI prefixes accepted before a prefixable token, with their power of ten.
/// `mc` is micro (HealthKit writes `mcg`, `mcS`); two-letter prefixes are tried first.
enum UnitPrefix {
    static let all: [(symbol: String, power: Int8)] = [
        ("da", 1), ("mc", -6),
        ("p", -12), ("n", -9), ("m", -3), ("c", -2), ("d", -1),
        ("h", 2), ("k", 3), ("M", 6), ("G", 9), ("T", 12), ("f", -15),
    ]

    /// The symbol printed for a power of ten (the inverse of `all`).
    static func symbol(for power: Int8) -> String {
        all.first { $0.power == power }?.symbol ?? ""
    }

    /// Exact powers of ten for the prefixes (10^-15 … 10^12), as Doubles.
    static func factor(_ power: Int8) -> Double {
        // Division by an exact power of ten is correctly rounded; multiplying by a
        // rounded 1e-3 is not. Keep the exact integer side.
        power >= 0 ? pow10(Int(power)) : 1 / pow10(Int(-power))
    }

    private static func pow10(_ n: Int) -> Double {
        var value = 1.0
        for _ in 0..<n { value *= 10 }
        return value
    }
}
