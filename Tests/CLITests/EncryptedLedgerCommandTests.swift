import Foundation
import Testing
import TestSupport

/// Encrypted ledgers through the binary (issue 32): `init --encrypt --key-file`, every
/// command with the key file, nothing of the health content readable in the ledger
/// folder without it (while the same commands on a plain ledger leave it in
/// `ledger.log`: the check can fail), the same answers as a plain ledger, and without
/// the key (or with another) reads and writes refused by name, `verify --structure`
/// still checking every byte.
@Suite struct EncryptedLedgerCommandTests {
    static func run(_ dir: TemporaryDirectory, _ ledger: String, _ args: [String], key: String? = nil) throws -> CLIResult {
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        var environment: [String: String] = [:]
        if let key { environment["HEALTHLEDGER_KEY_FILE"] = dir.path + "/" + key }
        return try CLIRunner.run(["--ledger", dir.path + "/" + ledger] + args, environment: environment, currentDirectory: dir.url)
    }

    /// Every file under `folder`, with its bytes.
    static func files(_ folder: String) throws -> [(String, [UInt8])] {
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
        var out: [(String, [UInt8])] = []
        for case let name as String in walker {
            var isDirectory: ObjCBool = false
            let path = folder + "/" + name
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            out.append((name, Array(try Data(contentsOf: URL(fileURLWithPath: path)))))
        }
        return out
    }

    /// What the saved weight leaves behind when readable: its text, its f64 bytes.
    static let needles: [(String, [UInt8])] = [
        ("note text", Array("ZZ-ERASE-ME".utf8)),
        ("value as f64", withUnsafeBytes(of: (123.456 as Double).bitPattern.littleEndian) { Array($0) }),
    ]

