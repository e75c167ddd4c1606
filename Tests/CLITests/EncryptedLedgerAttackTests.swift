import Foundation
import LedgerLog
import Testing
import TestSupport

/// Attacks on encrypted ledgers (issue 32) through the binary: content that reaches
/// the ledger folder in the clear, forged plain records read as the owner's data, and
/// answers that differ from a plain ledger's.
@Suite struct EncryptedLedgerAttackTests {
    typealias E = EncryptedLedgerCommandTests

    /// Ledgers `E` (encrypted, key file `kek`) and `P` (plain) in `dir`, each with app
    /// com.x (ordinal 1) allowed to share and read body mass and heart rate.
    static func ledgers(_ dir: TemporaryDirectory) throws {
        let created = try E.run(dir, "E", ["init", "--encrypt", "--key-file", dir.path + "/kek"])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(try E.run(dir, "P", ["init"]).status == 0)
        for (ledger, key) in [("E", "kek" as String?), ("P", nil)] {
            for args in [["--app", "com.x", "app", "register", "--name", "X", "--share-purpose", "s", "--read-purpose", "r"],
                         ["--app", "com.x", "request", "--share", "bodyMass,heartRate", "--read", "bodyMass,heartRate"],
                         ["authorize", "--app", "com.x", "--share", "bodyMass,heartRate", "--read", "bodyMass,heartRate"]] {
                let r = try E.run(dir, ledger, args, key: key)
                #expect(r.status == 0, "\(ledger) \(args): \(r.stderr)")
            }
        }
    }

    /// `ingest` of `lines` as com.x into `ledger`.
    static func ingest(_ dir: TemporaryDirectory, _ ledger: String, _ lines: [String], key: String?) throws {
        var environment: [String: String] = [:]
        if let key { environment["HEALTHLEDGER_KEY_FILE"] = dir.path + "/" + key }
        let r = try CLIRunner.run(["--ledger", dir.path + "/" + ledger, "ingest", "--app", "com.x"],
                                  stdin: lines.joined(separator: "\n") + "\n", environment: environment,
                                  currentDirectory: dir.url)
        #expect(r.status == 0, "\(ledger): \(r.stderr)")
    }

