import Foundation

/// A precomputed conversion between two units: for linear and affine units,
/// `convert(x)` is one multiply-add (`x * scale + offset`).
///
/// Make one with `HealthUnit.converter(to:)` (cached) and reuse it; converting
/// millions of values costs nothing but the arithmetic.
///
/// Conversion rules:
/// - same dimension: scale = SI factor of `from` / SI factor of `to`;
/// - a lone temperature unit to a lone temperature unit (`degF` → `degC`, `K`):
///   affine, through kelvin; temperatures inside compound units are intervals;
/// - amount ↔ mass (`mmol<180.1558800000541>/L` ↔ `mg/dL`): through the molar mass
///   carried by the molar side, in g/mol;
/// - `dBASPL` ↔ a pressure unit: p = 2e-5 Pa × 10^(L/20), the definition of sound
///   pressure level (not a multiply-add; such conversions are rare).
public struct UnitConverter: Sendable, Hashable {
    /// The unit values are converted from.
    public let from: HealthUnit
    /// The unit values are converted to.
    public let to: HealthUnit
    /// `to = from * scale + offset` for linear and affine conversions.
    public let scale: Double
    /// See `scale`.
    public let offset: Double
    @usableFromInline let kind: Kind

    @usableFromInline enum Kind: Sendable, Hashable {
        case linear
        /// Level in dB SPL → pressure; `scale` is 1 / (SI factor of the pressure unit).
        case levelToPressure
        /// Pressure → level in dB SPL; `scale` is the SI factor of the pressure unit.
        case pressureToLevel
    }

    /// The reference pressure of 0 dB SPL, in pascal.
    static let referencePressure = 2e-5

    init(from: HealthUnit, to: HealthUnit) throws {
        self.from = from
        self.to = to
        let a = from.storage, b = to.storage
        if a.isSoundPressureLevel || b.isSoundPressureLevel {
            guard a.dimension == b.dimension else { throw Self.incompatible(from, to) }
            if a.isSoundPressureLevel && b.isSoundPressureLevel {
                (scale, offset, kind) = (1, 0, .linear)
            } else if a.isSoundPressureLevel {
                (scale, offset, kind) = (1 / b.siFactor, 0, .levelToPressure)
            } else {
                (scale, offset, kind) = (a.siFactor, 0, .pressureToLevel)
            }
            return
        }
        kind = .linear
        if a.dimension == b.dimension {
            if let offsetA = a.pointOffset, let offsetB = b.pointOffset {
                // Temperature points: t = x * fa + za (kelvin from 0 °C); y = (t - zb) / fb.
                scale = a.siFactor / b.siFactor
                offset = (offsetA - offsetB) / b.siFactor
            } else {
                scale = a.siFactor / b.siFactor
                offset = 0
            }
            return
        }
        // Amount ↔ mass through the molar mass: dimensions differ by k × (amount − mass).
        let difference = a.dimension.exponents &- b.dimension.exponents
        let k = Int(difference[4])
        var expected = SIMD16<Int8>.zero
        expected[4] = Int8(truncatingIfNeeded: k)
        expected[0] = Int8(truncatingIfNeeded: -k)
        guard k != 0, difference == expected else { throw Self.incompatible(from, to) }
        guard let gramsPerMole = (k > 0 ? a.molarMass : b.molarMass) else {
            throw HealthModelError.missingMolarMass(unit: k > 0 ? from.canonicalString : to.canonicalString)
        }
        let kilogramsPerMole = gramsPerMole / 1000
        var bridge = 1.0
        for _ in 0..<abs(k) { bridge = k > 0 ? bridge * kilogramsPerMole : bridge / kilogramsPerMole }
        scale = a.siFactor * bridge / b.siFactor
        offset = 0
    }

    /// Whether `convert(x)` is `x * scale + offset` (every conversion but those
    /// between a sound pressure level and a pressure).
    package var isLinear: Bool { kind == .linear }

    /// Converts one value. Linear and affine conversions are a single multiply-add.
    @inlinable
    public func convert(_ value: Double) -> Double {
        if kind == .linear { return value * scale + offset }
        return convertLevel(value)
    }

    @usableFromInline
    func convertLevel(_ value: Double) -> Double {
        switch kind {
        case .levelToPressure:
            return Self.referencePressure * Foundation.pow(10, value / 20) * scale
        case .pressureToLevel:
            return 20 * Foundation.log10(value * scale / Self.referencePressure)
        case .linear:
            return value * scale + offset
        }
    }

    private static func incompatible(_ from: HealthUnit, _ to: HealthUnit) -> HealthModelError {
        .incompatibleUnits(from: from.canonicalString, to: to.canonicalString,
                           fromDimension: from.dimension.description, toDimension: to.dimension.description)
    }
}
