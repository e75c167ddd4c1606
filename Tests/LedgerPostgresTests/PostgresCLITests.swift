import Foundation
import LedgerLog
@testable import LedgerPostgres
import Synchronization
import Testing
import TestSupport

/// `healthledger` with `--ledger postgres://…`: the same commands, the same answers.
@Suite(.enabled(if: PGTest.enabled, PGTest.reason))
struct PostgresCLITests {
    /// The demo into PostgreSQL verifies; a byte changed with UPDATE is named by `verify`
    /// (exit 6) at its sequence and offset, as in a folder.
    @Test func verifyDetectsAByteChangedWithUpdate() throws {
        let cache = TemporaryDirectory("cache")
        let name = PGTest.freshName("demo")
        let url = PGTest.ledgerURL(name)
        let demo = try PGCLI.run(["--ledger", url, "demo"], cache: cache)
        #expect(demo.status == 0, "\(demo.stderr)")
        #expect(demo.stdout.contains("BMI:         22.86"))
        #expect(demo.stdout.contains("verify: OK"))
        let ok = try PGCLI.run(["--ledger", url, "verify"], cache: cache)
        #expect(ok.status == 0, "\(ok.stdout)\(ok.stderr)")
        // The same damage in a folder copy, for comparison.
        let folder = TemporaryDirectory()
        #expect(try PGCLI.run(["copy", url, folder.path], cache: cache).status == 0)
        try PGTest.flip(name, at: 176, mask: 0x10)
        var bytes = try Data(contentsOf: folder.url.appendingPathComponent("ledger.log"))
        bytes[176] ^= 0x10
        try bytes.write(to: folder.url.appendingPathComponent("ledger.log"))
        let bad = try PGCLI.run(["--ledger", url, "verify"], cache: cache)
        #expect(bad.status == 6)
        #expect(bad.stdout.contains("\nFAILED log at sequence 1, byte 104: recordChecksum (R1), in bytes known durable: damage, not a torn write\n"))
        let badFolder = try PGCLI.run(["--ledger", folder.path, "verify"], cache: cache)
        #expect(badFolder.status == 6)
        #expect(badFolder.stdout == bad.stdout)
        // A writer refuses it and stores nothing.
        let before = try PGTest.storedLog(name)
        let save = try PGCLI.run(["--ledger", url, "save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "71", "--unit", "kg"],
                                 cache: cache)
        #expect(save.status == 6)
        #expect(save.stderr.hasPrefix("healthledger: damaged: "))
        #expect(try PGTest.storedLog(name) == before)
    }

    /// folder → PostgreSQL → folder gives the original log byte for byte; queries agree.
    @Test func copyRoundTripIsByteIdentical() throws {
        let cache = TemporaryDirectory("cache")
        let original = TemporaryDirectory()
        #expect(try PGCLI.run(["--ledger", original.path, "demo"], cache: cache).status == 0)
        let name = PGTest.freshName("copy")
        let url = PGTest.ledgerURL(name)
        let there = try PGCLI.run(["--json", "copy", original.path, url], cache: cache)
        #expect(there.status == 0, "\(there.stderr)")
        #expect(there.stdout.contains("\"to\":\"\(try PGTest.location(name).description)\""))
        let back = TemporaryDirectory()
        let again = try PGCLI.run(["copy", url, back.path], cache: cache)
        #expect(again.status == 0, "\(again.stderr)")
        let a = try Data(contentsOf: original.url.appendingPathComponent("ledger.log"))
        let b = try Data(contentsOf: back.url.appendingPathComponent("ledger.log"))
        #expect(a == b)
        #expect(Array(a) == (try PGTest.storedLog(name)))
        // Same answers from both stores.
        for args in [["--json", "query", "--owner", "bodyMass"], ["--json", "log"], ["--json", "replay"], ["profile", "--owner", "--now", "2026-06-01T00:00:00Z"], ["stats"]] {
            let f = try PGCLI.run(["--ledger", original.path] + args, cache: cache)
            let p = try PGCLI.run(["--ledger", url] + args, cache: cache)
            #expect(f.status == 0 && p.status == 0, "\(args): \(p.stderr)")
            #expect(f.stdout == p.stdout, "\(args)")
        }
        // Copying onto an existing ledger is refused (exit 5) and changes nothing.
        let onto = try PGCLI.run(["copy", original.path, url], cache: cache)
        #expect(onto.status == 5)
        #expect(onto.stderr.hasPrefix("healthledger: ledgerExists: "))
        // A damaged source is refused (exit 6) before anything is written.
        var damaged = a
        damaged[200] ^= 0x10
        let broken = TemporaryDirectory()
        try FileManager.default.createDirectory(at: broken.url, withIntermediateDirectories: true)
        try damaged.write(to: broken.url.appendingPathComponent("ledger.log"))
        let refused = try PGCLI.run(["copy", broken.path, PGTest.ledgerURL(name + "-b")], cache: cache)
        #expect(refused.status == 6)
        let list = try PGCLI.run(["--store", PGTest.url!], cache: cache)
        #expect(list.status == 0)
        #expect(list.stdout.contains("\(name)\t\(a.count)\n"))
        #expect(!list.stdout.contains(name + "-b"))
    }

    /// Derived files are a worker's cache: a snapshot another worker has outgrown is
    /// used with the tail replayed, and a worker with no cache at all rebuilds.
    @Test func workerCachesAreRebuiltWhenStaleOrAbsent() throws {
        let one = TemporaryDirectory("cache1"), two = TemporaryDirectory("cache2")
        let url = PGTest.ledgerURL(PGTest.freshName("cache"))
        try PGCLI.prepare(url, cache: one)
        let save = ["--ledger", url, "save", "--app", "com.example.scale", "--type", "bodyMass", "--unit", "kg"]
        #expect(try PGCLI.run(save + ["--value", "70", "--start", "2026-02-01T08:00:00Z"], cache: one).status == 0)
        let snap = try PGCLI.run(["--ledger", url, "replay", "--write-snapshot"], cache: one)
        #expect(snap.status == 0, "\(snap.stderr)")
        #expect(!FileManager.default.enumerator(atPath: one.path)!.allObjects.compactMap { $0 as? String }
            .filter { $0.contains("snapshots/snapshot-") }.isEmpty)
        // Another worker appends; the first one's snapshot is now behind the log.
        #expect(try PGCLI.run(save + ["--value", "71", "--start", "2026-02-02T08:00:00Z"], cache: two).status == 0)
        let query = ["--ledger", url, "--json", "query", "--owner", "bodyMass"]
        let fromOne = try PGCLI.run(query, cache: one)
        let fromTwo = try PGCLI.run(query, cache: two)
        #expect(fromOne.status == 0 && fromTwo.status == 0)
        #expect(fromOne.stdout.split(separator: "\n").count == 2)
        #expect(fromOne.stdout == fromTwo.stdout)
        let verify = try PGCLI.run(["--ledger", url, "verify"], cache: one)
        #expect(verify.status == 0)
        #expect(verify.stdout.contains("snapshots checked: 1"))
        // No cache at all: everything from the store.
        let fresh = try PGCLI.run(query, cache: TemporaryDirectory("cache3"))
        #expect(fresh.stdout == fromOne.stdout)
    }

