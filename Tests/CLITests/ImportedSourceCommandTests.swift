import Foundation
import Testing
import TestSupport

/// Through the binary, an imported source (`export:NAME`) is the
/// import's alone (rule E13), so an acknowledged sample cannot be deleted by acting
/// as its source and importing the export again; and a new app's bundle identifier
/// is HealthKit's kind (rule E14).
struct ImportedSourceCommandTests {
    @Test func anExportSourceCannotBeUsedOrRenamedSoAReimportRemovesNothing() throws {
        let dir = TemporaryDirectory("work")
        try SmallExport.write(in: dir.path)
        func run(_ args: [String], stdin: String? = nil) throws -> CLIResult {
            try CLIRunner.run(["--ledger", "L"] + args, stdin: stdin, currentDirectory: dir.url)
        }
        #expect(try run(["import-apple-health", "export.xml"]).status == 0)
        let log = dir.url.appendingPathComponent("L/ledger.log")
        let before = try Data(contentsOf: log)

        // saving as the export's source: refused, nothing appended
        let line = #"{"type":"bloodPressureSystolic","value":200,"unit":"mmHg","start":"2026-03-01T08:00:00Z"}"#
        let ingest = try run(["--app", "export:Omron", "ingest"], stdin: line + "\n")
        #expect(ingest.status == 5)
        #expect(ingest.stderr == "healthledger: line 1: reservedForImports: export:Omron is an imported source: only an import saves samples as it [E13]; lines 1-1 were not appended\n")
        // renaming it (which would flip its imported flag): refused
        let rename = try run(["app", "register", "--app", "export:Omron", "--name", "Evil"])
        #expect(rename.status == 5)
        #expect(rename.stderr == "healthledger: reservedForImports: export:Omron: only an import registers or renames an app named export:NAME or marks an app imported (the importer's sources) [E13]\n")
        // a new app in the namespace: refused the same way
        let squat = try run(["app", "register", "--app", "export:Connect", "--name", "Connect"])
        #expect(squat.status == 5)
        #expect(squat.stderr.hasPrefix("healthledger: reservedForImports: export:Connect: only an import registers"))
        #expect(try Data(contentsOf: log) == before)

        // the same export again: every sample unchanged, none removed as absent
        let again = try run(["--json", "import-apple-health", "export.xml"])
        #expect(again.status == 0, "\(again.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect(json["samplesSaved"] as? Int == 0)
        #expect(json["unchanged"] as? Int == 9)
        #expect(json["removed"] as? Int == 0)
        #expect(try run(["verify"]).status == 0)
    }

    @Test func aBundleIdentifierOutsideHealthKitsCharactersIsRefused() throws {
        let dir = TemporaryDirectory()
        #expect(try CLIRunner.run(["--ledger", dir.path, "init"]).status == 0)
        let log = dir.url.appendingPathComponent("ledger.log")
        let before = try Data(contentsOf: log)
        for (bundle, shown) in [("com.x<y \"z\"", "'<'"), ("com.example app", "U+20"), ("com.example.'q'", "'''")] {
            let r = try CLIRunner.run(["--ledger", dir.path, "app", "register", "--app", bundle, "--name", "X"])
            #expect(r.status == 3)
            #expect(r.stderr == "healthledger: invalidBundleIdentifier: '\(bundle)' holds \(shown), which no bundle identifier does (A–Z, a–z, 0–9, '.', '-') [E14]\n")
        }
        #expect(try Data(contentsOf: log) == before)
        let ok = try CLIRunner.run(["--ledger", dir.path, "app", "register", "--app", "com.example.app-2", "--name", "X"])
        #expect(ok.status == 0, "\(ok.stderr)")
    }
}
