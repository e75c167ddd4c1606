import Foundation
import Testing
import TestSupport

/// The LOCK attack as it was run: writer A ingests and commits a line,
/// `rm LOCK`, writer B ingests. Before, B got `committed 1-1` and A's next batch
/// overwrote it (verify said OK). Now B is refused (exit 7) and both of A's
/// acknowledged batches are there.
struct LockCommandTests {
    @Test func deletingLockDoesNotLetASecondIngestOverwriteTheFirst() throws {
        let dir = try StoreCommandTests.prepared()
        // Paced by A's acknowledgements: each step waits for the line A prints.
        let a = try CLIRunner.start(["--ledger", dir.path, "ingest", "--app", "com.example.scale", "--batch", "1"], stdin: .pipe)
        let line = { (v: Int, day: Int) in
            "{\"type\":\"bodyMass\",\"value\":\(v),\"unit\":\"kg\",\"start\":\"2026-03-0\(day)T08:00:00Z\"}\n"
        }
        try a.write(line(71, 1))
        #expect(a.waitForOutput(containing: "committed 1-1"))
        try FileManager.default.removeItem(atPath: dir.path + "/LOCK")

        let b = try CLIRunner.run(["--ledger", dir.path, "ingest", "--app", "com.example.scale", "--batch", "1"],
                                  stdin: "{\"type\":\"bodyMass\",\"value\":90,\"unit\":\"kg\",\"start\":\"2026-03-05T08:00:00Z\"}\n")
        #expect(b.status == 7)
        #expect(b.stderr == "healthledger: ledgerLocked: another writer holds \(dir.path)/ledger.log [W1]\n")
        #expect(b.stdout == "")

        try a.write(line(72, 2))
        #expect(a.waitForOutput(containing: "committed 2-2"))
        a.closeStdin()
        #expect(a.wait() == .exited(0))

        let verify = try CLIRunner.run(["--ledger", dir.path, "verify"])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let q = try CLIRunner.run(["--ledger", dir.path, "--json", "query", "--owner", "bodyMass"])
        #expect(q.status == 0)
        #expect(q.stdout.split(separator: "\n").count == 3)  // the prepared sample and both of A's
        #expect(!q.stdout.contains("\"value\":90"))
    }
}
