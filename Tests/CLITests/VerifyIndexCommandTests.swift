import Foundation
import Testing
import TestSupport

/// One flipped byte in the derived `index/log.idx` made `verify` say
/// "FAILED log … the log was cut or replaced?" (exit 6), while deleting the index made it
/// pass. I1: such an index is ignored and rebuilt — `verify` says so and blames nothing.
struct VerifyIndexCommandTests {
    @Test func aFlippedByteInTheLogIndexIsReportedIgnoredAndTheLedgerIntact() throws {
        let dir = try StoreCommandTests.prepared()
        let index = dir.url.appendingPathComponent("index/log.idx")
        let good = try Data(contentsOf: index)
        var flipped = good
        flipped[40] ^= 1
        try flipped.write(to: index)
        let r = try CLIRunner.run(["--ledger", dir.path, "verify"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let note = "index/log.idx ignored: checksum [I1]: derived data, rebuilt by the next writer; the log was checked in full without it"
        #expect(r.stdout.split(separator: "\n").contains { $0 == note })
        #expect(!r.stdout.contains("FAILED"))
        #expect(r.stdout.hasSuffix("OK: the ledger is intact\n"))
        let json = try CLIRunner.run(["--ledger", dir.path, "--json", "verify"])
        #expect(json.status == 0)
        #expect(json.stdout.contains("\"intact\":true,"))
        #expect(json.stdout.contains("\"ignoredIndex\":\"index/log.idx ignored: checksum [I1]\""))
        // The next writer rebuilds it: nothing more to say.
        #expect(try CLIRunner.run(["--ledger", dir.path, "save", "--app", "com.example.scale", "--type", "bodyMass",
                                   "--value", "71", "--unit", "kg", "--start", "2026-02-02T08:00:00Z"]).status == 0)
        let after = try CLIRunner.run(["--ledger", dir.path, "verify"])
        #expect(after.status == 0)
        #expect(!after.stdout.contains("ignored"))
        #expect(try Data(contentsOf: index) != flipped)
    }
}
