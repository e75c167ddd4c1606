import Foundation
import HealthModel

/// `healthledger-bench units`: unit conversion and parsing speed.
enum UnitBench {
    /// Every distinct unit string of the exports under ../shared (entities decoded),
    /// plus HealthKit's canonical units.
    static let exportUnits = [
        "%", "cm", "count", "count/min", "dBASPL", "g", "hr", "kJ", "kcal", "kg", "km", "km/hr", "m",
        "mL/min·kg", "mcg", "mg", "mg/dL", "mi", "min", "ms", "degF", "s", "lb", "mmol<180.1558800000541>/L",
    ]

    static func run(report: Report) throws {
        let from = try HealthUnit("lb"), to = try HealthUnit("kg")
        let converter = try from.converter(to: to)
        let n = 10_000_000
        var values = [Double](repeating: 0, count: 1 << 16)
        for i in values.indices { values[i] = Double(i) * 0.37 + 100 }
        var sink = 0.0
        let seconds = Measure.time {
            var i = 0
            while i < n {
                sink += converter.convert(values[i & 0xFFFF])
                i += 1
            }
        }
        report.line("unit.convert lb→kg (cached)", [("values", Double(n)), ("ns_per_op", seconds / Double(n) * 1e9)])

        let affine = try HealthUnit("degF").converter(to: try HealthUnit("degC"))
        let seconds2 = Measure.time {
            for i in 0..<n { sink += affine.convert(values[i & 0xFFFF]) }
        }
        report.line("unit.convert degF→degC (affine)", [("values", Double(n)), ("ns_per_op", seconds2 / Double(n) * 1e9)])

        let rounds = 2000
        let parseSeconds = try Measure.time {
            for _ in 0..<rounds {
                for text in exportUnits { sink += try HealthUnit(text, cached: false).canonicalString.isEmpty ? 1 : 0 }
            }
        }
        let parses = Double(rounds * exportUnits.count)
        report.line("unit.parse export units (uncached)", [("parses", parses), ("ns_per_op", parseSeconds / parses * 1e9)])

        let cachedSeconds = try Measure.time {
            for _ in 0..<rounds * 10 {
                for text in exportUnits { sink += try HealthUnit(text).canonicalString.isEmpty ? 1 : 0 }
            }
        }
        report.line("unit.parse export units (cached)", [("parses", parses * 10), ("ns_per_op", cachedSeconds / (parses * 10) * 1e9)])
        if sink == 42 { print("") }  // keep the work observable
    }
}
