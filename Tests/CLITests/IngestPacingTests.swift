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
