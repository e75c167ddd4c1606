import Foundation
import Testing
import LedgerChecksums
import TestSupport
import LedgerLog

/// `healthledger import-apple-health` as a user runs it: a relative ledger path,
/// exit codes, the summary, refusal of a second import, and a failed import that
/// leaves no ledger behind.
struct ImportCommandTests {
    @Test func importsRefusesAgainAndLeavesNothingOnFailure() throws {
        let dir = TemporaryDirectory("work")
        try SmallExport.write(in: dir.path)
        let here = dir.url

        let first = try CLIRunner.run(["--ledger", "L", "import-apple-health", "export.xml"], currentDirectory: here)
        #expect(first.status == 0)
        #expect(first.stderr == "healthledger: created a new ledger at L\n")
        let lines = first.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "imported export.xml (\(SmallExport.xml.utf8.count) bytes, exported 2019-06-17 21:07:11 -0400, export version 11)")
        #expect(lines.contains("  samples saved:      8"))
        #expect(lines.contains("    kept raw: 1 × HKQuantityTypeIdentifierStepCount: no value"))

        let second = try CLIRunner.run(["--ledger", "L", "import-apple-health", "export.xml"], currentDirectory: here)
        #expect(second.status == 5)
        #expect(second.stdout == "")
        #expect(second.stderr == "healthledger: alreadyImported: this export (exported 2019-06-17 21:07:11 -0400) was imported at event #1; pass --again to import it again\n")

        let again = try CLIRunner.run(["--ledger", "L", "--json", "import-apple-health", "--again", "export.xml"], currentDirectory: here)
        #expect(again.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect(json["again"] as? Bool == true)
        #expect(json["firstSequence"] as? Int == 24)
        #expect(json["samplesSaved"] as? Int == 8)
        #expect(json["records"] as? Int == 8)
        #expect(json["contentSHA256"] as? String == SHA256.hash(Array(SmallExport.xml.utf8)).hex)

        #expect(try CLIRunner.run(["--ledger", "L", "verify"], currentDirectory: here).status == 0)
        let query = try CLIRunner.run(["--ledger", "L", "--json", "query", "--owner", "bodyMass"], currentDirectory: here)
        #expect(query.stdout.split(separator: "\n").count == 4)  // the exact repeat, imported twice

        // A broken export into a new ledger: exit 3, the error with line and column, no ledger left.
        try SmallExport.write(SmallExport.xml.replacingOccurrences(of: "2019-05-03 23:30:00", with: "2019-05-03 25:30:00"),
                              named: "broken.xml", in: dir.path)
        let broken = try CLIRunner.run(["--ledger", "M", "import-apple-health", "broken.xml"], currentDirectory: here)
        #expect(broken.status == 3)
        #expect(broken.stderr == "healthledger: invalidValue: broken.xml: line 24, column 2: startDate '2019-05-03 25:30:00 -0400' is not a date\n")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/M"))

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
}
