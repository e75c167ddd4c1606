import Testing

struct UnitCommandTests {
    @Test func convertPrintsOnlyTheNumberAtFullPrecision() throws {
        let r = try CLIRunner.run(["unit", "convert", "98.6", "degF", "degC"])
        #expect(r.status == 0)
        #expect(r.stdout == "37\n")
        #expect(r.stderr == "")
        let lb = try CLIRunner.run(["unit", "convert", "1", "lb", "kg"])
        #expect(lb.stdout == "0.45359237000000002\n")  // %.17g
        let glucose = try CLIRunner.run(["unit", "convert", "100", "mg/dL", "mmol<180.1558800000541>/L"])
        #expect(glucose.stdout == "5.5507486072600001\n")
    }

    @Test func parsePrintsCanonicalFormAndDimension() throws {
        let r = try CLIRunner.run(["unit", "parse", "mL/min·kg"])
        #expect(r.status == 0)
        #expect(r.stdout == "mL/(kg*min)\noxygen uptake (length^3·mass^-1·time^-1)\n")
        let j = try CLIRunner.run(["--json", "unit", "parse", "kg"])
        #expect(j.stdout == "{\"input\":\"kg\",\"canonical\":\"kg\",\"dimension\":\"mass\"}\n")
    }

    @Test func badUnitsExitNonZeroWithTheTypedErrorOnStderr() throws {
        let incompatible = try CLIRunner.run(["unit", "convert", "1", "kg", "m"])
        #expect(incompatible.status == 3)
        #expect(incompatible.stdout == "")
        #expect(incompatible.stderr == "healthledger: incompatibleUnits: cannot convert 'kg' (mass) to 'm' (length)\n")
        let molar = try CLIRunner.run(["unit", "parse", "mmol/L"])
        #expect(molar.status == 3)
        #expect(molar.stderr.hasPrefix("healthledger: missingMolarMass: 'mmol/L'"))
        let slashes = try CLIRunner.run(["unit", "parse", "kg/m/s"])
        #expect(slashes.stderr == "healthledger: unitSyntax: 'kg/m/s' at byte 4: more than one '/'\n")
        let nan = try CLIRunner.run(["unit", "convert", "nan", "kg", "lb"])
        #expect(nan.status == 3)
        #expect(nan.stderr == "healthledger: nonFiniteValue: VALUE is NaN or infinite\n")
        let missing = try CLIRunner.run(["unit", "convert", "1", "kg"])
        #expect(missing.status == 2)
        #expect(missing.stderr == "healthledger: usage: missing TO unit\n")
    }

    @Test func everyLevelHasHelp() throws {
        let top = try CLIRunner.run(["--help"])
        #expect(top.status == 0)
        #expect(top.stdout.contains("USAGE: healthledger"))
        let unit = try CLIRunner.run(["unit", "--help"])
        #expect(unit.status == 0)
        #expect(unit.stdout.hasPrefix("USAGE: healthledger unit convert"))
        let convert = try CLIRunner.run(["unit", "convert", "--help"])
        #expect(convert.status == 0)
        #expect(convert.stdout.hasPrefix("USAGE: healthledger unit convert"))
    }
}
