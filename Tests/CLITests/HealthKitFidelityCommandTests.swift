import Foundation
import Testing
import TestSupport

/// Issue 11, "the rest of HKHealthStore", from the command line.
struct HealthKitFidelityCommandTests {
    func run(_ dir: TemporaryDirectory, _ args: [String]) throws -> CLIResult {
        try CLIRunner.run(["--ledger", dir.path] + args)
    }

    /// Day boundaries are the owner's: `--from 2026-02-01` in Honolulu starts at
    /// 10:00Z, so a sample at 08:00Z (the evening of Jan 31 there) is before it.
    @Test func aDateAloneIsADayBoundaryInTheOwnersTimeZone() throws {
        let dir = try StoreCommandTests.prepared()  // bodyMass 70 kg at 2026-02-01T08:00:00Z
        #expect(try run(dir, ["timezone", "Pacific/Honolulu"]).status == 0)
        let query = ["--owner", "query", "bodyMass", "--json"]
        let inHonolulu = try run(dir, query + ["--from", "2026-02-01"])
        #expect(inHonolulu.status == 0, "\(inHonolulu.stderr)")
        #expect(inHonolulu.stdout == "")
        let before = try run(dir, query + ["--to", "2026-02-01"])
        #expect(before.stdout.contains("\"value\":70,"))
        let inUTC = try run(dir, ["--tz", "UTC"] + query + ["--from", "2026-02-01"])
        #expect(inUTC.stdout.contains("\"value\":70,"))
        #expect(try run(dir, ["--tz", "UTC"] + query + ["--to", "2026-02-01"]).stdout == "")
        // `latest --now DATE` is the start of that day there too: 10:00Z in Honolulu
        // (the 08:00Z sample is before it), 00:00Z in UTC (nothing yet).
        #expect(try run(dir, ["--owner", "latest", "bodyMass", "--now", "2026-02-01", "--json"]).stdout.contains("\"value\":70,"))
        let latest = try run(dir, ["--tz", "UTC", "--owner", "latest", "bodyMass", "--now", "2026-02-01"])
        #expect(latest.status == 4)
        #expect(latest.stderr == "healthledger: noData: no HKQuantityTypeIdentifierBodyMass sample before 2026-02-01T00:00:00Z\n")
    }

    /// preferredUnits(for:): the locale's unit until the owner chooses one (an event);
    /// `latest`, `profile` and `query` show it when --unit is absent.
    @Test func preferredUnitsByLocaleAndTheOwnersChoice() throws {
        let dir = try StoreCommandTests.prepared()  // bodyMass 70 kg
        let uuid = try run(dir, ["--owner", "query", "bodyMass", "--json"]).stdout.dropFirst(9).prefix(36)
        #expect(try run(dir, ["preferred-unit", "bodyMass"]).stdout == "bodyMass\tlb\n")
        #expect(try run(dir, ["preferred-unit", "bodyMass", "height", "--locale", "de_DE", "--json"]).stdout
                == "{\"bodyMass\":\"kg\",\"height\":\"cm\"}\n")
        #expect(try run(dir, ["--owner", "latest", "bodyMass"]).stdout == "154.3235835294143 lb  2026-02-01T08:00:00Z  com.example.scale\n")
        #expect(try run(dir, ["--owner", "latest", "bodyMass", "--locale", "fr_FR"]).stdout == "70 kg  2026-02-01T08:00:00Z  com.example.scale\n")
        #expect(try run(dir, ["--owner", "query", "bodyMass"]).stdout
                == "\(uuid)  HKQuantityTypeIdentifierBodyMass  154.3235835294143 lb  2026-02-01T08:00:00Z  com.example.scale\n")
        #expect(try run(dir, ["--owner", "profile", "--json"]).stdout.contains("\"weight\":\"154.324 lb\""))
        // A unit of another dimension is exit 3, nothing recorded; an app that never
        // asked for a type is exit 5.
        let before = try Data(contentsOf: dir.url.appendingPathComponent("ledger.log"))
        let wrong = try run(dir, ["preferred-unit", "set", "bodyMass", "count"])
        #expect(wrong.status == 3)
        #expect(wrong.stderr == "healthledger: invalidArgument: preferred unit count does not fit bodyMass (mass)\n")
        #expect(try Data(contentsOf: dir.url.appendingPathComponent("ledger.log")) == before)
        let app = try run(dir, ["--app", "com.example.scale", "preferred-unit", "height"])
        #expect(app.status == 5)
        #expect(app.stderr == "healthledger: authorizationNotDetermined: com.example.scale never asked to share or read HKQuantityTypeIdentifierHeight\n")
        // The owner's choice: an event, used everywhere, then cleared.
        #expect(try run(dir, ["preferred-unit", "set", "bodyMass", "kg"]).stdout == "bodyMass\tkg\n")
        #expect(try run(dir, ["log"]).stdout.contains("preferredUnitSet\towner\tpreferred unit of bodyMass: kg\n"))
        #expect(try run(dir, ["--app", "com.example.scale", "preferred-unit", "bodyMass"]).stdout == "bodyMass\tkg\n")
        #expect(try run(dir, ["--owner", "latest", "bodyMass"]).stdout == "70 kg  2026-02-01T08:00:00Z  com.example.scale\n")
        #expect(try run(dir, ["--owner", "profile", "--json"]).stdout.contains("\"weight\":\"70 kg\""))
        #expect(try run(dir, ["--owner", "query", "bodyMass", "--unit", "g", "--json"]).stdout.hasSuffix(",\"converted\":70000,\"convertedUnit\":\"g\"}\n"))
        #expect(try run(dir, ["preferred-unit", "clear", "bodyMass"]).status == 0)
        #expect(try run(dir, ["preferred-unit", "bodyMass"]).stdout == "bodyMass\tlb\n")
        #expect(try run(dir, ["replay", "--write-snapshot"]).status == 0)
        #expect(try run(dir, ["verify"]).status == 0)
    }
}
