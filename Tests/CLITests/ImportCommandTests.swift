import Foundation
import Testing
import LedgerChecksums
import TestSupport
import LedgerLog

/// `healthledger import-apple-health` as a user runs it: a relative ledger path,
/// exit codes, the summary, a second import that merges, a newer export that
/// removes what it lacks (dry run first), an older one refused, and a failed import
/// that leaves no ledger behind.
struct ImportCommandTests {
    @Test func importsMergesAgainAndLeavesNothingOnFailure() throws {
        let dir = TemporaryDirectory("work")
        try SmallExport.write(in: dir.path)
        let here = dir.url

        let first = try CLIRunner.run(["--ledger", "L", "import-apple-health", "export.xml"], currentDirectory: here)
        #expect(first.status == 0)
        #expect(first.stderr == "healthledger: created a new ledger at L\n")
        let lines = first.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "imported export.xml (\(SmallExport.xml.utf8.count) bytes, exported 2019-06-17 21:07:11 -0400, export version 11)")
        #expect(lines.contains("  samples saved:      8 new; 0 unchanged; 0 removed (absent from this export)"))
        #expect(lines.contains("    kept raw: 1 × HKQuantityTypeIdentifierStepCount: no value"))

        // The same export again: everything is there already; only the bracket is appended.
        let again = try CLIRunner.run(["--ledger", "L", "--json", "import-apple-health", "export.xml"], currentDirectory: here)
        #expect(again.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect(json["again"] as? Bool == true)
        #expect(json["firstSequence"] as? Int == 24)
        #expect(json["lastSequence"] as? Int == 25)
        #expect(json["samplesSaved"] as? Int == 0)
        #expect(json["unchanged"] as? Int == 9)
        #expect(json["records"] as? Int == 8)
        #expect(json["contentSHA256"] as? String == SHA256.hash(Array(SmallExport.xml.utf8)).hex)

        #expect(try CLIRunner.run(["--ledger", "L", "verify"], currentDirectory: here).status == 0)
        let query = try CLIRunner.run(["--ledger", "L", "--json", "query", "--owner", "bodyMass"], currentDirectory: here)
        #expect(query.stdout.split(separator: "\n").count == 2)  // the exact repeat, once each (occurrences 0 and 1)

        // A broken export into a new ledger: exit 3, the error with line and column, no ledger left.
        try SmallExport.write(SmallExport.xml.replacingOccurrences(of: "2019-05-03 23:30:00", with: "2019-05-03 25:30:00"),
                              named: "broken.xml", in: dir.path)
        let broken = try CLIRunner.run(["--ledger", "M", "import-apple-health", "broken.xml"], currentDirectory: here)
        #expect(broken.status == 3)
        #expect(broken.stderr == "healthledger: invalidValue: broken.xml: line 24, column 2: startDate '2019-05-03 25:30:00 -0400' is not a date\n")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/M"))

        // Into an existing folder that holds no ledger: the folder stays, as it was.
        try FileManager.default.createDirectory(atPath: dir.path + "/E", withIntermediateDirectories: false)
        try Data("mine".utf8).write(to: here.appendingPathComponent("E/notes.txt"))
        let intoFolder = try CLIRunner.run(["--ledger", "E", "import-apple-health", "broken.xml"], currentDirectory: here)
        #expect(intoFolder.status == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path + "/E") == ["notes.txt"])

