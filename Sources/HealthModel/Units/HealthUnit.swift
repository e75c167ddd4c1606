
/// A unit of measure with HealthKit's HKUnit string grammar and a real algebra.
///
/// - Parse every HKUnit string: base tokens and SI prefixes (`kg`, `mcg`, `dL`),
///   products with `.`, `*` or the middle dot `·`, one `/`, integer powers
///   (`m^2`, `s^-1`), parentheses (`mL/(kg*min)`), and molar units with their molar
///   mass in g/mol (`mmol<180.1558800000541>/L`).
/// - Equality and hashing are by meaning: `mL/min·kg` equals `mL/(kg*min)`; the
///   canonical printed form (`canonicalString`) is unique per meaning and parses back
///   to an equal unit.
/// - Parsing is cached: parsing the same string again costs a dictionary lookup.
///
/// Invariant: `canonicalString` determines every other property.
public struct HealthUnit: Hashable, Sendable, CustomStringConvertible {
    let storage: Storage
    /// The unit as it was written (`mL/min·kg`), kept so that a stored quantity shows
    /// the spelling it came with; the canonical string when made otherwise. Equality
    /// and hashing ignore it.
    public let spelling: String

    /// Parses an HKUnit string. Throws `HealthModelError.unitSyntax`,
    /// `.unknownUnitToken` or `.missingMolarMass` naming the string.
    public init(_ text: String) throws {
        try self.init(text, cached: true)
    }

    /// Parses an HKUnit string, consulting and filling the cache when `cached`
    /// (`false` measures the parser itself; benchmarks use it).
    public init(_ text: String, cached: Bool) throws {
        if !cached {
            var parser = UnitParser(text)
            self.init(storage: Storage(factors: try parser.parse()), spelling: text)
            return
        }
        if let cached = HealthUnit.cache[text] {
            self = cached
            return
        }
        var parser = UnitParser(text)
        let parsed = try parser.parse()
        self.init(storage: Storage(factors: parsed), spelling: text)
        HealthUnit.cache.insert(self, for: text)
    }

    init(factors: [UnitFactor]) {
        storage = Storage(factors: factors)
        spelling = storage.canonical
    }

    private init(storage: Storage, spelling: String) {
        self.storage = storage
        self.spelling = spelling
    }

    /// The unit's unique printed form, e.g. `mL/(kg*min)`, `count/min`,
    /// `mmol<180.1558800000541>/L`.
    public var canonicalString: String { storage.canonical }
    /// The physical dimension (`mass`, `length^3·mass^-1·time^-1`, …).
    public var dimension: UnitDimension { storage.dimension }
    /// The canonical string.
    public var description: String { storage.canonical }
    /// The molar mass in g/mol carried by a molar unit, else `nil`.
    public var molarMass: Double? { storage.molarMass }

    /// Whether a quantity in this unit can be converted to `other`.
    public func isCompatible(with other: HealthUnit) -> Bool {
        (try? converter(to: other)) != nil
    }

    /// A converter from this unit to `other`, cached. Throws
    /// `HealthModelError.incompatibleUnits` naming both units.
    public func converter(to other: HealthUnit) throws -> UnitConverter {
        let key = ConverterKey(from: canonicalString, to: other.canonicalString)
        if let cached = HealthUnit.converters[key] { return cached }
        let made = try UnitConverter(from: self, to: other)
        HealthUnit.converters.insert(made, for: key)
        return made
    }

    public static func == (lhs: HealthUnit, rhs: HealthUnit) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.canonical == rhs.storage.canonical
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(storage.canonical) }

    // Common units, for callers that would otherwise parse literals.
    /// `count`, the unit of plain numbers (BMI, steps).
    public static let count = try! HealthUnit("count")
    /// `kg`.
    public static let kilogram = try! HealthUnit("kg")
    /// `m`.
    public static let meter = try! HealthUnit("m")
    /// `kcal`.
    public static let kilocalorie = try! HealthUnit("kcal")
    /// `%`: HealthKit's percent, whose values are fractions 0…1.
    public static let percent = try! HealthUnit("%")
    /// `s`.
    public static let second = try! HealthUnit("s")

    private struct ConverterKey: Hashable { let from: String, to: String }
    // Bounded (hostile input may name millions of distinct units).
    private static let cache = BoundedCache<String, HealthUnit>(limit: 10_000)
    private static let converters = BoundedCache<ConverterKey, UnitConverter>(limit: 10_000)
}