    /// `ledgers --store` on a PostgreSQL store and on a folder of ledgers.
    @Test func ledgersListsEveryLedgerOfAStore() throws {
        let cache = TemporaryDirectory("cache")
        let names = [PGTest.freshName("list"), PGTest.freshName("list")]
        for n in names { #expect(try PGCLI.run(["--ledger", PGTest.ledgerURL(n), "init"], cache: cache).status == 0) }
        let r = try PGCLI.run(["--json", "ledgers", "--store", PGTest.url!], cache: cache)
        #expect(r.status == 0)
        for n in names {
            let bytes = try PGTest.storedLog(n).count
            #expect(r.stdout.contains("{\"ledger\":\"\(n)\",\"location\":\"\(try PGTest.location(n).description)\",\"bytes\":\(bytes)}"))
        }
        let bad = try PGCLI.run(["--ledger", PGTest.url! + "?ledger=a/b", "verify"], cache: cache)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("invalidPostgresURL"))
        // A URL without ?ledger= is usage too, for every command that opens a ledger.
        for command in [["verify"], ["stats"], ["key", "generate"], ["copy", PGTest.url!, "/nonexistent-copy"]] {
            let noLedger = try PGCLI.run(["--ledger", PGTest.url!] + command, cache: cache)
            #expect(noLedger.status == 2, "\(command)")
            #expect(noLedger.stderr.contains("no ledger= in the URL"), "\(command)")
        }
        let missing = try PGCLI.run(["--ledger", PGTest.ledgerURL(PGTest.freshName("none")), "verify"], cache: cache)
        #expect(missing.status == 4)
    }