        let missing = try CLIRunner.run(["--ledger", "M", "import-apple-health", "nothere.zip"], currentDirectory: here)
        #expect(missing.status == 4)
        #expect(missing.stderr == "healthledger: notFound: nothere.zip: no such file or folder\n")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/M"))
    }

    @Test func invalidUTF8AndTwoExportsAreRefusedAndWriteNothing() throws {
        let dir = TemporaryDirectory("work")
        var bytes = Array(SmallExport.xml.utf8)
        let needle = Array("sourceName=\"Omron\"".utf8)
        let offset = try #require((0...(bytes.count - needle.count)).first { Array(bytes[$0..<$0 + needle.count]) == needle })
        bytes[offset + 14] = 0xFF
        try FileManager.default.createDirectory(atPath: dir.path + "/bad", withIntermediateDirectories: true)
        try Data(bytes).write(to: dir.url.appendingPathComponent("bad/export.xml"))
        let r = try CLIRunner.run(["--ledger", "M", "import-apple-health", "bad"], currentDirectory: dir.url)
        #expect(r.status == 3)
        #expect(r.stderr == "healthledger: malformedXML: export.xml: line 21, column 77: invalid UTF-8 in an attribute value (byte 0xFF)\n")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/M"))

        try SmallExport.write(in: dir.path + "/two")
        try SmallExport.write(named: "export 2.xml", in: dir.path + "/two")
        let two = try CLIRunner.run(["--ledger", "M", "import-apple-health", "two"], currentDirectory: dir.url)
        #expect(two.status == 3)
        #expect(two.stderr == "healthledger: ambiguousExport: two holds 2 export XMLs (export 2.xml, export.xml); import one at a time (unzip and give its path)\n")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/M"))
    }

    /// A newer export without the workout and the activity summary: `--dry-run` says
    /// so and writes nothing; the import removes both in one event that `audit` names;
    /// the older export is then refused (exit 5) unless `--force`.
    @Test func aNewerExportRemovesWhatItLacksAndAnOlderOneIsRefused() throws {
        let dir = TemporaryDirectory("work")
        try SmallExport.write(in: dir.path)
        let here = dir.url
        var newer = SmallExport.xml.replacingOccurrences(of: "2019-06-17 21:07:11 -0400", with: "2019-07-01 09:00:00 -0400")
        let workoutStart = try #require(newer.range(of: " <Workout "))
        let workoutEnd = try #require(newer.range(of: "</ActivitySummary>") ?? newer.range(of: "appleStandHoursGoal=\"12\"/>\n"))
        newer.removeSubrange(workoutStart.lowerBound..<workoutEnd.upperBound)
        try SmallExport.write(newer, named: "newer.xml", in: dir.path)

        #expect(try CLIRunner.run(["--ledger", "L", "import-apple-health", "export.xml"], currentDirectory: here).status == 0)
        let workouts = try CLIRunner.run(["--ledger", "L", "--json", "query", "--owner", "workout"], currentDirectory: here)
        let workout = try #require(try JSONSerialization.jsonObject(with: Data(workouts.stdout.utf8)) as? [String: Any])
        let uuid = try #require(workout["uuid"] as? String)
        let log = try Data(contentsOf: dir.url.appendingPathComponent("L/ledger.log"))

        let dry = try CLIRunner.run(["--ledger", "L", "import-apple-health", "--dry-run", "newer.xml"], currentDirectory: here)
        #expect(dry.status == 0)
        let lines = dry.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("would import (dry run, nothing written) newer.xml") == true)
        #expect(lines.contains("  samples to save:      0 new; 7 unchanged; 2 to remove (absent from this export)"))
        #expect(lines.contains { $0.hasPrefix("  HKWorkoutTypeIdentifier") && $0.hasSuffix("          0          0          1") })
        #expect(lines.contains { $0.hasPrefix("  ActivitySummary") && $0.hasSuffix("          0          0          1") })
        #expect(try Data(contentsOf: dir.url.appendingPathComponent("L/ledger.log")) == log)

        let merged = try CLIRunner.run(["--ledger", "L", "--json", "import-apple-health", "newer.xml"], currentDirectory: here)
        #expect(merged.status == 0)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(merged.stdout.utf8)) as? [String: Any])
        #expect(summary["removed"] as? Int == 2)
        #expect(summary["samplesSaved"] as? Int == 0)
        let importId = try #require(summary["importId"] as? String)
        let after = try CLIRunner.run(["--ledger", "L", "--json", "query", "--owner", "workout"], currentDirectory: here)
        #expect(after.stdout == "")
        let audit = try CLIRunner.run(["--ledger", "L", "audit", uuid], currentDirectory: here)
        #expect(audit.status == 0)
        #expect(audit.stdout.contains("import \(importId)"))
        #expect(audit.stdout.contains("deleted \(uuid) (absent from the export dated 2019-07-01 09:00:00 -0400)"))
        #expect(try CLIRunner.run(["--ledger", "L", "verify"], currentDirectory: here).status == 0)

        let older = try CLIRunner.run(["--ledger", "L", "import-apple-health", "export.xml"], currentDirectory: here)
        #expect(older.status == 5)
        #expect(older.stderr.hasPrefix("healthledger: olderExport: this export (exported 2019-06-17 21:07:11 -0400) is older than the one imported at event #"))
        let forced = try CLIRunner.run(["--ledger", "L", "--json", "import-apple-health", "--force", "export.xml"], currentDirectory: here)
        #expect(forced.status == 0)
        let restored = try #require(try JSONSerialization.jsonObject(with: Data(forced.stdout.utf8)) as? [String: Any])
        #expect(restored["previouslyDeleted"] as? Int == 1)  // the workout's deletion stands
    }
}
