import Foundation
import Testing
import TestSupport

/// The seeded CLI input fuzzer (`CLIInputFuzz`) in process, and a few of its
/// `ingest` lines through the built binary against a real ledger: nothing traps,
/// every refusal names its kind with a documented exit status, and a refused line
/// leaves the ledger byte for byte as it was.
///
/// `HEALTHLEDGER_FUZZ_CASES` and `HEALTHLEDGER_FUZZ_SEED` scale it up for a soak
/// (`tools/fuzz_cli.sh`); the default is 2,000 cases of each of JSON, units and dates
/// and 200 XML documents.
struct CLIInputFuzzTests {
    static let environment = ProcessInfo.processInfo.environment
    static let cases = Int(environment["HEALTHLEDGER_FUZZ_CASES"] ?? "") ?? 2_000
    static let seed = UInt64(environment["HEALTHLEDGER_FUZZ_SEED"] ?? "") ?? 17

    @Test func inProcessInputsNeverTrapAndAreRefusedByName() throws {
        let dir = TemporaryDirectory("fuzz")
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        var fuzz = CLIInputFuzz(seed: Self.seed)
        let xmlCases = max(1, Self.cases / 10)
        let clock = ContinuousClock.now
        fuzz.run(cases: Self.cases, xmlCases: xmlCases, folder: dir.path)
        if Self.environment["HEALTHLEDGER_FUZZ_CASES"] != nil {
            print("CLI input fuzz, seed \(Self.seed): \(Self.cases * 3 + xmlCases) cases in \(ContinuousClock.now - clock)\n\(fuzz.report)")
        }
        #expect(fuzz.failures.isEmpty, "seed \(Self.seed): \(fuzz.failures.prefix(10).joined(separator: "\n"))")
        // The run explores both sides: some of each kind accepted, most refused.
        for kind in ["json", "unit", "date", "xml"] {
            #expect(fuzz.tally.contains { $0.key.hasPrefix(kind + " refused") }, "\(kind) never refused")
        }
        #expect((fuzz.tally["json accepted"] ?? 0) > 0)
        #expect((fuzz.tally["unit accepted"] ?? 0) > 0)
        #expect((fuzz.tally["date accepted"] ?? 0) > 0)
    }

    /// The same seed gives the same inputs: a failure is reproduced from its seed.
    @Test func aSeedReproducesItsInputs() {
        var a = CLIInputFuzz(seed: 99), b = CLIInputFuzz(seed: 99)
        for _ in 0..<50 {
            #expect(a.jsonLine() == b.jsonLine())
            #expect(a.unitString() == b.unitString())
            #expect(a.xmlDocument() == b.xmlDocument())
        }
    }

    /// Fuzzed lines through the real `ingest`, one process each: exit 0 or 3 only, and
    /// a refused line changes nothing on disk.
    @Test func fuzzedLinesThroughTheBinaryLeaveARefusedLedgerUnchanged() throws {
        let dir = try StoreCommandTests.prepared()
        _ = try CLIRunner.run(["--ledger", dir.path, "--app", "com.example.scale", "request",
                               "--share", "heartRate,sleepAnalysis,vo2Max", "--read", "heartRate"])
        _ = try CLIRunner.run(["--ledger", dir.path, "authorize", "--app", "com.example.scale",
                               "--share", "heartRate,sleepAnalysis,vo2Max", "--read", "heartRate"])
        var fuzz = CLIInputFuzz(seed: Self.seed)
        var before = try StoreCommandTests.contents(dir)
        var statuses: [Int32: Int] = [:]
        for _ in 0..<40 {
            let line = fuzz.jsonLine().filter { $0 != 0x0A && $0 != 0x0D }
            let r = try CLIRunner.run(["--ledger", dir.path, "ingest", "--app", "com.example.scale"],
                                      stdin: String(decoding: line, as: UTF8.self) + "\n")
            statuses[r.status, default: 0] += 1
            #expect(r.status == 0 || r.status == 3 || r.status == 5, "\(r.status): \(r.stderr) for \(String(decoding: line, as: UTF8.self))")
            if r.status == 0 {
                before = try StoreCommandTests.contents(dir)
            } else {
                #expect(r.stderr.hasPrefix("healthledger: line 1: "), "\(r.stderr)")
                #expect(try StoreCommandTests.contents(dir) == before, "refused but changed: \(String(decoding: line, as: UTF8.self))")
            }
        }
        #expect((statuses[3] ?? 0) > 0)
        #expect(try CLIRunner.run(["--ledger", dir.path, "verify"]).status == 0)
    }
}
