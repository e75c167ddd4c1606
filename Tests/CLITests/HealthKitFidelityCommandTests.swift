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
}