/// One factor of a unit: a prefixed base token raised to a power.
struct UnitFactor: Hashable, Sendable {
    let atom: Int
    let prefix: Int8
    let molarMass: Double?
    var exponent: Int

    /// `kg`, `mmol<180.1558800000541>`, `fl_oz_us`: the factor without its power.
    var symbol: String {
        var text = UnitPrefix.symbol(for: prefix) + UnitAtom.all[atom].symbol
        if let molarMass { text += "<\(molarMass)>" }
        return text
    }

    /// The factor's SI value (`atom.factor × 10^prefix`), before the power.
    var siFactor: Double {
        let base = UnitAtom.all[atom].factor
        if prefix == 0 { return base }
        return prefix > 0 ? base * UnitPrefix.factor(prefix) : base / UnitPrefix.factor(-prefix)
    }

    func sameBase(as other: UnitFactor) -> Bool {
        atom == other.atom && prefix == other.prefix && molarMass == other.molarMass
    }
}

extension HealthUnit {
    /// Everything derived from the factor list, computed once per distinct unit.
    final class Storage: Sendable {
        let factors: [UnitFactor]
        let canonical: String
        let dimension: UnitDimension
        /// SI value of one unit (for an affine unit: of one unit interval).
        let siFactor: Double
        /// For a lone temperature unit, where its zero lies relative to 0 °C, in kelvin
        /// (degC 0, K −273.15, degF −160/9). Measuring from 0 °C rather than 0 K keeps
        /// the common degC ↔ degF conversions free of cancellation error.
        let pointOffset: Double?
        let molarMass: Double?
        /// A lone `dBASPL`: values are levels, not amounts.
        let isSoundPressureLevel: Bool

        init(factors input: [UnitFactor]) {
            // Combine equal bases, drop zero powers, order by symbol: one form per meaning.
            var combined: [UnitFactor] = []
            for factor in input {
                if let i = combined.firstIndex(where: { $0.sameBase(as: factor) }) {
                    combined[i].exponent += factor.exponent
                } else {
                    combined.append(factor)
                }
            }
            combined.removeAll { $0.exponent == 0 }
            combined.sort { $0.symbol < $1.symbol }
            factors = combined

            var dimension = UnitDimension.dimensionless
            var si = 1.0
            var molar: Double?
            for factor in combined {
                dimension = dimension * UnitAtom.all[factor.atom].dimension.raised(to: factor.exponent)
                let f = factor.siFactor
                for _ in 0..<abs(factor.exponent) { si = factor.exponent > 0 ? si * f : si / f }
                if molar == nil { molar = factor.molarMass }
            }
            self.dimension = dimension
            self.siFactor = si
            self.molarMass = molar

            let lone = combined.count == 1 && combined[0].exponent == 1 ? combined[0] : nil
            switch lone.map({ UnitAtom.all[$0.atom].scale }) {
            case .celsius?: pointOffset = 0
            case .fahrenheit?: pointOffset = -160.0 / 9.0
            case .linear? where dimension == .temperature: pointOffset = -273.15
            default: pointOffset = nil
            }
            isSoundPressureLevel = lone.map { UnitAtom.all[$0.atom].scale == .decibelSoundPressure } ?? false

            let numerator = combined.filter { $0.exponent > 0 }
            let denominator = combined.filter { $0.exponent < 0 }
            func power(_ f: UnitFactor, _ e: Int) -> String { e == 1 ? f.symbol : "\(f.symbol)^\(e)" }
            if numerator.isEmpty && denominator.isEmpty {
                canonical = "count"
            } else if numerator.isEmpty {
                canonical = denominator.map { power($0, $0.exponent) }.joined(separator: "*")
            } else {
                var text = numerator.map { power($0, $0.exponent) }.joined(separator: "*")
                if !denominator.isEmpty {
                    let below = denominator.map { power($0, -$0.exponent) }.joined(separator: "*")
                    text += denominator.count == 1 ? "/" + below : "/(" + below + ")"
                }
                canonical = text
            }
        }
    }
}
