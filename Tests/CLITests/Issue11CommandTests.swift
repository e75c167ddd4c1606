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
}