    /// The app saves the weight (and the owner a birth date) in ledger `name`.
    static func saveWeight(_ dir: TemporaryDirectory, _ name: String, key: String?) throws {
        let app = "com.example.scale"
        for args in [["--app", app, "app", "register", "--name", "Scale", "--share-purpose", "s", "--read-purpose", "r"],
                     ["--app", app, "request", "--share", "bodyMass", "--read", "bodyMass"],
                     ["authorize", "--app", app, "--share", "bodyMass", "--read", "bodyMass"],
                     ["save", "--app", app, "--type", "bodyMass", "--value", "123.456", "--unit", "kg",
                      "--start", "2026-11-03T08:00:00Z", "--uuid", "0D15EA5E-0000-4000-8000-000000000032", "--meta", "note=ZZ-ERASE-ME"],
                     ["characteristic", "set", "dateOfBirth", "1980-05-17"]] {
            let r = try run(dir, name, args, key: key)
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
    }

    @Test func noFileOfAnEncryptedLedgerHoldsTheSavedValueWhichAPlainLedgerDoes() throws {
        let dir = TemporaryDirectory("encrypted")
        let created = try Self.run(dir, "E", ["init", "--encrypt", "--key-file", dir.path + "/kek"])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.hasPrefix("created encrypted ledger "))
        let keyFile = try FileManager.default.attributesOfItem(atPath: dir.path + "/kek")
        #expect((keyFile[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try Self.run(dir, "P", ["init"]).status == 0)
        try Self.saveWeight(dir, "E", key: "kek")
        try Self.saveWeight(dir, "P", key: nil)

        // The control: a plain ledger's log holds every needle.
        let plainLog = Array(try Data(contentsOf: URL(fileURLWithPath: dir.path + "/P/ledger.log")))
        for (what, needle) in Self.needles { #expect(plainLog.firstRange(of: needle) != nil, "plain log lacks the \(what)") }
        // The encrypted ledger's folder: no file holds any of them.
        let files = try Self.files(dir.path + "/E")
        #expect(files.map(\.0).sorted().contains("keys/keys.bin"))
        for (name, bytes) in files {
            for (what, needle) in Self.needles { #expect(bytes.firstRange(of: needle) == nil, "\(name) holds the \(what)") }
        }
        // And both read the same, with the key.
        for args in [["--owner", "query", "bodyMass", "--json"], ["characteristic", "get", "dateOfBirth"],
                     ["--owner", "latest", "bodyMass", "--json"]] {
            let e = try Self.run(dir, "E", args, key: "kek"), p = try Self.run(dir, "P", args)
            #expect(e.status == 0 && p.status == 0, "\(args): \(e.stderr) \(p.stderr)")
            #expect(e.stdout == p.stdout, "\(args)")
        }
        let query = try Self.run(dir, "E", ["--owner", "query", "bodyMass", "--json"], key: "kek").stdout
        #expect(query.contains("\"value\":123.456") && query.contains("ZZ-ERASE-ME"), "\(query)")
        // A copy takes the key store with the log: it reads the same under the same key.
        let copied = try Self.run(dir, "E", ["copy", dir.path + "/E", dir.path + "/C"], key: "kek")
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(try Self.run(dir, "C", ["--owner", "query", "bodyMass", "--json"], key: "kek").stdout == query)
        for (name, bytes) in try Self.files(dir.path + "/C") {
            for (what, needle) in Self.needles { #expect(bytes.firstRange(of: needle) == nil, "copy's \(name) holds the \(what)") }
        }
        let verify = try Self.run(dir, "E", ["verify"], key: "kek")
        #expect(verify.status == 0 && verify.stdout.contains("OK: the ledger is intact"), "\(verify.stdout)\(verify.stderr)")
    }

    @Test func anImportedExportReadsAsFromAPlainLedgerAndLeavesNoContentInTheFolder() throws {
        let dir = TemporaryDirectory("encrypted-import")
        try SmallExport.write(in: dir.path)
        #expect(try Self.run(dir, "E", ["init", "--encrypt", "--key-file", dir.path + "/kek"]).status == 0)
        for (ledger, key) in [("E", "kek" as String?), ("P", nil)] {
            let r = try Self.run(dir, ledger, ["import-apple-health", "export.xml"], key: key)
            #expect(r.status == 0, "\(ledger): \(r.stderr)")
        }
        // A snapshot of the encrypted ledger, sealed (S9): the reads below open from it.
        let snapshot = try Self.run(dir, "E", ["replay", "--write-snapshot"], key: "kek")
        #expect(snapshot.status == 0, "\(snapshot.stderr)")
        let snapshots = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/E/snapshots").filter { $0.hasSuffix(".bin") }
        #expect(snapshots.count == 1)
        // (`stats` differs by its nature: an encrypted save is one record per key scope,
        // so the log's bytes, events and chain head differ; what it counts of samples not.)
        let reads: [[String]] = [
            ["--owner", "query", "bodyMass", "--json"], ["--owner", "query", "heartRateVariabilitySDNN", "--json"],
            ["--owner", "query", "bloodPressureSystolic", "--json"], ["--owner", "query", "sleepAnalysis", "--json"],
            ["--owner", "query", "HKCorrelationTypeIdentifierBloodPressure", "--json"],
            ["--owner", "query", "HKWorkoutTypeIdentifier", "--json"],
            ["--owner", "activity", "--from", "2019-05-01", "--to", "2019-05-31", "--json"],
            ["--owner", "profile", "--json"],
            ["--owner", "statistics", "bodyMass", "--average", "--by", "day", "--tz", "UTC", "--json"],
        ]
        for args in reads {
            let e = try Self.run(dir, "E", args, key: "kek"), p = try Self.run(dir, "P", args)
            #expect(e.status == p.status, "\(args): \(e.stderr) | \(p.stderr)")
            #expect(e.stdout == p.stdout, "\(args)")
            #expect(!e.stdout.isEmpty, "\(args)")
        }
        // The export's content: in the plain log, in no file of the encrypted ledger.
        let content = ["1985-03-14", "HKBloodTypeONegative", "HKWeatherTemperature", "degF", "9:07:11.42 PM",
                       "HKQuantityTypeIdentifierFutureThing", "Apple Inc."].map { ($0, Array($0.utf8)) }
        let plainLog = Array(try Data(contentsOf: URL(fileURLWithPath: dir.path + "/P/ledger.log")))
        for (what, needle) in content { #expect(plainLog.firstRange(of: needle) != nil, "plain log lacks \(what)") }
        for (name, bytes) in try Self.files(dir.path + "/E") {
            for (what, needle) in content { #expect(bytes.firstRange(of: needle) == nil, "\(name) holds \(what)") }
        }
        let verify = try Self.run(dir, "E", ["verify"], key: "kek")
        #expect(verify.status == 0 && verify.stdout.contains("snapshots checked: 1"), "\(verify.stdout)\(verify.stderr)")
        // A sealed snapshot changed is refused by its tag, set aside, and the log answers.
        let path = dir.path + "/E/snapshots/" + snapshots[0]
        var sealed = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(Array(sealed[0..<8]) == Array("HLSEAL02".utf8))
        sealed[sealed.count / 2] ^= 0x10
        try Data(sealed).write(to: URL(fileURLWithPath: path))
        let reread = try Self.run(dir, "E", ["--owner", "query", "bodyMass", "--json"], key: "kek")
        let plainQuery = try Self.run(dir, "P", ["--owner", "query", "bodyMass", "--json"])
        #expect(reread.status == 0 && reread.stdout == plainQuery.stdout)
        #expect(reread.stderr.contains("does not match its tag") && reread.stderr.contains("[S10]"), "\(reread.stderr)")
        let samples = { (r: CLIResult) in r.stdout.components(separatedBy: "\"samples\":").last?.components(separatedBy: ",\"deleted\"").first }
        let (es, ps) = (try Self.run(dir, "E", ["stats", "--json"], key: "kek"), try Self.run(dir, "P", ["stats", "--json"]))
        #expect(samples(es) != nil && samples(es) == samples(ps), "\(es.stdout) | \(ps.stdout)")
    }

    @Test func withoutItsKeyOrWithAnotherNothingIsReadOrWrittenAndTheStructureStillVerifies() throws {
        let dir = TemporaryDirectory("encrypted-nokey")
        #expect(try Self.run(dir, "E", ["init", "--encrypt", "--key-file", dir.path + "/kek"]).status == 0)
        #expect(try Self.run(dir, "O", ["init", "--encrypt", "--key-file", dir.path + "/other"]).status == 0)
        try Self.saveWeight(dir, "E", key: "kek")
        let log = dir.path + "/E/ledger.log"
        var before = try Data(contentsOf: URL(fileURLWithPath: log))

        let query = try Self.run(dir, "E", ["--owner", "query", "bodyMass"])
        #expect(query.status == 2)
        #expect(query.stderr.contains("no key-encryption key was given (--key-file or HEALTHLEDGER_KEY_FILE)"), "\(query.stderr)")
        let save = try Self.run(dir, "E", ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "1", "--unit", "kg"])
        #expect(save.status == 2)
        #expect(save.stderr.contains("keyFileNotGiven: the ledger at"), "\(save.stderr)")
        let verify = try Self.run(dir, "E", ["verify"])
        #expect(verify.status == 6)
        #expect(verify.stdout.contains("`verify --structure`"), "\(verify.stdout)")
        let structure = try Self.run(dir, "E", ["verify", "--structure"])
        #expect(structure.status == 0 && structure.stdout.contains("OK: the log's structure is intact"), "\(structure.stdout)")

        // Another ledger's key file: the store says so by name; nothing is written.
        let wrongRead = try Self.run(dir, "E", ["--owner", "query", "bodyMass"], key: "other")
        #expect(wrongRead.status == 2)
        #expect(wrongRead.stderr.contains("wrong key file"), "\(wrongRead.stderr)")
        let wrongWrite = try Self.run(dir, "E", ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "1",
                                                 "--unit", "kg"], key: "other")
        #expect(wrongWrite.status == 2)
        #expect(wrongWrite.stderr.contains("wrong key file"), "\(wrongWrite.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: log)) == before)
        // A missing key file is named.
        let missing = try Self.run(dir, "E", ["--owner", "query", "bodyMass"], key: "nowhere")
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("key file \(dir.path)/nowhere is missing"), "\(missing.stderr)")

        // Proofs and checkpoints are over the stored bytes: they hold with or without the
        // key (a verifier of an encrypted ledger needs none).
        let old = try Self.run(dir, "E", ["checkpoint"])
        #expect(old.status == 0)
        try Data(old.stdout.utf8).write(to: URL(fileURLWithPath: dir.path + "/old.txt"))
        #expect(try Self.run(dir, "E", ["characteristic", "set", "bloodType", "AB+"], key: "kek").status == 0)
        let extends = try Self.run(dir, "E", ["verify", "--checkpoint", dir.path + "/old.txt"], key: "kek")
        #expect(extends.status == 0 && extends.stdout.contains("the ledger extends the checkpoint of 5 events (6 now)"), "\(extends.stdout)")
        let keyless = try Self.run(dir, "E", ["verify", "--structure", "--checkpoint", dir.path + "/old.txt"])
        #expect(keyless.status == 0 && keyless.stdout.contains("the ledger extends the checkpoint of 5 events (6 now)"), "\(keyless.stdout)")
        let proof = try Self.run(dir, "E", ["--json", "prove", "--seq", "4"])
        #expect(proof.status == 0, "\(proof.stderr)")
        _ = try #require(TransparencyCommandTests.python, "tools/verify_proof.py needs python3")
        let (status, said) = try TransparencyCommandTests.pythonCheck(proof.stdout, key: nil)
        #expect(status == 0 && said.contains("inclusion of event 4 in 6 events: OK"), "\(said)")
        before = try Data(contentsOf: URL(fileURLWithPath: log))

        // A structural fault is still found without the key (the chain covers ciphertext).
        var bytes = Array(before)
        bytes[bytes.count - 200] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: log))
        let broken = try Self.run(dir, "E", ["verify", "--structure"])
        #expect(broken.status == 6, "\(broken.stdout)")
    }

    @Test func initEncryptNeverOverwritesAKeyFileAndNeedsOne() throws {
        let dir = TemporaryDirectory("encrypted-init")
        let existing = dir.path + "/kek"
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: existing))
        let refused = try Self.run(dir, "E", ["init", "--encrypt", "--key-file", existing])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("key file \(existing) already exists: it is never overwritten"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/E/ledger.log"))
        let none = try Self.run(dir, "E", ["init", "--encrypt"])
        #expect(none.status == 2)
        #expect(none.stderr.contains("init --encrypt needs --key-file PATH"), "\(none.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/E/ledger.log"))
    }
}
