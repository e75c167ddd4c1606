import Foundation
import Testing
import TestSupport

/// Issue 17, item 1, as the attack was run: writer A ingests and commits a line,
/// `rm LOCK`, writer B ingests. Before, B got `committed 1-1` and A's next batch
/// overwrote it (verify said OK). Now B is refused (exit 7) and both of A's
/// acknowledged batches are there.
struct LockCommandTests {
    final class Output: @unchecked Sendable {
        // @unchecked: `text` is guarded by `lock`.
        private let lock = NSLock()
        private var text = ""
        func append(_ data: Data) { lock.lock(); text += String(decoding: data, as: UTF8.self); lock.unlock() }
        var value: String { lock.lock(); defer { lock.unlock() }; return text }
        /// Waits (up to a minute: a bound against hanging, not a timing assumption) for `needle`.
        func wait(for needle: String) -> Bool {
            for _ in 0..<6000 {
                if value.contains(needle) { return true }
                usleep(10_000)
            }
            return false
        }
    }

    @Test func deletingLockDoesNotLetASecondIngestOverwriteTheFirst() throws {
        let dir = try StoreCommandTests.prepared()
        let a = Process()
        a.executableURL = CLIRunner.binary
        a.arguments = ["--ledger", dir.path, "ingest", "--app", "com.example.scale", "--batch", "1"]
        let input = Pipe(), output = Pipe()
        a.standardInput = input
        a.standardOutput = output
        a.standardError = FileHandle.nullDevice
        let seen = Output()
        output.fileHandleForReading.readabilityHandler = { seen.append($0.availableData) }
        try a.run()
        let line = { (v: Int, day: Int) in
            Data("{\"type\":\"bodyMass\",\"value\":\(v),\"unit\":\"kg\",\"start\":\"2026-03-0\(day)T08:00:00Z\"}\n".utf8)
        }
        input.fileHandleForWriting.write(line(71, 1))
        #expect(seen.wait(for: "committed 1-1"))
        try FileManager.default.removeItem(atPath: dir.path + "/LOCK")

        let b = try CLIRunner.run(["--ledger", dir.path, "ingest", "--app", "com.example.scale", "--batch", "1"],
                                  stdin: "{\"type\":\"bodyMass\",\"value\":90,\"unit\":\"kg\",\"start\":\"2026-03-05T08:00:00Z\"}\n")
        #expect(b.status == 7)
        #expect(b.stderr == "healthledger: ledgerLocked: another writer holds \(dir.path)/ledger.log [W1]\n")
        #expect(b.stdout == "")

        input.fileHandleForWriting.write(line(72, 2))
        #expect(seen.wait(for: "committed 2-2"))
        try input.fileHandleForWriting.close()
        a.waitUntilExit()
        output.fileHandleForReading.readabilityHandler = nil
        #expect(a.terminationStatus == 0)

        let verify = try CLIRunner.run(["--ledger", dir.path, "verify"])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let q = try CLIRunner.run(["--ledger", dir.path, "--json", "query", "--owner", "bodyMass"])
        #expect(q.status == 0)
        #expect(q.stdout.split(separator: "\n").count == 3)  // the prepared sample and both of A's
        #expect(!q.stdout.contains("\"value\":90"))
    }
}