    /// kill -9 of a worker in the middle of an ingest: every batch is whole or absent,
    /// every acknowledged line is there, and the next writer continues at once.
    // P4: an append is acknowledged after its transaction committed; a kill leaves whole batches.
    @Test func killNineMidBatchLeavesWholeBatchesAndTheNextWriterContinues() throws {
        let cache = TemporaryDirectory("cache")
        let name = PGTest.freshName("kill")
        let url = PGTest.ledgerURL(name)
        try PGCLI.prepare(url, cache: cache)
        signal(SIGPIPE, SIG_IGN)  // writing to the killed worker's stdin must fail, not kill the tests
        let worker = try PGCLI.start(["--ledger", url, "ingest", "--app", "com.example.scale", "--batch", "2000"], cache: cache)
        // Feed lines until two batches were acknowledged, then kill while the next is in flight.
        let fed = DispatchSemaphore(value: 0)
        let writing = Thread {
            var first = 0
            while first < 400_000 {
                guard (try? worker.write(PGCLI.weightLines(1000, from: first))) != nil else { break }
                first += 1000
            }
            fed.signal()
        }
        writing.start()
        #expect(worker.waitForOutput(seconds: 60) { $0.split(separator: "\n").count >= 2 })
        worker.kill(SIGKILL)
        fed.wait()  // the feeder saw the pipe break
        #expect(worker.wait() == .signaled(SIGKILL))
        let acks = Mutex(worker.output)
        let acknowledged = acks.withLock { $0 }.split(separator: "\n")
        try #require(acknowledged.count >= 2)
        #expect(acknowledged[0] == "committed 1-2000")
        // Every row is one whole batch: its length field equals the row's length.
        let c = try PGTest.connection()
        defer { c.close() }
        let rows = try c.execute("""
            SELECT count(*) FROM healthledger_batches WHERE ledger = $1
              AND octet_length(bytes) <> (get_byte(bytes, 4) + get_byte(bytes, 5) * 256 + get_byte(bytes, 6) * 65536)
            """, [.text(name)])
        #expect(rows.integer(0, 0) == 0)
        let v = try PGCLI.run(["--ledger", url, "--json", "verify"], cache: cache)
        #expect(v.status == 0, "\(v.stdout)")
        let stats = try PGCLI.run(["--ledger", url, "--json", "query", "--owner", "bodyMass"], cache: cache)
        let stored = stats.stdout.split(separator: "\n").count
        let lastAck = acknowledged.last.flatMap { Int($0.split(separator: "-").last ?? "") } ?? 0
        #expect(stored >= lastAck)
        #expect(stored % 2000 == 0, "only whole batches of 2,000 samples: \(stored)")
        // The next writer continues (the dead session's advisory lock went with it).
        let next = try PGCLI.run(["--ledger", url, "ingest", "--app", "com.example.scale", "--batch", "500"],
                                 stdin: PGCLI.weightLines(500, from: 900_000), cache: cache)
        #expect(next.status == 0, "\(next.stderr)")
        #expect(next.stdout == "committed 1-500\n")
        let after = try PGCLI.run(["--ledger", url, "--json", "query", "--owner", "bodyMass"], cache: cache)
        #expect(after.stdout.split(separator: "\n").count == stored + 500)
        #expect(try PGCLI.run(["--ledger", url, "verify"], cache: cache).status == 0)
    }

