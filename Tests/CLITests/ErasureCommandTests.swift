import Foundation
import Testing
import TestSupport

/// `erase` through the binary (issue 32): after `erase --source` of the app that saved
/// 123.456 kg with the note "ZZ-ERASE-ME", nothing the key opens holds them any more —
/// not the log, not a snapshot, not a read — while a copy of the key store taken before
/// still does (what erasure cannot reach, DESIGN.md); the log stays append-only, so
/// `verify`, `verify --checkpoint` of a checkpoint taken before, `verify --structure`
/// and `prove --seq` of the erased record (checked by tools/verify_proof.py) all pass;
/// `audit` names the erasure, `log` lists what it erased, an older change anchor is
/// told of the erased sample as deleted.
@Suite struct ErasureCommandTests {
    typealias E = EncryptedLedgerCommandTests

    static func json(_ text: String) throws -> [String: Any] {
        let line = text.split(separator: "\n").last.map(String.init) ?? ""
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(object as? [String: Any], "\(text)")
    }

    @Test func erasingASourceLeavesNothingTheKeyOpensAndTheHistoryStillVerifies() throws {
        let dir = TemporaryDirectory("erase-source")
        #expect(try E.run(dir, "E", ["init", "--encrypt", "--key-file", dir.path + "/kek"]).status == 0)
        try E.saveWeight(dir, "E", key: "kek")
        let other = "com.example.other"
        for args in [["--app", other, "app", "register", "--name", "Other", "--share-purpose", "s", "--read-purpose", "r"],
                     ["--app", other, "request", "--share", "bodyMass", "--read", "bodyMass"],
                     ["authorize", "--app", other, "--share", "bodyMass", "--read", "bodyMass"],
                     ["save", "--app", other, "--type", "bodyMass", "--value", "70.5", "--unit", "kg", "--start", "2026-11-04T08:00:00Z"]] {
            let r = try E.run(dir, "E", args, key: "kek")
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
        let weight = "0D15EA5E-0000-4000-8000-000000000032"
        // Before: readable with the key, in no file without it; a snapshot and a
        // checkpoint taken; a copy of the key store kept (a backup).
        #expect(try E.run(dir, "E", ["--owner", "query", "bodyMass", "--json"], key: "kek").stdout.contains("ZZ-ERASE-ME"))
        let log = Array(try Data(contentsOf: URL(fileURLWithPath: dir.path + "/E/ledger.log")))
        for (what, needle) in E.needles { #expect(log.firstRange(of: needle) == nil, "ledger.log holds the \(what)") }
        #expect(try E.run(dir, "E", ["replay", "--write-snapshot"], key: "kek").status == 0)
        let old = try E.run(dir, "E", ["checkpoint"])
        try Data(old.stdout.utf8).write(to: URL(fileURLWithPath: dir.path + "/old.txt"))
        let backup = try Data(contentsOf: URL(fileURLWithPath: dir.path + "/E/keys/keys.bin"))
        let anchor = try Self.json(try E.run(dir, "E", ["--owner", "changes", "bodyMass", "--json"], key: "kek").stdout)["anchor"] as? String

        let erased = try E.run(dir, "E", ["--json", "erase", "--source", "com.example.scale", "--reason", "the user asked (Art. 17)"], key: "kek")
        #expect(erased.status == 0, "\(erased.stderr)")
        let outcome = try Self.json(erased.stdout)
        #expect(outcome["samplesErased"] as? Int == 1 && outcome["scope"] as? String == "source com.example.scale", "\(erased.stdout)")
        let sequence = try #require(outcome["sequence"] as? Int)

        // Nothing the key opens holds the weight: reads, the whole log, every file.
        let query = try E.run(dir, "E", ["--owner", "query", "bodyMass", "--json"], key: "kek")
        #expect(query.status == 0 && !query.stdout.contains("123.456") && query.stdout.contains("70.5"), "\(query.stdout)")
        let everything = try E.run(dir, "E", ["log", "--json"], key: "kek")
        #expect(everything.status == 0 && !everything.stdout.contains("ZZ-ERASE-ME"), "\(everything.stderr)")
        #expect(everything.stdout.contains("\"erasedBy\":\(sequence)"))
        for (name, bytes) in try E.files(dir.path + "/E") {
            for (what, needle) in E.needles { #expect(bytes.firstRange(of: needle) == nil, "\(name) holds the \(what)") }
        }
        let snapshots = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/E/snapshots")
        #expect(snapshots == [String(format: "snapshot-%020d.bin", sequence)], "\(snapshots)")
        // The app stays registered; the owner's own data stays.
        #expect(try E.run(dir, "E", ["characteristic", "get", "dateOfBirth"], key: "kek").stdout.contains("1980-05-17"))

        // The history still verifies, with and without the key, against the old checkpoint.
        let verify = try E.run(dir, "E", ["verify"], key: "kek")
        #expect(verify.status == 0 && verify.stdout.contains("OK: the ledger is intact"), "\(verify.stdout)\(verify.stderr)")
        let extends = try E.run(dir, "E", ["verify", "--checkpoint", dir.path + "/old.txt"], key: "kek")
        #expect(extends.status == 0 && extends.stdout.contains("the ledger extends the checkpoint"), "\(extends.stdout)\(extends.stderr)")
        let structure = try E.run(dir, "E", ["verify", "--structure", "--checkpoint", dir.path + "/old.txt"])
        #expect(structure.status == 0, "\(structure.stdout)\(structure.stderr)")
        let erasedSaves = everything.stdout.split(separator: "\n").compactMap { line -> Int? in
            guard line.contains("\"erasedBy\"") else { return nil }
            return (try? Self.json(String(line)))?["seq"] as? Int
        }
        let erasedSave = try #require(erasedSaves.first)
        if TransparencyCommandTests.python != nil {
            for seq in [sequence, erasedSave] {  // the erasure, and the erased save
                let proof = try E.run(dir, "E", ["--json", "prove", "--seq", String(seq)])
                #expect(proof.status == 0, "\(proof.stderr)")
                let (status, said) = try TransparencyCommandTests.pythonCheck(proof.stdout, key: nil)
                #expect(status == 0 && said.contains("inclusion of event \(seq) in \(sequence) events: OK"), "\(said)")
            }
        }
        let line = try E.run(dir, "E", ["log", "--from", String(erasedSave), "--to", String(erasedSave)], key: "kek")
        #expect(line.stdout.contains("samplesSaved\t-\t[erased at event \(sequence)]"), "\(line.stdout)\(line.stderr)")

        // audit names the erasure; the change feed tells an anchor issued before it of
        // the erased weight as deleted, then everything current (the other app's weight).
        let audit = try E.run(dir, "E", ["audit", weight], key: "kek")
        #expect(audit.status == 0 && audit.stdout.contains("erased (source com.example.scale), reason: the user asked (Art. 17)"),
                "\(audit.stdout)\(audit.stderr)")
        let changes = try E.run(dir, "E", ["--owner", "changes", "bodyMass", "--anchor", try #require(anchor)], key: "kek")
        let lines = changes.stdout.split(separator: "\n").map(String.init)
        #expect(changes.status == 0 && lines.count == 3, "\(changes.stdout)\(changes.stderr)")
        #expect(lines.first == "deleted  \(weight)  HKQuantityTypeIdentifierBodyMass  erased at event \(sequence)", "\(lines)")
        #expect(lines.dropFirst().first?.hasPrefix("added ") == true && lines.dropFirst().first?.contains("70.5") == true, "\(lines)")
        #expect(lines.last?.hasPrefix("anchor: ") == true)

        // Erased for good: nothing left to erase, and the key store written since holds
        // none of the destroyed keys (it changed; the one before did hold them).
        let again = try E.run(dir, "E", ["erase", "--source", "com.example.scale", "--reason", "again"], key: "kek")
        #expect(again.status == 4 && again.stderr.contains("nothing to erase"), "\(again.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.path + "/E/keys/keys.bin")) != backup)
    }

    @Test func aCutErasureOfThreeDaysLeavesExactlyTheOtherSamplesReadable() throws {
        let dir = TemporaryDirectory("erase-days")
        #expect(try E.run(dir, "E", ["init", "--encrypt", "--key-file", dir.path + "/kek"]).status == 0)
        let app = "com.example.scale"
        var commands = [["--app", app, "app", "register", "--name", "Scale", "--share-purpose", "s", "--read-purpose", "r"],
                        ["--app", app, "request", "--share", "bodyMass,heartRate", "--read", "bodyMass"],
                        ["authorize", "--app", app, "--share", "bodyMass,heartRate", "--read", "bodyMass"],
                        ["timezone", "America/New_York"]]
        for day in 1...10 {
            commands.append(["save", "--app", app, "--type", "bodyMass", "--value", String(80 + day), "--unit", "kg",
                             "--start", String(format: "2026-11-%02dT12:00:00Z", day)])
        }
        commands.append(["save", "--app", app, "--type", "heartRate", "--value", "61", "--unit", "count/min", "--start", "2026-11-04T12:00:00Z"])
        for args in commands {
            let r = try E.run(dir, "E", args, key: "kek")
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
        // Three days in the owner's zone (New York): 3, 4 and 5 November.
        let erased = try E.run(dir, "E", ["erase", "--type", "bodyMass", "--from", "2026-11-03", "--to", "2026-11-05", "--reason", "three days"], key: "kek")
        #expect(erased.status == 0, "\(erased.stderr)")
        #expect(erased.stdout.contains(": 3 samples (3 sealed in all)") && erased.stdout.contains("7 samples of the cut months kept under new keys"),
                "\(erased.stdout)")
        let query = try E.run(dir, "E", ["--owner", "query", "bodyMass", "--json"], key: "kek")
        let days = query.stdout.split(separator: "\n").compactMap { (try? Self.json(String($0)))?["start"] as? String }.sorted()
        #expect(days == ["2026-11-01", "2026-11-02", "2026-11-06", "2026-11-07", "2026-11-08", "2026-11-09", "2026-11-10"].map { $0 + "T12:00:00Z" },
                "\(query.stdout)")
        #expect(!query.stdout.contains("\"value\":83") && !query.stdout.contains("\"value\":84") && !query.stdout.contains("\"value\":85"))
        #expect(try E.run(dir, "E", ["--owner", "query", "heartRate", "--json"], key: "kek").stdout.contains("\"value\":61"))
        let verify = try E.run(dir, "E", ["verify"], key: "kek")
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let usage = try E.run(dir, "E", ["erase", "--type", "bodyMass", "--from", "2026-11-03", "--reason", "x"], key: "kek")
        #expect(usage.status == 2 && usage.stderr.contains("give --from D and --to D together"), "\(usage.stderr)")
    }

    @Test func erasingAnImportTakesWhatItBroughtAndAPlainLedgerHasNothingToErase() throws {
        let dir = TemporaryDirectory("erase-import")
        try SmallExport.write(in: dir.path)
        #expect(try E.run(dir, "E", ["init", "--encrypt", "--key-file", dir.path + "/kek"]).status == 0)
        #expect(try E.run(dir, "E", ["import-apple-health", "export.xml"], key: "kek").status == 0)
        let started = try E.run(dir, "E", ["log", "--json"], key: "kek").stdout.split(separator: "\n").first { $0.contains("\"importStarted\"") }
        let startLine = String(try #require(started))
        let importId = try #require(try Self.json(startLine)["importId"] as? String)
        #expect(try E.run(dir, "E", ["--owner", "query", "bodyMass", "--json"], key: "kek").stdout.contains("\"value\""))
        #expect(try E.run(dir, "E", ["--owner", "profile", "--json"], key: "kek").stdout.contains("\"bloodType\":\"O-\""))

        let erased = try E.run(dir, "E", ["erase", "--import", importId, "--reason", "wrong phone"], key: "kek")
        #expect(erased.status == 0 && erased.stdout.hasPrefix("erased import \(importId.lowercased()) at event "), "\(erased.stdout)\(erased.stderr)")
        for type in ["bodyMass", "heartRateVariabilitySDNN", "HKCorrelationTypeIdentifierBloodPressure", "HKWorkoutTypeIdentifier"] {
            let q = try E.run(dir, "E", ["--owner", "query", type, "--json"], key: "kek")
            #expect(q.status == 0 && !q.stdout.contains("\"uuid\""), "\(type): \(q.stdout)")
        }
        let profile = try E.run(dir, "E", ["--owner", "profile", "--json"], key: "kek")
        #expect(profile.status == 0 && profile.stdout.contains("\"bloodType\":\"Not Set\""), "\(profile.stdout)")
        // The import's start is folded as what replay needs of it: its id, no <Me>.
        let log = try E.run(dir, "E", ["log"], key: "kek")
        #expect(log.status == 0 && log.stdout.contains("importStarted") && log.stdout.contains("[erased at event"), "\(log.stderr)")
        #expect(!log.stdout.contains("export.xml"), "the file name is erased too")
        let verify = try E.run(dir, "E", ["verify"], key: "kek")
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        // The same export imported again: its UUIDs come back (an erased UUID may).
        let again = try E.run(dir, "E", ["import-apple-health", "export.xml"], key: "kek")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try E.run(dir, "E", ["--owner", "profile", "--json"], key: "kek").stdout.contains("\"bloodType\":\"O-\""))
        #expect(try E.run(dir, "E", ["verify"], key: "kek").status == 0)

        #expect(try E.run(dir, "P", ["init"]).status == 0)
        let plain = try E.run(dir, "P", ["erase", "--all", "--reason", "x"])
        #expect(plain.status == 2 && plain.stderr.contains("erasureRefused: the ledger is not encrypted"), "\(plain.stderr)")
        let usage = try E.run(dir, "E", ["erase", "--all", "--type", "bodyMass", "--reason", "x"], key: "kek")
        #expect(usage.status == 2, "\(usage.stderr)")
    }
}
