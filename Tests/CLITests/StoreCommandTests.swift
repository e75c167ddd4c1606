import Foundation
import Testing
import TestSupport

/// The command line against a real ledger folder: exit statuses, stderr, and that a
/// refused command leaves the ledger byte for byte as it was.
struct StoreCommandTests {
    /// A ledger with one registered app allowed to share and read bodyMass.
    static func prepared() throws -> TemporaryDirectory {
        let dir = TemporaryDirectory()
        let setup: [[String]] = [
            ["init"],
            ["app", "register", "--app", "com.example.scale", "--name", "Scale", "--share-purpose", "saves weights", "--read-purpose", "reads weights"],
            ["--app", "com.example.scale", "request", "--share", "bodyMass", "--read", "bodyMass"],
            ["authorize", "--app", "com.example.scale", "--share", "bodyMass", "--read", "bodyMass"],
            ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "70", "--unit", "kg", "--start", "2026-02-01T08:00:00Z"],
        ]
        for args in setup {
            let r = try CLIRunner.run(["--ledger", dir.path] + args)
            guard r.status == 0 else { throw CLIError(args: args, result: r) }
        }
        return dir
    }

    struct CLIError: Error {
        let args: [String]
        let result: CLIResult
    }

    /// Every file of the ledger folder and its bytes (the lock file's presence aside).
    static func contents(_ dir: TemporaryDirectory) throws -> [String: Data] {
        var out: [String: Data] = [:]
        let base = dir.url
        guard let e = FileManager.default.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey]) else { return out }
        for case let url as URL in e where (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true {
            let name = String(url.path.dropFirst(base.path.count))
            if name == "/LOCK" { continue }
            out[name] = try Data(contentsOf: url)
        }
        return out
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let args: [String]
        let status: Int32
        let stderr: String
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "unknown type", args: ["save", "--app", "com.example.scale", "--type", "fluxCapacitance", "--value", "1", "--unit", "kg"],
                status: 3, stderr: "healthledger: dataTypeNotAvailable: unknown object type identifier 'fluxCapacitance'\n"),
        Refusal(name: "wrong unit for the type", args: ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "70", "--unit", "count/min"],
                status: 3, stderr: "healthledger: unitNotAllowed: HKQuantityTypeIdentifierBodyMass takes units of mass, not 'count/min'\n"),
        Refusal(name: "NaN", args: ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "nan", "--unit", "kg"],
                status: 3, stderr: "healthledger: nonFiniteValue: value is NaN or infinite\n"),
        Refusal(name: "end before start", args: ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "70", "--unit", "kg",
                                                 "--start", "2026-02-02T08:00:00Z", "--end", "2026-02-01T08:00:00Z"],
                status: 3, stderr: "healthledger: endBeforeStart: bodyMass ends at 2026-02-01T08:00:00Z before it starts at 2026-02-02T08:00:00Z\n"),
        Refusal(name: "no permission", args: ["save", "--app", "com.example.scale", "--type", "heartRate", "--value", "70", "--unit", "count/min"],
                status: 5, stderr: "healthledger: authorizationNotDetermined: sharing HKQuantityTypeIdentifierHeartRate was never answered\n"),
        Refusal(name: "unregistered app", args: ["save", "--app", "com.example.ghost", "--type", "bodyMass", "--value", "70", "--unit", "kg"],
                status: 4, stderr: "healthledger: appNotRegistered: com.example.ghost is not registered (healthledger app register --app com.example.ghost …)\n"),
        Refusal(name: "deleting what is not there", args: ["delete", "--owner", "00000000-0000-4000-8000-000000000099"],
                status: 4, stderr: "healthledger: objectNotFound: no stored object 00000000-0000-4000-8000-000000000099\n"),
        Refusal(name: "bad usage", args: ["save", "--app", "com.example.scale"],
                status: 2, stderr: "healthledger: usage: save needs --type TYPE\n"),
        Refusal(name: "a UUID listed twice", args: ["delete", "--owner", "00000000-0000-4000-8000-000000000099", "00000000-0000-4000-8000-000000000099"],
                status: 2, stderr: "healthledger: usage: 00000000-0000-4000-8000-000000000099 is listed twice; list each object once\n"),
        Refusal(name: "share granted and denied", args: ["authorize", "--app", "com.example.scale", "--share", "heartRate", "--deny-share", "heartRate"],
                status: 2, stderr: "healthledger: usage: HKQuantityTypeIdentifierHeartRate is in both --share and --deny-share; give one answer per type\n"),
        Refusal(name: "read granted and denied under two spellings",
                args: ["authorize", "--app", "com.example.scale", "--read", "height,bodyMass", "--deny-read", "HKQuantityTypeIdentifierBodyMass"],
                status: 2, stderr: "healthledger: usage: HKQuantityTypeIdentifierBodyMass is in both --read and --deny-read; give one answer per type\n"),
        Refusal(name: "an option given twice", args: ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "70", "--value", "80", "--unit", "kg"],
                status: 2, stderr: "healthledger: usage: --value is given 2 times; give it once\n"),
        Refusal(name: "a metadata key given twice", args: ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "70", "--unit", "kg",
                                                          "--meta", "k=1", "--meta", "k=2"],
                status: 2, stderr: "healthledger: usage: --meta k is given twice; give each key once\n"),
        Refusal(name: "a sync version not whole", args: ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "70", "--unit", "kg",
                                                        "--meta", "HKMetadataKeySyncIdentifier=7", "--meta", "HKMetadataKeySyncVersion=2.0"],
                status: 3, stderr: "healthledger: invalidSyncVersion: --meta HKMetadataKeySyncVersion must be a whole number in the 64-bit range, not '2.0'\n"),
    ]

    @Test(arguments: refusals)
    func aRefusalLeavesTheLedgerUnchanged(_ refusal: Refusal) throws {
        let dir = try Self.prepared()
        let before = try Self.contents(dir)
        let r = try CLIRunner.run(["--ledger", dir.path] + refusal.args)
        #expect(r.status == refusal.status, "\(r.stderr)")
        #expect(r.stderr == refusal.stderr)
        #expect(r.stdout == "")
        #expect(try Self.contents(dir) == before, "the ledger changed")
    }

    @Test func aMissingLedgerIsNotFound() throws {
        let r = try CLIRunner.run(["--ledger", "/nonexistent/health.ledger", "query", "--owner", "bodyMass"])
        #expect(r.status == 4)
        #expect(r.stderr == "healthledger: ledgerNotFound: no ledger at /nonexistent/health.ledger\n")
        let w = try CLIRunner.run(["--ledger", "/nonexistent/health.ledger", "save", "--app", "a", "--type", "bodyMass", "--value", "1", "--unit", "kg"])
        #expect(w.status == 4)
    }

    @Test func aLockedLedgerIsRefusedAndUnchanged() throws {
        let dir = try Self.prepared()
        let before = try Self.contents(dir)
        // holds the lock until its stdin closes
        let holder = try ChildProcess(CLIRunner.torture, ["hold", dir.path, "-"], stdin: .pipe, stdout: .pipe, stderr: .null)
        defer { holder.closeStdin(); holder.wait() }
        #expect(holder.waitForOutput(containing: "locked\n"))
        let r = try CLIRunner.run(["--ledger", dir.path, "save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "71", "--unit", "kg"])
        #expect(r.status == 7)
        #expect(r.stderr == "healthledger: ledgerLocked: another writer holds \(dir.path) [W1]\n")
        // readers take no lock
        let q = try CLIRunner.run(["--ledger", dir.path, "--json", "query", "--owner", "bodyMass"])
        #expect(q.status == 0)
        #expect(q.stdout.split(separator: "\n").count == 1)
        #expect(try Self.contents(dir) == before)
    }

    @Test func aDamagedLedgerIsNamedAndUnchanged() throws {
        let dir = try Self.prepared()
        let log = dir.url.appendingPathComponent("ledger.log")
        var bytes = try Data(contentsOf: log)
        bytes[200] ^= 0x10  // inside the first batch, proven durable by later batches
        try bytes.write(to: log)
        let before = try Self.contents(dir)
        let w = try CLIRunner.run(["--ledger", dir.path, "save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "71", "--unit", "kg"])
        #expect(w.status == 6)
        #expect(w.stderr.hasPrefix("healthledger: damaged: "))
        let v = try CLIRunner.run(["--ledger", dir.path, "verify"])
        #expect(v.status == 6)
        #expect(v.stdout.contains("\nFAILED log at sequence 1, byte 176: recordChecksum (R1), in bytes known durable: damage, not a torn write\nNOT INTACT: 1 problem\n"))
        #expect(try Self.contents(dir) == before)
    }

    @Test func ingestCommitsBatchesAndAcknowledgesLines() throws {
        let dir = try Self.prepared()
        var lines: [String] = []
        // 20,000 lines in batches of 5,000: every batch committed and acknowledged by its
        // line numbers (a larger count proves nothing more and costs a minute under ASan).
        for i in 0..<20_000 {
            let t = 1_700_000_000 + i * 60
            lines.append("{\"type\":\"bodyMass\",\"value\":\(60 + Double(i % 400) / 10),\"unit\":\"kg\",\"start\":\"\(iso(t))\"}")
        }
        let r = try CLIRunner.run(["--ledger", dir.path, "ingest", "--app", "com.example.scale", "--batch", "5000"],
                                  stdin: lines.joined(separator: "\n") + "\n")
        #expect(r.status == 0, "\(r.stderr)")
        let acks = r.stdout.split(separator: "\n")
        #expect(acks.count == 4)
        #expect(acks.first == "committed 1-5000")
        #expect(acks.last == "committed 15001-20000")
        let v = try CLIRunner.run(["--ledger", dir.path, "--json", "verify"])
        #expect(v.status == 0)
        #expect(v.stdout.contains("\"intact\":true"))
        let stats = try CLIRunner.run(["--ledger", dir.path, "--json", "stats"])
        #expect(stats.stdout.contains("\"HKQuantityTypeIdentifierBodyMass\":{\"com.example.scale\":20001}"))
    }

    /// `stats` sizes its columns to their content: no kind's name is
    /// cut (`activitySummariesRecorded` was shown as `activitySummariesRecorde`).
    @Test func statsColumnsAreAsWideAsTheirLongestCell() throws {
        let dir = try Self.prepared()
        let r = try CLIRunner.run(["--ledger", dir.path, "stats"])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("  activitySummariesRecorded  0"))
        #expect(lines.contains("  appRegistered              1"))
        #expect(lines.contains("  samplesSaved               1"))
        #expect(lines.contains("  HKQuantityTypeIdentifierBodyMass  com.example.scale  1"))
    }

    @Test func aBadLineStopsTheIngestAndItsBatchIsNotAppended() throws {
        let dir = try Self.prepared()
        var lines: [String] = []
        for i in 0..<25 { lines.append("{\"type\":\"bodyMass\",\"value\":70,\"unit\":\"kg\",\"start\":\"\(iso(1_700_000_000 + i))\"}") }
        lines[16] = "{\"type\":\"bodyMass\",\"value\":70,\"unit\":\"count/min\",\"start\":\"2026-01-01T00:00:00Z\"}"
        let r = try CLIRunner.run(["--ledger", dir.path, "ingest", "--app", "com.example.scale", "--batch", "10"],
                                  stdin: lines.joined(separator: "\n") + "\n")
        #expect(r.status == 3)
        #expect(r.stdout == "committed 1-10\n")
        #expect(r.stderr == "healthledger: line 17: unitNotAllowed: HKQuantityTypeIdentifierBodyMass takes units of mass, not 'count/min'; lines 11-17 were not appended\n")
        let q = try CLIRunner.run(["--ledger", dir.path, "--json", "query", "--owner", "bodyMass"])
        #expect(q.stdout.split(separator: "\n").count == 11)  // the prepared sample and lines 1-10
        let malformed = try CLIRunner.run(["--ledger", dir.path, "ingest", "--app", "com.example.scale"], stdin: "{\"type\": \"bodyMass\", \"value\": }\n")
        #expect(malformed.status == 3)
        #expect(malformed.stderr == "healthledger: line 1: invalidJSON: column 31 (in \"value\"): expected a value; lines 1-1 were not appended\n")
        #expect(try CLIRunner.run(["--ledger", dir.path, "verify"]).status == 0)
    }

    @Test func everyCommandHasHelp() throws {
        let top = try CLIRunner.run(["--help"])
        let names = top.stdout.split(separator: "\n", omittingEmptySubsequences: false).drop { !$0.hasPrefix("COMMANDS:") }.dropFirst()
            .prefix { !$0.isEmpty }.map { String($0.split(separator: " ").first!) }
        #expect(names.count == 41)  // 20 + checkpoint, prove, key + request, request-status, timezone, available + changes + statistics, priority + report + preferred-unit, activity + copy, ledgers + token, serve + export, diff + erase, encrypt
        for name in names {
            let r = try CLIRunner.run([name, "--help"])
            #expect(r.status == 0, "\(name)")
            #expect(r.stdout.hasPrefix("USAGE: healthledger"), "\(name)")
            #expect(r.stdout.contains("Exit status:"), "\(name)")
        }
    }

    @Test func theDemoRunsTheWholeJourneyAndRefusesAnExistingLedger() throws {
        let dir = TemporaryDirectory()
        let r = try CLIRunner.run(["--ledger", dir.path, "demo"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("BMI:         22.86"))
        #expect(r.stdout.contains("verify: OK"))
        #expect(r.stdout.contains("Blood type:  A+"))
        let again = try CLIRunner.run(["--ledger", dir.path, "demo"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("already holds a ledger"))
    }
}

func iso(_ seconds: Int) -> String {
    ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(seconds)))
}
