/// Reads an HKUnit string into unit factors.
///
/// Grammar (UTF-8; `·` is U+00B7, the middle dot Apple Health exports write):
/// ```
/// unit    := product ( "/" product )?          -- at most one "/" in the whole string
/// product := power ( ( "." | "*" | "·" ) power )*   -- binds tighter than "/"
/// power   := primary ( "^" "-"? digits )?
/// primary := token ( "<" number ">" )? | "(" unit ")"
/// token   := ( letter | "_" | "%" )+           -- a base token, or prefix + prefixable token
/// ```
/// `kg/m.s^2` is `kg/(m·s²)`. A molar token (`mol`, `mmol`) must carry its molar mass.
///
/// Bounds (hostile input must not exhaust the stack or loop for long): at most
/// `maxLength` UTF-8 bytes, parentheses nested at most `maxDepth` deep, and every
/// factor's power and every base dimension's exponent within ±`maxExponent` after
/// the powers multiply through parentheses. Beyond any of them: `unitSyntax`.
struct UnitParser {
    /// The longest unit string accepted, in UTF-8 bytes.
    static let maxLength = 256
    /// The deepest nesting of parentheses accepted.
    static let maxDepth = 16
    /// The largest power of a factor or of a base dimension, either sign.
    static let maxExponent = 99

    private let text: String
    private let bytes: [UInt8]
    private var position = 0
    private var slashes = 0
    private var depth = 0

    init(_ text: String) {
        self.text = text
        self.bytes = Array(text.utf8)
    }

    mutating func parse() throws -> [UnitFactor] {
        guard !bytes.isEmpty else { throw syntax("empty unit string") }
        guard bytes.count <= Self.maxLength else {
            throw HealthModelError.unitSyntax(unit: String(decoding: bytes.prefix(32), as: UTF8.self) + "…", offset: Self.maxLength,
                                              reason: "unit string longer than \(Self.maxLength) bytes (\(bytes.count))")
        }
        let factors = try parseUnit()
        guard position == bytes.count else {
            if bytes[position] == 0x2F { throw syntax("more than one '/'") }
            throw syntax("unexpected character")
        }
        let molarMasses = Set(factors.compactMap(\.molarMass))
        guard molarMasses.count <= 1 else { throw syntax("conflicting molar masses") }
        let levelUnits = factors.filter { UnitAtom.all[$0.atom].scale == .decibelSoundPressure }
        if !levelUnits.isEmpty, factors.count != 1 || factors[0].exponent != 1 {
            throw syntax("dBASPL is a level and cannot be combined with other units or powers")
        }
        // Every base dimension's exponent must stay small (the dimension is stored in Int8).
        var totals = [Int](repeating: 0, count: 16)
        for factor in factors {
            let exponents = UnitAtom.all[factor.atom].dimension.exponents
            for i in 0..<16 { totals[i] += Int(exponents[i]) * factor.exponent }
        }
        guard totals.allSatisfy({ abs($0) <= Self.maxExponent }) else {
            throw HealthModelError.unitSyntax(unit: text, offset: 0, reason: "a dimension's power is beyond ±\(Self.maxExponent)")
        }
        return factors
    }

    private mutating func parseUnit() throws -> [UnitFactor] {
        var factors = try parseProduct()
        if peek() == 0x2F {
            slashes += 1
            guard slashes == 1 else { throw syntax("more than one '/'") }
            position += 1
            let denominator = try parseProduct()
            factors += denominator.map { var f = $0; f.exponent = -f.exponent; return f }
        }
        return factors
    }

    private mutating func parseProduct() throws -> [UnitFactor] {
        var factors = try parsePower()
        while true {
            if peek() == 0x2E || peek() == 0x2A {
                position += 1
            } else if peek() == 0xC2, position + 1 < bytes.count, bytes[position + 1] == 0xB7 {
                position += 2
            } else {
                return factors
            }
            factors += try parsePower()
        }
    }

    private mutating func parsePower() throws -> [UnitFactor] {
        var factors = try parsePrimary()
        if peek() == 0x5E {
            position += 1
            var negative = false
            if peek() == 0x2D { negative = true; position += 1 }
            let start = position
            var value = 0
            while let b = peek(), b >= 0x30, b <= 0x39 {
                value = value * 10 + Int(b - 0x30)
                guard value <= 99 else { throw syntax("power too large") }
                position += 1
            }
            guard position > start else { throw syntax("expected an integer power after '^'") }
            let power = negative ? -value : value
            for i in factors.indices {
                factors[i].exponent *= power  // both ≤ 99 in magnitude: no overflow
                guard abs(factors[i].exponent) <= Self.maxExponent else { throw syntax("power beyond ±\(Self.maxExponent)") }
            }
        }
        return factors
    }

    private mutating func parsePrimary() throws -> [UnitFactor] {
        if peek() == 0x28 {
            guard depth < Self.maxDepth else { throw syntax("parentheses nested deeper than \(Self.maxDepth)") }
            position += 1
            depth += 1
            defer { depth -= 1 }
            let inner = try parseUnit()
            guard peek() == 0x29 else { throw syntax("expected ')'") }
            position += 1
            return inner
        }
        let start = position
        while let b = peek(), Self.isTokenByte(b) { position += 1 }
        guard position > start else {
            throw syntax(position == bytes.count ? "unit ends where a token was expected" : "expected a unit token")
        }
        let token = String(decoding: bytes[start..<position], as: UTF8.self)
        var molarMass: Double?
        if peek() == 0x3C {
            position += 1
            let numberStart = position
            while let b = peek(), b != 0x3E { position += 1; _ = b }
            guard peek() == 0x3E else { throw syntax("expected '>' after molar mass") }
            let numberText = String(decoding: bytes[numberStart..<position], as: UTF8.self)
            guard let mass = Double(numberText), mass.isFinite, mass > 0 else {
                throw HealthModelError.unitSyntax(unit: text, offset: numberStart,
                                                  reason: "molar mass must be a positive number")
            }
            position += 1
            molarMass = mass
        }
        let (atom, prefix) = try resolve(token)
        if atom == UnitAtom.molIndex {
            guard molarMass != nil else { throw HealthModelError.missingMolarMass(unit: text) }
        } else if molarMass != nil {
            throw HealthModelError.unitSyntax(unit: text, offset: start,
                                              reason: "only molar units (mol) take a molar mass")
        }
        return [UnitFactor(atom: atom, prefix: prefix, molarMass: molarMass, exponent: 1)]
    }

    /// A token is a base token, or an SI prefix followed by a prefixable base token.
    /// Whole tokens win (`min` is minutes, `mi` miles, `d` days, `cmAq` not centi-mAq).
    private func resolve(_ token: String) throws -> (atom: Int, prefix: Int8) {
        if let atom = UnitAtom.bySymbol[token] { return (atom, 0) }
        for prefix in UnitPrefix.all where token.hasPrefix(prefix.symbol) {
            let rest = String(token.dropFirst(prefix.symbol.count))
            if let atom = UnitAtom.bySymbol[rest], UnitAtom.all[atom].prefixable {
                return (atom, prefix.power)
            }
        }
        throw HealthModelError.unknownUnitToken(unit: text, token: token)
    }

    private static func isTokenByte(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || b == 0x25
    }

    private func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    private func syntax(_ reason: String) -> HealthModelError {
        .unitSyntax(unit: text, offset: position, reason: reason)
    }
}
