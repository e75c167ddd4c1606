import Foundation
import Testing
import TestSupport

/// `export csv`: one RFC 4180 file per type of what the viewer may read, equal to
/// `query --json` field by field (checked by Python's csv module, tools/check_csv_export.py),
/// row counts equal to `stats`, an app's export limited to its reads, `--as-of`.
@Suite struct ExportCommandTests {
    static let python: String? = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let checker = SharedData.repositoryRoot.appendingPathComponent("tools/check_csv_export.py").path

    static func run(_ dir: TemporaryDirectory, _ args: [String], stdin: String? = nil) throws -> CLIResult {
        try CLIRunner.run(["--ledger", dir.path] + args, stdin: stdin)
    }

    /// A ledger: app A shares steps, body mass and sleep (fields with commas, quotes and
    /// line breaks in metadata, a device); app B reads steps only. Returns the time
    /// between the first ingest and the second.
    static func ledger() throws -> (TemporaryDirectory, String) {
        let dir = TemporaryDirectory("export")
        #expect(try run(dir, ["init"]).status == 0)
        for (app, share, read) in [("com.example.a", ["stepCount", "bodyMass", "sleepAnalysis"], ["stepCount"]),
                                   ("com.example.b", [], ["stepCount"])] {
            #expect(try run(dir, ["app", "register", "--app", app, "--name", app, "--share-purpose", "s", "--read-purpose", "r"]).status == 0)
            let request = share.flatMap { ["--share", $0] } + read.flatMap { ["--read", $0] }
            #expect(try run(dir, ["--app", app, "request"] + request).status == 0)
            #expect(try run(dir, ["authorize", "--app", app] + request).status == 0)
        }
        let first = """
            {"type":"stepCount","value":3235,"unit":"count","start":"2027-08-02T05:33:00Z","end":"2027-08-02T05:38:00Z"}
            {"type":"stepCount","value":12.5,"unit":"count","start":"2027-08-01T05:33:00+02:00","metadata":{"note":"a, \\"quoted\\"\\nsecond line","HKWasUserEntered":true}}
            {"type":"bodyMass","value":72.25,"unit":"kg","start":"2027-08-02T07:00:00Z","device":{"name":"Scale, \\"S\\"","manufacturer":"Acme"}}
            {"type":"sleepAnalysis","value":"asleepCore","start":"2027-08-02T00:00:00Z","end":"2027-08-02T06:00:00Z"}

            """
        #expect(try run(dir, ["ingest", "--app", "com.example.a"], stdin: first).status == 0)
        usleep(20_000)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let between = formatter.string(from: Date())
        usleep(20_000)
        let second = #"{"type":"stepCount","value":100,"unit":"count","start":"2027-08-03T05:33:00Z"}"# + "\n"
        #expect(try run(dir, ["ingest", "--app", "com.example.a"], stdin: second).status == 0)
        return (dir, between)
    }

    @Test(.enabled(if: python != nil, "python3 is not installed: the files are read back by Python's csv module"))
    func theOwnersFilesEqualTheQueriesFieldByFieldAndCountAsStatsCounts() throws {
        let (dir, _) = try Self.ledger()
        let out = dir.path + "/csv"
        let r = try Self.run(dir, ["--json", "export", "csv", "--owner", "--out", out])
        #expect(r.status == 0, "\(r.stderr)")
        let files = r.stdout.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let rows = Dictionary(uniqueKeysWithValues: files.compactMap { $0 }.map { ($0["type"] as! String, $0["rows"] as! Int) })
        #expect(rows == ["HKQuantityTypeIdentifierStepCount": 3, "HKQuantityTypeIdentifierBodyMass": 1,
                         "HKCategoryTypeIdentifierSleepAnalysis": 1])
        // The counts stats gives, type by type.
        let stats = try JSONSerialization.jsonObject(with: Data(try Self.run(dir, ["--json", "stats"]).stdout.utf8)) as! [String: Any]
        let samples = stats["samples"] as! [String: [String: Int]]
        for (type, n) in rows { #expect(samples[type]?.values.reduce(0, +) == n, "\(type)") }
        // Every file read back by Python's csv module equals the query, field by field.
        for type in rows.keys {
            let query = try Self.run(dir, ["query", "--owner", type, "--json"])
            let jsonl = dir.path + "/\(type).jsonl"
            try query.stdout.write(toFile: jsonl, atomically: true, encoding: .utf8)
            let check = try ChildProcess.run(Self.python!, [Self.checker, out + "/\(type).csv", jsonl])
            #expect(check.status == 0 && check.stdoutText == "ok \(rows[type]!)\n", "\(type): \(check.stdoutText)\(check.stderrText)")
        }
        // The header and a quoted field, byte for byte.
        let steps = try String(contentsOfFile: out + "/HKQuantityTypeIdentifierStepCount.csv", encoding: .utf8)
        #expect(steps.hasPrefix("uuid,start,end,value,unit,source,device,metadata,sourceVersion,creationDate\r\n"))
        #expect(steps.contains(#","{""note"":""a, \""quoted\""\nsecond line"",""HKWasUserEntered"":true}","#))
    }

    @Test func anAppExportsWhatItMayReadAndAnExportNeverWritesIntoFilesThatAreThere() throws {
        let (dir, between) = try Self.ledger()
        let out = dir.path + "/b"
        let r = try Self.run(dir, ["export", "csv", "--app", "com.example.b", "--out", out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["HKQuantityTypeIdentifierStepCount.csv"])
        #expect(r.stdout == "\(out)/HKQuantityTypeIdentifierStepCount.csv\t3 rows\n")
        // A type asked for by name gets its file even when the app may read none of it.
        let named = try Self.run(dir, ["export", "csv", "--app", "com.example.b", "--type", "bodyMass", "--out", dir.path + "/named"])
        #expect(named.status == 0)
        #expect(try String(contentsOfFile: dir.path + "/named/HKQuantityTypeIdentifierBodyMass.csv", encoding: .utf8)
                == "uuid,start,end,value,unit,source,device,metadata,sourceVersion,creationDate\r\n")
        // As of before the second ingest: two steps.
        let old = try Self.run(dir, ["export", "csv", "--owner", "--type", "stepCount", "--as-of", between, "--out", dir.path + "/old"])
        #expect(old.stdout.hasSuffix("\t2 rows\n"), "\(old.stdout)\(old.stderr)")
        // A folder that holds anything is refused, and left as it was.
        let again = try Self.run(dir, ["export", "csv", "--owner", "--out", out])
        #expect(again.status == 5)
        #expect(again.stderr == "healthledger: outputNotEmpty: \(out) holds files already; an export writes into a new or empty folder\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["HKQuantityTypeIdentifierStepCount.csv"])
        let unknown = try Self.run(dir, ["export", "csv", "--app", "com.example.nobody", "--out", dir.path + "/nobody"])
        #expect(unknown.status == 4)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/nobody"))  // a refused export makes no folder
        // Health data stays the owner's: the folder 0700, the files 0600.
        let folderMode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
        let fileMode = try FileManager.default.attributesOfItem(atPath: out + "/HKQuantityTypeIdentifierStepCount.csv")[.posixPermissions] as? Int
        #expect(folderMode == 0o700 && fileMode == 0o600)
        let characteristic = try Self.run(dir, ["export", "csv", "--owner", "--type", "dateOfBirth", "--out", dir.path + "/dob"])
        #expect(characteristic.status == 2)
    }
}
