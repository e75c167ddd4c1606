import Foundation
import Testing
import TestSupport

/// A write of output or of an acknowledgement that fails is exit 1 with the reason,
/// for every command; a read of stdin that fails is exit 1, never an empty input.
struct OutputFailureTests {
    static let line = "{\"type\":\"bodyMass\",\"value\":71,\"unit\":\"kg\",\"start\":\"2026-02-02T08:00:00Z\"}\n"

    @Test func anIngestWhoseAcknowledgementCannotBeWrittenFails() throws {
        let dir = try StoreCommandTests.prepared()
        let r = try CLIRunner.run(["--ledger", dir.path, "ingest", "--app", "com.example.scale"], stdin: Self.line, stdoutPath: "/dev/full")
        #expect(r.status == 1)
        #expect(r.stderr == "healthledger: outputFailed: stdout: No space left on device; lines 1-1 were committed but their acknowledgement was not written\n")
        // The batch is durable (it was committed before the acknowledgement failed).
        let q = try CLIRunner.run(["--ledger", dir.path, "--json", "query", "--owner", "bodyMass"])
        #expect(q.stdout.split(separator: "\n").count == 2)
        #expect(try CLIRunner.run(["--ledger", dir.path, "verify"]).status == 0)
    }

    @Test func anIngestStopsAtTheFirstUnacknowledgedBatch() throws {
        let dir = try StoreCommandTests.prepared()
        let lines = (0..<3).map { "{\"type\":\"bodyMass\",\"value\":7\($0),\"unit\":\"kg\",\"start\":\"2026-02-0\($0 + 2)T08:00:00Z\"}" }
        let r = try CLIRunner.run(["--ledger", dir.path, "ingest", "--app", "com.example.scale", "--batch", "1"],
                                  stdin: lines.joined(separator: "\n") + "\n", stdoutPath: "/dev/full")
        #expect(r.status == 1)
        #expect(r.stderr.hasSuffix("lines 1-1 were committed but their acknowledgement was not written\n"))
        let q = try CLIRunner.run(["--ledger", dir.path, "--json", "query", "--owner", "bodyMass"])
        #expect(q.stdout.split(separator: "\n").count == 2, "lines 2 and 3 must not be saved unacknowledged")
    }

    @Test func helpIsStillExitZero() throws {
        for args in [["--help"], ["-h"], ["help"]] {
            let r = try CLIRunner.run(args)
            #expect(r.status == 0, "\(args)")
            #expect(r.stdout.hasPrefix("USAGE: healthledger"), "\(args)")
        }
        #expect(try CLIRunner.run([]).status == 2)
    }

    @Test func anIngestFromAFolderFailsAndWritesNothing() throws {
        let dir = try StoreCommandTests.prepared()
        let before = try StoreCommandTests.contents(dir)
        let r = try CLIRunner.run(["--ledger", dir.path, "ingest", "--app", "com.example.scale"], stdinPath: "/")
        #expect(r.status == 1)
        #expect(r.stderr == "healthledger: inputFailed: stdin: Is a directory (after line 0)\n")
        #expect(r.stdout == "")
        #expect(try StoreCommandTests.contents(dir) == before)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let args: [String]
        var testDescription: String { args.joined(separator: " ") }
    }

    /// Every command that prints, with its output sent to a full device.
    static let printing: [Case] = [
        Case(args: ["query", "--owner", "bodyMass"]),
        Case(args: ["--json", "query", "--owner", "bodyMass"]),
        Case(args: ["latest", "--owner", "bodyMass"]),
        Case(args: ["verify"]),
        Case(args: ["stats"]),
        Case(args: ["log"]),
        Case(args: ["replay"]),
        Case(args: ["audit", "bodyMass"]),
        Case(args: ["status", "--app", "com.example.scale"]),
        Case(args: ["unit", "parse", "kg"]),
        Case(args: ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "71", "--unit", "kg"]),
        Case(args: ["query", "--help"]),
        Case(args: ["--help"]),
    ]

    @Test(arguments: printing)
    func outputToAFullDeviceIsExitOne(_ c: Case) throws {
        let dir = try StoreCommandTests.prepared()
        let r = try CLIRunner.run(["--ledger", dir.path] + c.args, stdoutPath: "/dev/full")
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.hasSuffix("healthledger: outputFailed: stdout: No space left on device\n"), "\(r.stderr)")
    }

    /// Runs the binary through the shell with fd 1 closed (`>&-`).
    static func withClosedStdout(_ args: [String]) throws -> Int32 {
        try ChildProcess.run("/bin/sh", ["-c", "exec \"$0\" \"$@\" >&- 2>/dev/null", CLIRunner.binary.path] + args,
                             stdout: .null, stderr: .null).status
    }

    @Test func aClosedStdoutNeverBecomesALedgerFile() throws {
        let dir = try StoreCommandTests.prepared()
        let before = try StoreCommandTests.contents(dir)
        #expect(try Self.withClosedStdout(["--ledger", dir.path, "query", "--owner", "bodyMass"]) == 1)
        #expect(try StoreCommandTests.contents(dir) == before)
        // A writer opens the log while fd 1 is closed: the log must not become stdout.
        #expect(try Self.withClosedStdout(["--ledger", dir.path, "save", "--app", "com.example.scale", "--type", "bodyMass",
                                           "--value", "71", "--unit", "kg"]) == 1)
        let v = try CLIRunner.run(["--ledger", dir.path, "verify"])
        #expect(v.status == 0, "\(v.stdout)")
    }
}
