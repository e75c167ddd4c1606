import Foundation
import Testing
import TestSupport

/// `kill -9` during an import, then the same import again: while the killed import is
/// open, readers see nothing of it; the next import aborts it (rule E11: none of it
/// applies) and brings everything, so the ledger verifies and answers exactly as one
/// uninterrupted import (nothing doubled, nothing lost).
/// The export is the shared ashtom-hkimport-2017 grown to 2 copies by the shared
/// generator (`synth_apple_health.py`): about 22,000 records, eleven batches, and the
/// importer pauses after its second (the kill lands there, whatever the machine's load).
struct ImportKillTests {
    static let source = SharedData.file("data/apple-health/ashtom-hkimport-2017/export.xml")
    static let generator = SharedData.file("tools/synth_apple_health.py")

    /// Every answer of `query --owner --json TYPE`, sorted (slot order differs
    /// between the two ledgers; the samples must not).
    static func answers(_ ledger: String, _ type: String, in dir: URL) throws -> [Substring] {
        let run = try CLIRunner.run(["--ledger", ledger, "--json", "query", "--owner", type], currentDirectory: dir)
        #expect(run.status == 0)
        return run.stdout.split(separator: "\n").sorted()
    }

    /// The `samplesSaved` events a reader sees in `ledger` now (0 while it cannot open it).
    static func savedEvents(_ ledger: String, in dir: URL) throws -> Int {
        let run = try CLIRunner.run(["--ledger", ledger, "--json", "stats"], currentDirectory: dir)
        guard run.status == 0,
              let stats = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any],
              let events = stats["events"] as? [String: Any] else { return 0 }
        return events["samplesSaved"] as? Int ?? 0
    }

    /// The `samplesSaved` records in the log of `ledger`, applied or not, and how many
    /// of them `log` marks as not applied because their import is open.
    static func savedRecords(_ ledger: String, in dir: URL) throws -> (all: Int, open: Int) {
        let run = try CLIRunner.run(["--ledger", ledger, "--json", "log"], currentDirectory: dir)
        guard run.status == 0 else { return (0, 0) }
        let saves = run.stdout.split(separator: "\n").filter { $0.contains(#""kind":"samplesSaved""#) }
        return (saves.count, saves.filter { $0.contains(#""applied":false,"transaction":"open""#) }.count)
    }

    @Test(.enabled(if: source != nil && generator != nil, "needs ../shared (ashtom-hkimport-2017 and the generator)"), .tags(.sweep), .disabled(if: Sweeps.leftOut, Sweeps.reason))
    func killedImportIsCompletedByImportingAgain() throws {
        let dir = TemporaryDirectory("kill")
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        let big = dir.path + "/big.xml"
        let generate = try ChildProcess.run("/usr/bin/env", ["python3", try #require(Self.generator).path, try #require(Self.source).path,
                                                              big, "--copies", "2"], stdout: .null, stderr: .null)
        #expect(generate.termination == .exited(0))

        // The reference: one import, never interrupted.
        #expect(try CLIRunner.run(["--ledger", "R", "import-apple-health", "big.xml"], currentDirectory: dir.url).status == 0)

        // Killed while writing: the importer pauses (durably) after its second sample
        // batch when the test asks it to and says so on stderr; the kill lands on that
        // line, mid-import, whatever the machine's load.
        let importer = try CLIRunner.start(["--ledger", "K", "import-apple-health", "big.xml"],
                                           environment: ["HEALTHLEDGER_TEST_IMPORT_PAUSE_AFTER_BATCHES": "2"],
                                           currentDirectory: dir.url, stdout: .null, stderr: .pipe)
        let paused = importer.waitForStderr(containing: "paused after 2 batches", seconds: 300)
        // Open: in the log, marked not applied, and no reader sees any of it.
        let records = try Self.savedRecords("K", in: dir.url)
        #expect(records.all >= 2 && records.open == records.all)
        #expect(try Self.savedEvents("K", in: dir.url) == 0)
        importer.kill(SIGKILL)
        #expect(importer.wait() == .signaled(SIGKILL))
        #expect(paused, "the import ended before it could be killed")
        #expect(try Self.savedEvents("K", in: dir.url) == 0)

        let again = try CLIRunner.run(["--ledger", "K", "--json", "import-apple-health", "big.xml"], currentDirectory: dir.url)
        #expect(again.status == 0)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect(summary["removed"] as? Int == 0)
        #expect(summary["unchanged"] as? Int == 0)  // the killed import was aborted: none of it applied
        #expect(summary["again"] as? Bool == false)
        // The killed import's events are all in the log, marked aborted.
        let aborted = try CLIRunner.run(["--ledger", "K", "--json", "log"], currentDirectory: dir.url)
        let abortedSaves = aborted.stdout.split(separator: "\n").filter {
            $0.contains(#""kind":"samplesSaved""#) && $0.contains(#""transaction":"aborted""#)
        }
        #expect(abortedSaves.count == records.all)
        #expect(try CLIRunner.run(["--ledger", "K", "verify"], currentDirectory: dir.url).status == 0)
        for type in ["stepCount", "heartRate", "workout"] {
            let expected = try Self.answers("R", type, in: dir.url)
            #expect(!expected.isEmpty)
            #expect(try Self.answers("K", type, in: dir.url) == expected, "\(type)")
        }
    }
}
