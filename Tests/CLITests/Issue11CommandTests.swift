import Foundation
import Testing
import TestSupport

/// Issue 11 from the command line: one test per bug, named after it.
struct Issue11CommandTests {
    func ledgerBytes(_ dir: TemporaryDirectory) throws -> Data {
        try Data(contentsOf: dir.url.appendingPathComponent("ledger.log"))
    }

    /// Bug 4: `characteristic set dateOfBirth 2030-01-01` was accepted (age −4).
    @Test func bug4FutureDateOfBirthIsExit3() throws {
        let dir = try StoreCommandTests.prepared()
        let before = try ledgerBytes(dir)
        let r = try CLIRunner.run(["--ledger", dir.path, "characteristic", "set", "dateOfBirth", "2999-01-01"])
        #expect(r.status == 3)
        #expect(r.stderr.hasPrefix("healthledger: invalidArgument: dateOfBirth 2999-01-01 is after today ("))
        #expect(try ledgerBytes(dir) == before)
    }

    /// Bug 5: `replay` showed a bodyMass sample dated in the future as the latest (and
    /// its BMI) while `profile --owner` and `latest` ignored it. Now one definition:
    /// end date at or before the replayed instant (now for the whole log).
    @Test func bug5ReplayAndProfileAgreeOnLatest() throws {
        let dir = try StoreCommandTests.prepared()
        let future = try CLIRunner.run(["--ledger", dir.path, "save", "--app", "com.example.scale", "--type", "bodyMass",
                                        "--value", "120", "--unit", "kg", "--start", "2200-02-01T08:00:00Z"])
        #expect(future.status == 0, "\(future.stderr)")
        let now = try CLIRunner.run(["--ledger", dir.path, "replay", "--json"])
        #expect(now.status == 0)
        #expect(now.stdout.contains("\"value\":70,"))
        #expect(!now.stdout.contains("\"value\":120,"))
        let latest = try CLIRunner.run(["--ledger", dir.path, "--owner", "latest", "bodyMass", "--json"])
        #expect(latest.stdout.contains("\"value\":70,"), "\(latest.stderr)")
        // Replayed to an instant after the sample's end, the index answers with it.
        let later = try CLIRunner.run(["--ledger", dir.path, "replay", "--as-of", "2250-01-01T00:00:00Z", "--json"])
        #expect(later.status == 0)
        #expect(later.stdout.contains("\"value\":120,"))
    }

    /// Bug 6 at the command line: a negative body mass is exit 3, the ledger unchanged.
    @Test func bug6NegativeBodyMassIsExit3() throws {
        let dir = try StoreCommandTests.prepared()
        let before = try ledgerBytes(dir)
        let r = try CLIRunner.run(["--ledger", dir.path, "save", "--app", "com.example.scale", "--type", "bodyMass",
                                   "--value", "-5", "--unit", "kg", "--start", "2026-02-02T08:00:00Z"])
        #expect(r.status == 3)
        #expect(r.stderr == "healthledger: valueOutOfRange: bodyMass value = -5.0 is outside > 0 kg\n")
        #expect(try ledgerBytes(dir) == before)
    }
}