    /// A record appended to an encrypted ledger's log without its key, as anyone who may
    /// write the folder can (a plain record, its CRC and chain link made by the log's own
    /// writer), must not be read as the owner's health data: in a version 2 log a
    /// health-bearing event (a save) is sealed, and an unsealed one is forged. Found: the
    /// forged weight is answered by `query` and `latest` like a real one, and `verify`
    /// passes.
    /// K4: a plain record of a sealed kind in an encrypted ledger is malformed.
    @Test func aPlainSaveForgedIntoAnEncryptedLedgerIsNotReadAsTheOwnersData() async throws {
        let dir = TemporaryDirectory("encrypted-forged-plain")
        try Self.ledgers(dir)
        try Self.ingest(dir, "E", [#"{"type":"bodyMass","value":70,"unit":"kg","start":"2026-01-05T08:00:00Z"}"#], key: "kek")
        // The forged save: as the plain ledger records it (app ordinal 1 in both).
        let forged = "0F0F0F0F-0000-4000-8000-000000000001"
        try Self.ingest(dir, "P", [#"{"type":"bodyMass","value":99.5,"unit":"kg","start":"2026-01-06T08:00:00Z","uuid":""# + forged + #""}"#],
                        key: nil)
        let (record, _, _) = try RecordDamageCommandTests.record(
            holding: withUnsafeBytes(of: (99.5 as Double).bitPattern.littleEndian, Array.init),
            in: PosixFileSystem(path: dir.path + "/P"))
        // Appended to E without any key: the writer of a version 2 log takes a plain record.
        let writer = try LogWriter.open(PosixFileSystem(path: dir.path + "/E"), options: LogWriterOptions())
        _ = try await writer.append([LogRecord(kind: record.kind, kindVersion: record.kindVersion, payload: record.payload)])
        try await writer.close()

        for args in [["--owner", "query", "bodyMass", "--json"], ["--owner", "latest", "bodyMass", "--json"]] {
            let r = try E.run(dir, "E", args, key: "kek")
            #expect(!r.stdout.contains(forged), "\(args): the forged sample is answered: \(r.stdout)")
            #expect(r.status == 6, "\(args): \(r.status) \(r.stderr)")
        }
        let verify = try E.run(dir, "E", ["verify"], key: "kek")
        #expect(verify.status == 6, "verify passes a forged plain save: \(verify.stdout)")
    }

    /// `delete` of a sample saved with a sync identifier: the identifier is the sample's
    /// metadata (`HKMetadataKeySyncIdentifier`), sealed in its save, and must not reach
    /// the folder in the clear through the deletion's tombstone. Found: `samplesDeleted`
    /// is a plain record and holds the identifier as text.
    @Test func deletingASampleLeavesNoneOfItsMetadataInTheClear() throws {
        let dir = TemporaryDirectory("encrypted-delete-sync")
        try Self.ledgers(dir)
        let uuid = "5EC2E7AA-0000-4000-8000-000000000001"
        let line = #"{"type":"bodyMass","value":80,"unit":"kg","start":"2026-03-05T08:00:00Z","uuid":""# + uuid
            + #"","metadata":{"HKMetadataKeySyncIdentifier":"ZZ-SYNC-2026-03-05-80kg","HKMetadataKeySyncVersion":1}}"#
        let needle = Array("ZZ-SYNC-2026-03-05-80kg".utf8)
        for (ledger, key) in [("E", "kek" as String?), ("P", nil)] {
            try Self.ingest(dir, ledger, [line], key: key)
            if ledger == "E" {
                for (name, bytes) in try E.files(dir.path + "/E") {
                    #expect(bytes.firstRange(of: needle) == nil, "\(name) holds the sync identifier before the delete")
                }
            }
            let r = try E.run(dir, ledger, ["--owner", "delete", uuid], key: key)
            #expect(r.status == 0, "\(ledger): \(r.stderr)")
        }
        let plainLog = Array(try Data(contentsOf: URL(fileURLWithPath: dir.path + "/P/ledger.log")))
        #expect(plainLog.firstRange(of: needle) != nil, "the control: the plain log holds it")
        for (name, bytes) in try E.files(dir.path + "/E") {
            #expect(bytes.firstRange(of: needle) == nil, "\(name) holds the deleted sample's sync identifier in the clear")
        }
    }

    /// One `ingest` batch spanning two months and two types is one save: the change
    /// feed lists its samples "in log order", as saved, on a plain ledger. On an
    /// encrypted one the save is split into a record per key scope (FORMAT Part 2,
    /// "Sealed kinds"), so log order is by scope: the same changes, grouped by (type,
    /// month) in the order of each group's first sample. (Found by the attack; kept as
    /// the documented order: keeping save order would cost a record per run of
    /// consecutive samples of one scope — about one per sample for an ingest of
    /// shuffled dates.)
    @Test func theChangeFeedOfASplitSaveListsItsSamplesByScope() throws {
        let dir = TemporaryDirectory("encrypted-split-order")
        try Self.ledgers(dir)
        let lines = [
            #"{"type":"bodyMass","value":70,"unit":"kg","start":"2026-01-05T08:00:00Z","uuid":"00000000-0000-4000-8000-000000000001"}"#,
            #"{"type":"bodyMass","value":71,"unit":"kg","start":"2026-02-05T08:00:00Z","uuid":"00000000-0000-4000-8000-000000000002"}"#,
            #"{"type":"heartRate","value":60,"unit":"count/min","start":"2026-01-05T08:00:00Z","uuid":"00000000-0000-4000-8000-000000000003"}"#,
            #"{"type":"bodyMass","value":72,"unit":"kg","start":"2026-01-06T08:00:00Z","uuid":"00000000-0000-4000-8000-000000000004"}"#,
        ]
        try Self.ingest(dir, "E", lines, key: "kek")
        try Self.ingest(dir, "P", lines, key: nil)
        let changes = { (ledger: String, key: String?) throws -> [String] in
            let r = try E.run(dir, ledger, ["changes", "bodyMass,heartRate", "--owner", "--json"], key: key)
            #expect(r.status == 0, "\(r.stderr)")
            return r.stdout.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("{\"anchor\"") }
        }
        let plain = try changes("P", nil), encrypted = try changes("E", "kek")
        #expect(plain.count == 4)
        #expect(plain.map { $0.contains("000000000001") } == [true, false, false, false], "\(plain)")
        // Scopes in order of first appearance: (bodyMass, Jan) = 1, 4; (bodyMass, Feb) = 2; (heartRate, Jan) = 3.
        #expect(encrypted == [plain[0], plain[3], plain[1], plain[2]], "\(encrypted)")
    }

    /// An import of a newer export that lacks an activity summary the older one brought
    /// removes it (`absentFromExport`). The summary was sealed; the day it was recorded
    /// for is the summary's content and must not reach the folder in the clear through
    /// its removal. Found: `absentFromExport` is a plain record holding the day
    /// (varint year, month, day), and the export's date as text.
    @Test func aNewerExportsRemovalsLeaveNoDayInTheClear() throws {
        let dir = TemporaryDirectory("encrypted-absent-days")
        try SmallExport.write(in: dir.path)
        let summary = SmallExport.xml.split(separator: "\n").first { $0.contains("<ActivitySummary dateComponents=\"2019-05-05\"") }
        let line = try #require(summary, "the small export has the 2019-05-05 summary")
        let newer = SmallExport.xml.replacingOccurrences(of: String(line) + "\n", with: "")
            .replacingOccurrences(of: "2019-06-17 21:07:11 -0400", with: "2019-07-17 21:07:11 -0400")
        #expect(newer != SmallExport.xml)
        _ = try SmallExport.write(newer, named: "newer.xml", in: dir.path)
        #expect(try E.run(dir, "E", ["init", "--encrypt", "--key-file", dir.path + "/kek"]).status == 0)
        // One removed day, as absentFromExport encodes it: count 1, year 2019, 5, 5.
        let day: [UInt8] = [0x01, 0xE3, 0x0F, 0x05, 0x05]
        for (ledger, key) in [("E", "kek" as String?), ("P", nil)] {
            let first = try E.run(dir, ledger, ["import-apple-health", "export.xml"], key: key)
            #expect(first.status == 0, "\(ledger): \(first.stderr)")
            let second = try E.run(dir, ledger, ["import-apple-health", "newer.xml"], key: key)
            #expect(second.status == 0, "\(ledger): \(second.stderr)")
            let activity = try E.run(dir, ledger, ["--owner", "activity", "--from", "2019-05-01", "--to", "2019-05-31", "--json"], key: key)
            #expect(activity.status == 0 && !activity.stdout.contains("2019-05-05"), "\(ledger): the summary is removed: \(activity.stdout)")
        }
        let plainLog = Array(try Data(contentsOf: URL(fileURLWithPath: dir.path + "/P/ledger.log")))
        #expect(plainLog.firstRange(of: day) != nil, "the control: the plain log holds the removed day")
        for (name, bytes) in try E.files(dir.path + "/E") {
            #expect(bytes.firstRange(of: day) == nil, "\(name) holds the removed summary's day in the clear")
            #expect(bytes.firstRange(of: Array("2019-07-17 21:07:11".utf8)) == nil, "\(name) holds the export's date in the clear")
        }
    }

    /// An import registers every source of the export as an app, and a registration is a
    /// plain record: the source's name reaches the log in the clear. In a real export that
    /// name is often the person's own ("Apple Watch de Ana", "Jonathan’s iPhone") or names
    /// a medical device (a blood pressure monitor, "Omron"), and an erasure of that
    /// source can never remove it from the append-only log. Found: both names are in
    /// `ledger.log` of the encrypted ledger.
    @Test func anImportedSourcesNameIsNotInTheClear() throws {
        let dir = TemporaryDirectory("encrypted-source-names")
        try SmallExport.write(in: dir.path)
        #expect(try E.run(dir, "E", ["init", "--encrypt", "--key-file", dir.path + "/kek"]).status == 0)
        let r = try E.run(dir, "E", ["import-apple-health", "export.xml"], key: "kek")
        #expect(r.status == 0, "\(r.stderr)")
        for (name, bytes) in try E.files(dir.path + "/E") {
            for needle in ["Apple Watch de Ana", "Omron"] {
                #expect(bytes.firstRange(of: Array(needle.utf8)) == nil, "\(name) holds the source name \(needle) in the clear")
            }
        }
    }

    /// A key store that group or others may read is the owner's to mend (chmod): a write
    /// says so with exit 2 (usage). A read must say the same, not call the ledger
    /// damaged. Found: `query` exits 6 ("damaged") naming the record, `ingest` exits 2.
    @Test func aKeyStoreOthersMayReadIsAUsageErrorForReadsAsForWrites() throws {
        let dir = TemporaryDirectory("encrypted-keystore-mode")
        try Self.ledgers(dir)
        try Self.ingest(dir, "E", [#"{"type":"bodyMass","value":70,"unit":"kg","start":"2026-01-05T08:00:00Z"}"#], key: "kek")
        let store = dir.path + "/E/keys/keys.bin"
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: store)
        let write = try CLIRunner.run(["--ledger", dir.path + "/E", "ingest", "--app", "com.x"],
                                      stdin: #"{"type":"bodyMass","value":71,"unit":"kg","start":"2026-01-06T08:00:00Z"}"# + "\n",
                                      environment: ["HEALTHLEDGER_KEY_FILE": dir.path + "/kek"], currentDirectory: dir.url)
        #expect(write.status == 2 && write.stderr.contains("mode 0644"), "\(write.status) \(write.stderr)")
        let read = try E.run(dir, "E", ["--owner", "query", "bodyMass", "--json"], key: "kek")
        #expect(read.stderr.contains("mode 0644"), "\(read.stderr)")
        #expect(read.status == 2, "a read calls a key store others may read \(read.status): \(read.stderr)")
    }

    /// `copy SRC DST` says it copied and verified the ledger, and the original may then be
    /// thrown away. Of an encrypted ledger the copy must read with the same key file (its
    /// key store copied), or the copy must be refused. Found: the log alone is copied,
    /// exit 0, and every read of the copy fails (`key store C/keys/keys.bin is missing`),
    /// with the right key file or any other: the copy is lost data.
    @Test func aCopyOfAnEncryptedLedgerReadsWithItsKeyFile() throws {
        let dir = TemporaryDirectory("encrypted-copy")
        try Self.ledgers(dir)
        try Self.ingest(dir, "E", [#"{"type":"bodyMass","value":70,"unit":"kg","start":"2026-01-05T08:00:00Z"}"#], key: "kek")
        let copy = try E.run(dir, "E", ["copy", dir.path + "/E", dir.path + "/C"], key: "kek")
        let original = try E.run(dir, "E", ["--owner", "query", "bodyMass", "--json"], key: "kek")
        #expect(original.status == 0 && original.stdout.contains("\"value\":70"), "\(original.stderr)")
        if copy.status == 0 {
            let copied = try E.run(dir, "C", ["--owner", "query", "bodyMass", "--json"], key: "kek")
            #expect(copied.status == 0, "the copy does not read: \(copied.stderr)")
            #expect(copied.stdout == original.stdout)
        } else {
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/C/ledger.log"), "a refused copy writes nothing")
        }
    }

    /// Each sealed record of `log`: its kind, its key id, its recordedAt (FORMAT.md Part 1:
    /// batches from offset 64, a record's flags at 28, a sealed payload's key id first).
    static func sealedRecords(_ log: [UInt8]) -> [(kind: UInt16, keyId: UInt64, recordedAt: Int64)] {
        func u16(_ at: Int) -> UInt16 { log.withUnsafeBytes { UInt16(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt16.self)) } }
        func u32(_ at: Int) -> UInt32 { log.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt32.self)) } }
        func u64(_ at: Int) -> UInt64 { log.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt64.self)) } }
        var out: [(UInt16, UInt64, Int64)] = []
        var at = 64
        while at + 40 <= log.count, u32(at) == 0x3142_4C48 {
            let length = Int(u32(at + 4)), count = Int(u32(at + 16))
            var o = at + 40
            for _ in 0..<count {
                if u32(o + 28) & 1 == 1 { out.append((u16(o + 24), u64(o + 32), Int64(bitPattern: u64(o + 16)))) }
                o += 32 + Int(u32(o + 4))
            }
            at += length
        }
        return out
    }

    /// DESIGN.md: "erasing one import (every key of kinds 2 and 3 naming it) is whole
    /// keys", and the issue asks that everything from one import can be erased. So no key
    /// that seals what an import brought may seal anything from outside it. Found: the
    /// import's characteristics (its `<Me>` birth date, sex, blood type) and activity
    /// summaries are sealed under the owner's keys (app 0, type, month recorded), the
    /// same keys that seal the owner's own `characteristic set` that month: erasing the
    /// import either leaves its birth date readable or destroys the owner's own.
    @Test func noKeyThatSealsAnImportsContentSealsAnythingElse() throws {
        let dir = TemporaryDirectory("encrypted-import-scope")
        try SmallExport.write(in: dir.path)
        #expect(try E.run(dir, "E", ["init", "--encrypt", "--key-file", dir.path + "/kek"]).status == 0)
        let imported = try E.run(dir, "E", ["import-apple-health", "export.xml"], key: "kek")
        #expect(imported.status == 0, "\(imported.stderr)")
        let importEnd = try #require(Self.sealedRecords(Array(try Data(contentsOf: URL(fileURLWithPath: dir.path + "/E/ledger.log")))).count as Int?)
        let set = try E.run(dir, "E", ["characteristic", "set", "dateOfBirth", "1990-01-01"], key: "kek")
        #expect(set.status == 0, "\(set.stderr)")
        let records = Self.sealedRecords(Array(try Data(contentsOf: URL(fileURLWithPath: dir.path + "/E/ledger.log"))))
        let inside = records[..<importEnd], outside = records[importEnd...]
        #expect(inside.contains { $0.kind == 4 } && inside.contains { $0.kind == 8 }, "the import set characteristics and summaries")
        try #require(outside.count == 1 && outside.first?.kind == 4)
        let month = { (ns: Int64) in Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!,
            from: Date(timeIntervalSince1970: Double(ns) / 1e9)).month }
        // (Both recorded in one UTC month, unless the test ran across a month's end.)
        try #require(month(outside.first!.recordedAt) == month(inside.last!.recordedAt), "ran across a month's end: run again")
        let importKeys = Set(inside.map(\.keyId))
        for record in outside {
            #expect(!importKeys.contains(record.keyId),
                    "the owner's own characteristic (kind \(record.kind)) is sealed under key \(record.keyId), which seals the import's too")
        }
    }
}
