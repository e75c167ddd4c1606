import Foundation
import Testing
import TestSupport

/// Import refusals as a user meets them: an import that is refused
/// (exit 5, "before anything is written") and a `--dry-run` leave the ledger byte for
/// byte as it was, files and all — also after a killed import, which only a real
/// import's writer aborts; another person's export is refused unless `--force`; and a
/// failed import into a new path removes the ledger it created while it still holds
/// the lock, so no other writer's acknowledged write goes with the folder.
struct ImportRefusalWritesNothingTests {
    /// Every file under `folder` (relative paths, sorted) with its bytes.
    static func contents(_ folder: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        let fm = FileManager.default
        for case let name as String in fm.enumerator(atPath: folder)! {
            var isFolder: ObjCBool = false
            _ = fm.fileExists(atPath: folder + "/" + name, isDirectory: &isFolder)
            out[name] = isFolder.boolValue ? Data() : try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
        }
        return out
    }

    /// SmallExport exported again on `exportDate`, with `extra` step-count Records
    /// before its end (a long export, for an import to be killed in the middle).
    static func export(exportDate: String, extra: Int = 0) -> String {
        var xml = SmallExport.xml.replacingOccurrences(of: "2019-06-17 21:07:11 -0400", with: exportDate)
        var records = ""
        for i in 0..<extra {
            let minute = String(format: "%02d:%02d", i / 60 % 24, i % 60)
            let day = String(format: "2019-06-%02d", 1 + i / 1440)
            records += " <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"Phone\" unit=\"count\" creationDate=\"\(day) \(minute):00 -0400\" startDate=\"\(day) \(minute):00 -0400\" endDate=\"\(day) \(minute):30 -0400\" value=\"\(i % 97 + 1)\"/>\n"
        }
        xml = xml.replacingOccurrences(of: "</HealthData>", with: records + "</HealthData>")
        return xml
    }