    /// Two worker processes: while one ingest holds the ledger (its stdin still open),
    /// another is refused with exit 7 and stores nothing; after it, the other continues.
    @Test func aSecondWorkerProcessIsRefusedWhileTheFirstWrites() throws {
        let cache = TemporaryDirectory("cache")
        let name = PGTest.freshName("procs")
        let url = PGTest.ledgerURL(name)
        try PGCLI.prepare(url, cache: cache)
        signal(SIGPIPE, SIG_IGN)
        let first = try PGCLI.start(["--ledger", url, "ingest", "--app", "com.example.scale", "--batch", "100"], cache: cache)
        try first.write(PGCLI.weightLines(100))
        #expect(first.waitForOutput(containing: "committed 1-100\n", seconds: 60))
        #expect(first.output == "committed 1-100\n")
        let before = try PGTest.storedLog(name)
        let second = try PGCLI.run(["--ledger", url, "ingest", "--app", "com.example.scale", "--batch", "10"],
                                   stdin: PGCLI.weightLines(30, from: 5000), cache: TemporaryDirectory("cache2"))
        #expect(second.status == 7)
        #expect(second.stdout == "")
        #expect(second.stderr == "healthledger: ledgerLocked: another writer holds \(try PGTest.location(name).description) [W1]\n")
        #expect(try PGTest.storedLog(name) == before)
        try first.write(PGCLI.weightLines(100, from: 100))
        first.closeStdin()
        #expect(first.wait() == .exited(0))
        let again = try PGCLI.run(["--ledger", url, "ingest", "--app", "com.example.scale", "--batch", "10"],
                                  stdin: PGCLI.weightLines(30, from: 5000), cache: TemporaryDirectory("cache2"))
        #expect(again.status == 0, "\(again.stderr)")
        let stored = try PGCLI.run(["--ledger", url, "--json", "query", "--owner", "bodyMass"], cache: cache)
        #expect(stored.stdout.split(separator: "\n").count == 230)
        #expect(try PGCLI.run(["--ledger", url, "verify"], cache: cache).status == 0)
    }

    /// `changes --follow` on PostgreSQL: woken by NOTIFY, reading by position.
    @Test func followPrintsAnotherWorkersCommits() throws {
        let cache = TemporaryDirectory("cache")
        let url = PGTest.ledgerURL(PGTest.freshName("follow"))
        try PGCLI.prepare(url, cache: cache)
        let follower = try PGCLI.start(["--ledger", url, "--json", "changes", "bodyMass", "--app", "com.example.scale", "--follow"],
                                       cache: TemporaryDirectory("cache2"))
        defer {
            follower.kill(SIGTERM)
            follower.wait()
        }
        func waitFor(_ needle: String) -> Bool { follower.waitForOutput(containing: needle, seconds: 60) }
        #expect(waitFor("{\"anchor\":"))
        let save = try PGCLI.run(["--ledger", url, "save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "72",
                                  "--unit", "kg", "--start", "2026-02-01T08:00:00Z"], cache: cache)
        #expect(save.status == 0, "\(save.stderr)")
        let uuid = save.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(waitFor("{\"change\":\"added\",\"sample\":{\"uuid\":\"\(uuid)\""))
    }
}
