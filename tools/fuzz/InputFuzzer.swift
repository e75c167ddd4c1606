import Foundation
import HealthModel
import TestSupport

/// Fuzzes the text inputs every command takes: HKUnit strings and ISO 8601 dates.
/// Each case must either parse to a value that prints and parses back equal, or be
/// refused with a `HealthModelError`; anything else (a trap, a different error, a
/// value that does not round-trip) is a finding.
public enum InputFuzzer {
    public struct Counts: Sendable, CustomStringConvertible {
        public var cases = 0
        public var accepted = 0
        /// Refusals by error code (`unitSyntax`, `invalidDate`, …).
        public var refused: [String: Int] = [:]
        public var findings: [String] = []

        public init() {}

        public mutating func add(_ other: Counts) {
            cases += other.cases
            accepted += other.accepted
            for (k, v) in other.refused { refused[k, default: 0] += v }
            findings += other.findings
        }

        public var description: String {
            let kinds = refused.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            return "cases=\(cases) accepted=\(accepted) refused=\(refused.values.reduce(0, +)) [\(kinds)] "
                + "findings=\(findings.count) traps=0"
        }
    }

    static let units = ["kg", "count/min", "mL/(kg*min)", "mmol<180.1558800000541>/L", "m^2", "s^-1", "kcal/hr·kg", "%",
                        "dBASPL", "degF", "mg/dL", "(kg*min)^-1", "fl_oz_us", "cmAq", "km/hr", "count"]
    static let unitAlphabet = Array("()()^^-.*/<>0123456789kgmLsminlbcount%_·".unicodeScalars.map(String.init))

    /// Unit strings: mutations of real ones, random strings over the grammar's
    /// alphabet, and deep nesting and long products.
    public static func units(seed: UInt64, cases: Int) -> Counts {
        var random = SeededRandom(seed: seed)
        var counts = Counts()
        for i in 0..<cases {
            var text: String
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                var chars = Array(units[Int.random(in: 0..<units.count, using: &random)])
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let c = Character(unitAlphabet[Int.random(in: 0..<unitAlphabet.count, using: &random)])
                    let at = Int.random(in: 0...chars.count, using: &random)
                    if Bool.random(using: &random) || chars.isEmpty { chars.insert(c, at: at) } else { chars[min(at, chars.count - 1)] = c }
                }
                text = String(chars)
            case 1:
                text = (0..<Int.random(in: 0...24, using: &random)).map { _ in
                    unitAlphabet[Int.random(in: 0..<unitAlphabet.count, using: &random)]
                }.joined()
            case 2:
                let depth = [1, 8, 15, 16, 17, 100, 2_100, 20_000][Int.random(in: 0..<8, using: &random)]
                let power = Bool.random(using: &random) ? "^\(Int.random(in: -99...99, using: &random))" : ""
                text = String(repeating: "(", count: depth) + units[Int.random(in: 0..<units.count, using: &random)]
                    + String(repeating: ")" + power, count: depth)
            default:
                let n = Int.random(in: 1...120, using: &random)
                text = (0..<n).map { _ in units[Int.random(in: 0..<3, using: &random)] + "^\(Int.random(in: -99...99, using: &random))" }
                    .joined(separator: ".")
            }
            counts.cases += 1
            do {
                let unit = try HealthUnit(text, cached: false)
                let again = try HealthUnit(unit.canonicalString, cached: false)
                if again != unit || again.canonicalString != unit.canonicalString {
                    counts.findings.append("case \(i) of seed \(seed): '\(text)' does not round-trip (\(unit.canonicalString))")
                }
                counts.accepted += 1
            } catch let error as HealthModelError {
                counts.refused[error.code, default: 0] += 1
            } catch {
                counts.findings.append("case \(i) of seed \(seed): '\(text.prefix(80))' threw \(error)")
            }
        }
        return counts
    }

    static let dates = ["2026-03-01T12:00:00Z", "2026-03-01T12:00:00.123456+05:30", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
                        "2026-03-01", "1677-09-21T00:12:44Z", "2262-04-11T23:47:16-23:59", "2024-02-29T23:59:60+0000"]
    static let dateAlphabet = Array("0123456789-:T Z+.,z".unicodeScalars.map(String.init))

    /// ISO 8601 dates: mutations of real ones and random strings over the alphabet.
    public static func dates(seed: UInt64, cases: Int) -> Counts {
        var random = SeededRandom(seed: seed)
        var counts = Counts()
        for i in 0..<cases {
            var chars = Array(dates[Int.random(in: 0..<dates.count, using: &random)])
            if Int.random(in: 0..<5, using: &random) == 0 {
                chars = Array((0..<Int.random(in: 0...30, using: &random)).map { _ in
                    dateAlphabet[Int.random(in: 0..<dateAlphabet.count, using: &random)]
                }.joined())
            }
            for _ in 0..<Int.random(in: 0...3, using: &random) where !chars.isEmpty {
                let at = Int.random(in: 0..<chars.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: chars[at] = Character(dateAlphabet[Int.random(in: 0..<dateAlphabet.count, using: &random)])
                case 1: chars.remove(at: at)
                default: chars.insert(Character(dateAlphabet[Int.random(in: 0..<dateAlphabet.count, using: &random)]), at: at)
                }
            }
            let text = String(chars)
            counts.cases += 1
            do {
                let date = try ISO8601.parse(text)
                let printed = ISO8601.string(date)
                guard ISO8601.isInRange(date), !printed.contains("since"), let back = try? ISO8601.parse(printed),
                      abs(back.timeIntervalSince1970 - date.timeIntervalSince1970) < 1e-3 else {
                    counts.findings.append("case \(i) of seed \(seed): '\(text)' parses to \(printed), which does not parse back")
                    continue
                }
                counts.accepted += 1
            } catch {
                counts.refused[error.code, default: 0] += 1
            }
        }
        return counts
    }
}