    /// Another person's export: no `<Me>`, exported later, and not one Record,
    /// Workout or ActivitySummary in common with SmallExport (every date a year earlier).
    static let otherPerson: String = {
        var xml = SmallExport.xml.replacingOccurrences(of: "2019-06-17 21:07:11 -0400", with: "2019-07-01 09:00:00 -0400")
        xml = xml.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix(" <Me ") }.joined(separator: "\n")
        return xml.replacingOccurrences(of: "2019-05-0", with: "2018-05-0")
    }()

    @Test func aRefusedOlderImportLeavesTheLedgerByteForByteAsItWas() throws {
        let dir = TemporaryDirectory("refused")
        try SmallExport.write(Self.export(exportDate: "2019-07-01 09:00:00 -0400"), named: "newer.xml", in: dir.path)
        try SmallExport.write(in: dir.path)
        #expect(try CLIRunner.run(["--ledger", "L", "import-apple-health", "newer.xml"], currentDirectory: dir.url).status == 0)
        let before = try Self.contents(dir.path + "/L")

        let older = try CLIRunner.run(["--ledger", "L", "import-apple-health", "export.xml"], currentDirectory: dir.url)
        #expect(older.status == 5)
        #expect(older.stderr.hasPrefix("healthledger: olderExport: "))
        #expect(try Self.contents(dir.path + "/L") == before, "a refused import appended nothing (no seal)")

        let dry = try CLIRunner.run(["--ledger", "L", "import-apple-health", "--dry-run", "export.xml"], currentDirectory: dir.url)
        #expect(dry.status == 5)
        #expect(try Self.contents(dir.path + "/L") == before)
    }

    /// A killed import is aborted by the next writer that imports — not by a dry run,
    /// and not by an import that is refused: both leave every byte as it was.
    @Test func aDryRunOrARefusedImportAfterAKilledImportWritesNothing() throws {
        let dir = TemporaryDirectory("killed")
        try SmallExport.write(in: dir.path)
        try SmallExport.write(Self.export(exportDate: "2019-07-01 09:00:00 -0400", extra: 5000), named: "big.xml", in: dir.path)
        try SmallExport.write(Self.export(exportDate: "2019-01-01 09:00:00 -0400"), named: "older.xml", in: dir.path)
        #expect(try CLIRunner.run(["--ledger", "K", "import-apple-health", "export.xml"], currentDirectory: dir.url).status == 0)

        let importer = try CLIRunner.start(["--ledger", "K", "import-apple-health", "big.xml"],
                                           environment: ["HEALTHLEDGER_TEST_IMPORT_PAUSE_AFTER_BATCHES": "1"],
                                           currentDirectory: dir.url, stdout: .null, stderr: .pipe)
        let paused = importer.waitForStderr(containing: "paused after 1 batches", seconds: 300)
        importer.kill(SIGKILL)
        #expect(importer.wait() == .signaled(SIGKILL))
        try #require(paused, "the import ended before it could be killed")
        let before = try Self.contents(dir.path + "/K")

        let dry = try CLIRunner.run(["--ledger", "K", "--json", "import-apple-health", "--dry-run", "big.xml"], currentDirectory: dir.url)
        #expect(dry.status == 0, "\(dry.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])
        #expect(summary["samplesSaved"] as? Int == 5000)  // the killed import's batch is not in the ledger
        #expect(summary["unchanged"] as? Int == 9)
        #expect(try Self.contents(dir.path + "/K") == before, "a dry run wrote nothing (no importAborted)")

        let older = try CLIRunner.run(["--ledger", "K", "import-apple-health", "older.xml"], currentDirectory: dir.url)
        #expect(older.status == 5)
        #expect(older.stderr.hasPrefix("healthledger: olderExport: "))
        #expect(try Self.contents(dir.path + "/K") == before, "a refused import wrote nothing")

        // The import that is not refused aborts the killed one and brings everything.
        let again = try CLIRunner.run(["--ledger", "K", "--json", "import-apple-health", "big.xml"], currentDirectory: dir.url)
        #expect(again.status == 0)
        let merged = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect(merged["samplesSaved"] as? Int == 5000)
        #expect(try CLIRunner.run(["--ledger", "K", "verify"], currentDirectory: dir.url).status == 0)
    }

    @Test func anotherPersonsExportIsRefusedUnlessForcedAndWritesNothing() throws {
        let dir = TemporaryDirectory("other")
        try SmallExport.write(in: dir.path)
        try SmallExport.write(Self.otherPerson, named: "other.xml", in: dir.path)
        #expect(try CLIRunner.run(["--ledger", "L", "import-apple-health", "export.xml"], currentDirectory: dir.url).status == 0)
        let before = try Self.contents(dir.path + "/L")

        let message = "healthledger: unrelatedExport: this export shares no record with what the ledger's earlier imports brought (the last at event #1, exported 2019-06-17 21:07:11 -0400): merging it would remove all 8 samples and 1 activity summary of theirs still in the ledger, as absent from it (is it another person's export?); pass --force to merge it anyway\n"
        for extra in [[], ["--dry-run"]] {
            let refused = try CLIRunner.run(["--ledger", "L", "import-apple-health"] + extra + ["other.xml"], currentDirectory: dir.url)
            #expect(refused.status == 5, "\(extra)")
            #expect(refused.stderr == message, "\(extra)")
            #expect(refused.stdout == "")
            #expect(try Self.contents(dir.path + "/L") == before, "\(extra)")
        }

        let forced = try CLIRunner.run(["--ledger", "L", "--json", "import-apple-health", "--force", "other.xml"], currentDirectory: dir.url)
        #expect(forced.status == 0)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(forced.stdout.utf8)) as? [String: Any])
        #expect(summary["removed"] as? Int == 9)
        #expect(summary["samplesSaved"] as? Int == 8)
    }

    /// The failed import pauses (a test hook) just before it removes the ledger it
    /// created; meanwhile another writer is refused the lock (exit 7). Before, the
    /// lock was released first: that writer's `app register` was acknowledged, then
    /// removed with the folder.
    @Test func aFailedImportRemovesTheLedgerItCreatedWhileStillHoldingTheLock() throws {
        let dir = TemporaryDirectory("cleanup")
        try SmallExport.write(SmallExport.xml.replacingOccurrences(of: "2019-05-03 23:30:00", with: "2019-05-03 25:30:00"),
                              named: "broken.xml", in: dir.path)
        let importer = try CLIRunner.start(["--ledger", "N", "import-apple-health", "broken.xml"],
                                           environment: ["HEALTHLEDGER_TEST_PAUSE_BEFORE_REMOVING_CREATED_LEDGER": "1"],
                                           currentDirectory: dir.url, stdin: .pipe, stdout: .null, stderr: .pipe)
        let paused = importer.waitForStderr(containing: "test pause: removing the ledger this import created", seconds: 120)
        #expect(paused)
        let writer = try CLIRunner.run(["--ledger", "N", "app", "register", "--app", "com.example.late", "--name", "Late"],
                                       currentDirectory: dir.url)
        importer.closeStdin()
        #expect(importer.wait() == .exited(3))
        #expect(writer.status == 7, "the other writer was refused the lock, not acknowledged: \(writer.stdout)")
        #expect(writer.stderr == "healthledger: ledgerLocked: another writer holds N [W1]\n")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/N"))
    }

    /// A FIFO where the export has a route file (or an XML file) is never opened for
    /// reading (that blocks until a writer comes): not a regular file, refused.
    @Test func aFIFOInTheExportIsRefusedWithoutBlocking() throws {
        let dir = TemporaryDirectory("fifo")
        let export = dir.path + "/export"
        try FileManager.default.createDirectory(atPath: export + "/workout-routes", withIntermediateDirectories: true)
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
             <ExportDate value="2019-06-17 21:07:11 -0400"/>
             <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="30" durationUnit="min" sourceName="Watch" creationDate="2019-06-11 15:31:00 -0700" startDate="2019-06-11 15:00:00 -0700" endDate="2019-06-11 15:30:00 -0700">
              <WorkoutRoute sourceName="Watch" creationDate="2019-06-11 15:31:00 -0700" startDate="2019-06-11 15:00:00 -0700" endDate="2019-06-11 15:30:00 -0700">
               <FileReference path="/workout-routes/r.gpx"/>
              </WorkoutRoute>
             </Workout>
            </HealthData>
            """
        try xml.write(toFile: export + "/export.xml", atomically: true, encoding: .utf8)
        #expect(mkfifo(export + "/workout-routes/r.gpx", 0o600) == 0)
        #expect(mkfifo(export + "/export_cda.xml", 0o600) == 0)
        let r = try CLIRunner.run(["--ledger", "L", "import-apple-health", "export"], currentDirectory: dir.url, timeout: 30)
        #expect(r.status == 3)
        #expect(r.stderr == "healthledger: invalidValue: export.xml: line 7, column 3: route /workout-routes/r.gpx: not a regular file\n")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/L"))
    }
}
