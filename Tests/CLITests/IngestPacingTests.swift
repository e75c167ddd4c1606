import Foundation
import Testing
import TestSupport

/// `ingest` saves batch N while it reads batch N+1, but never keeps a writer waiting:
/// with stdin open and nothing more to read, the batch in flight is finished first —
/// acknowledged, or its refusal reported and the run ended — so a writer pacing itself
/// by the acknowledgements is never stuck.
struct IngestPacingTests {
    static func line(_ value: Int, day: Int, uuid: Int) -> String {
        "{\"type\":\"bodyMass\",\"value\":\(value),\"unit\":\"kg\",\"start\":\"2026-03-0\(day)T08:00:00Z\","
            + "\"uuid\":\"00000000-0000-4000-8000-00000000000\(uuid)\"}\n"
    }

    @Test func eachBatchIsAcknowledgedWhileStdinStaysOpen() throws {
        let dir = try StoreCommandTests.prepared()
        let a = try CLIRunner.start(["--ledger", dir.path, "ingest", "--app", "com.example.scale", "--batch", "2"], stdin: .pipe,
                                    timeout: 120)
        try a.write(Self.line(71, day: 1, uuid: 1) + Self.line(72, day: 2, uuid: 2))
        #expect(a.waitForOutput(containing: "committed 1-2"))
        try a.write(Self.line(73, day: 3, uuid: 3) + Self.line(74, day: 4, uuid: 4))
        #expect(a.waitForOutput(containing: "committed 3-4"))
        a.closeStdin()
        #expect(a.wait() == .exited(0))
    }

    @Test func aFileOnStdinSizesTheTablesAndIsSavedWhole() throws {
        // A regular file: the first ingest reserves room by its size (one sample per
        // 128 bytes, here far more than the lines), and the ledger is the same to
        // every reader: all lines stored, verify clean, a second ingest adds to it.
        let dir = TemporaryDirectory()
        for args in [["init"], ["app", "register", "--app", "com.example.scale", "--name", "Scale", "--share-purpose", "saves weights",
                      "--read-purpose", "reads weights"],
                     ["--app", "com.example.scale", "request", "--share", "bodyMass", "--read", "bodyMass"],
                     ["authorize", "--app", "com.example.scale", "--share", "bodyMass", "--read", "bodyMass"]] {
            let r = try CLIRunner.run(["--ledger", dir.path] + args)
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
        let file = dir.path + "/lines.jsonl"
        let lines = (1...9).map { Self.line(70 + $0, day: $0, uuid: $0) }.joined()
        try lines.write(toFile: file, atomically: false, encoding: .utf8)
        let first = try CLIRunner.run(["--ledger", dir.path, "ingest", "--app", "com.example.scale", "--batch", "4"], stdinPath: file)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == "committed 1-4\ncommitted 5-8\ncommitted 9-9\n")
        let more = "{\"type\":\"bodyMass\",\"value\":80,\"unit\":\"kg\",\"start\":\"2026-04-01T08:00:00Z\"}\n"
        try more.write(toFile: file, atomically: false, encoding: .utf8)
        let second = try CLIRunner.run(["--ledger", dir.path, "ingest", "--app", "com.example.scale"], stdinPath: file)
        #expect(second.status == 0, "\(second.stderr)")
        let q = try CLIRunner.run(["--ledger", dir.path, "--json", "query", "--owner", "bodyMass"])
        #expect(q.stdout.split(separator: "\n").count == 10)  // nine, then one
        let verify = try CLIRunner.run(["--ledger", dir.path, "verify"])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
    }

    @Test func aRefusedBatchEndsTheRunWhileStdinStaysOpen() throws {
        let dir = try StoreCommandTests.prepared()
        let a = try CLIRunner.start(["--ledger", dir.path, "ingest", "--app", "com.example.scale", "--batch", "2"], stdin: .pipe,
                                    timeout: 120)
        try a.write(Self.line(71, day: 1, uuid: 1) + Self.line(72, day: 2, uuid: 2))
        #expect(a.waitForOutput(containing: "committed 1-2"))
        // The rules refuse the second batch (a UUID already saved): the run ends, the
        // first batch stays, without stdin being closed.
        try a.write(Self.line(73, day: 3, uuid: 3) + Self.line(74, day: 4, uuid: 1))
        #expect(a.wait() == .exited(5))
        let q = try CLIRunner.run(["--ledger", dir.path, "--json", "query", "--owner", "bodyMass"])
        #expect(q.status == 0)
        #expect(q.stdout.split(separator: "\n").count == 3)  // the prepared sample and the first batch
    }
}
