import Foundation
import Testing
import TestSupport

/// `copy` and `ledgers` on folders (tools/pg_test.sh runs them against PostgreSQL too).
struct CopyCommandTests {
    @Test func copyMakesAByteIdenticalLedgerAndLedgersListsIt() throws {
        let dir = try StoreCommandTests.prepared()
        let store = TemporaryDirectory("store")
        let copy = store.url.appendingPathComponent("copy.ledger").path
        let r = try CLIRunner.run(["copy", dir.path, copy])
        #expect(r.status == 0, "\(r.stderr)")
        let a = try Data(contentsOf: dir.url.appendingPathComponent("ledger.log"))
        let b = try Data(contentsOf: URL(fileURLWithPath: copy).appendingPathComponent("ledger.log"))
        #expect(a == b)
        let events = try CLIRunner.run(["--ledger", dir.path, "--json", "log"]).stdout.split(separator: "\n").count
        #expect(r.stdout.hasPrefix("copied \(events) records in "))
        #expect(r.stdout.contains("(\(a.count) bytes) from \(dir.path) to \(copy); chain head "))
        let q1 = try CLIRunner.run(["--ledger", dir.path, "--json", "query", "--owner", "bodyMass"])
        let q2 = try CLIRunner.run(["--ledger", copy, "--json", "query", "--owner", "bodyMass"])
        #expect(q1.stdout == q2.stdout)
        let again = try CLIRunner.run(["copy", dir.path, copy])
        #expect(again.status == 5)
        #expect(again.stderr == "healthledger: ledgerExists: \(copy) already holds a ledger; copy and encrypt write only to an empty destination\n")
        let list = try CLIRunner.run(["--store", store.path])
        #expect(list.status == 0)
        #expect(list.stdout == "copy.ledger\t\(b.count)\n")
        let json = try CLIRunner.run(["--json", "ledgers", "--store", store.path])
        #expect(json.stdout == "{\"ledger\":\"copy.ledger\",\"location\":\"\(copy)\",\"bytes\":\(b.count)}\n")
        let missing = try CLIRunner.run(["copy", dir.path + "-none", copy + "2"])
        #expect(missing.status == 4)
    }
}
