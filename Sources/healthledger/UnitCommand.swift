import Foundation
import HealthModel
import LedgerReporting

/// `healthledger unit convert|parse`: the unit algebra from the command line.
enum UnitCommand {
    static let help = """
        USAGE: healthledger unit convert VALUE FROM TO
               healthledger unit parse UNIT [--json]

        Check HKUnit strings and convert values between units.

          convert   Print VALUE converted from unit FROM to unit TO, full precision
                    (printf %.17g), nothing else on stdout.
          parse     Print the unit's canonical form and its dimension
                    (two lines, or one JSON object with --json).

        Units use HealthKit's grammar: kg, lb, count/min, mL/(kg*min), mL/min·kg,
        mmol<180.1558800000541>/L, degF, m^2, s^-1.

        EXAMPLES:
          healthledger unit convert 98.6 degF degC
          healthledger unit convert 100 mg/dL 'mmol<180.1558800000541>/L'
          healthledger unit parse 'mL/min·kg'

        \(ExitStatus.table)
        """

    static let command = Command(name: "unit", abstract: "Parse HKUnit strings and convert values", help: help) { args, global in
        let sub = args.positional()
        if sub == nil || sub == "help" {
            Output.line(help)
            if sub == nil, !args.flag("--help", "-h") { throw CLIError.usage("unit needs a subcommand: convert or parse") }
            return
        }
        if handledHelp(&args, help) { return }
        switch sub {
        case "convert":
            let valueText = try args.required("VALUE")
            let from = try args.required("FROM unit")
            let to = try args.required("TO unit")
            try args.finish()
            // decimal only (`DecimalNumber`: 0x10 is no number here); nan and inf are nonFiniteValue
            guard let value = Double(valueText), DecimalNumber.isDecimal(valueText) || !value.isFinite else {
                throw CLIError.invalidInput("invalidValue: '\(valueText)' is not a number")
            }
            guard value.isFinite else { throw HealthModelError.nonFiniteValue(field: "VALUE") }
            let converter = try HealthUnit(from).converter(to: try HealthUnit(to))
            Output.line(String(format: "%.17g", converter.convert(value)))
        case "parse":
            let text = try args.required("UNIT")
            try args.finish()
            let unit = try HealthUnit(text)
            if global.json {
                var object = JSONObject()
                object.set("input", text)
                object.set("canonical", unit.canonicalString)
                object.set("dimension", unit.dimension.description)
                Output.line(object.string)
            } else {
                Output.line(unit.canonicalString)
                Output.line(unit.dimension.description)
            }
        default:
            throw CLIError.usage("unknown unit subcommand '\(sub!)' (convert, parse)")
        }
    }
}
