import Foundation
import LedgerChecksums
import LedgerLog
import Synchronization
import Testing
import TestSupport

/// Attacks on `erase` (issue 32, crypto-shredding) through the binary, as an attacker
/// who may write the ledger folder but holds no key, and as a demanding owner:
/// forged and changed `erased` records, a torn erasure batch, key stores deleted or
/// restored from backups, concurrent writers and readers, odd input, erased UUIDs
/// saved again, and every command after `erase --all`.
///
/// What each test expects is what DESIGN.md ("Keys and erasure") and events/FORMAT.md
/// (kind 27, rules K4, R8 and E16, Part 5) promise; where they are silent, what a
/// demanding user may expect, said in the test's comment. Eight of them failed when
/// written ("Found: …" says what they found); each defect was mended since (the
/// erasure lists its records, E16; a restored key store is made to issue past erased
/// ids, Y3; ranges end within D1 and an erasure must read back before it is written;
/// an erasure no longer skips UUIDs erased before; `diff` and the report read through
/// the erasure index; an aborted import is erased by its id).
///
/// Tagged `sweep`: nineteen tests of a few dozen processes each, run by every plain
/// `swift test` and left out of CI's sanitizer builds, where ErasureCommandTests and
/// ErasureTests reach the same code (CI's 25-minute budget).
@Suite(.tags(.sweep), .disabled(if: Sweeps.leftOut, Sweeps.reason)) struct ErasureAttackTests {
    typealias E = EncryptedLedgerCommandTests

    static let app = "com.x"
    static let weight = "0D15EA5E-0000-4000-8000-000000000032"

    /// An encrypted ledger `E` (key file `kek`) in `dir` with app com.x (ordinal 1)
    /// allowed to share and read body mass, heart rate and step count.
    static func ledger(_ dir: TemporaryDirectory) throws {
        let created = try E.run(dir, "E", ["init", "--encrypt", "--key-file", dir.path + "/kek"])
        try #require(created.status == 0, "\(created.stderr)")
        let types = "bodyMass,heartRate,stepCount"
        for args in [["--app", app, "app", "register", "--name", "X", "--share-purpose", "s", "--read-purpose", "r"],
                     ["--app", app, "request", "--share", types, "--read", types],
                     ["authorize", "--app", app, "--share", types, "--read", types]] {
            let r = try E.run(dir, "E", args, key: "kek")
            try #require(r.status == 0, "\(args): \(r.stderr)")
        }
    }

    /// com.x saves one sample; returns its UUID.
    @discardableResult
    static func save(_ dir: TemporaryDirectory, _ type: String, _ value: String, _ unit: String, at start: String,
                     uuid: String? = nil, meta: String? = nil, ledger: String = "E") throws -> String {
        var args = ["save", "--app", app, "--type", type, "--value", value, "--unit", unit, "--start", start]
        if type == "stepCount" { args += ["--end", start.replacingOccurrences(of: "T08:", with: "T09:")] }
        if let uuid { args += ["--uuid", uuid] }
        if let meta { args += ["--meta", meta] }
        let r = try E.run(dir, ledger, args, key: "kek")
        try #require(r.status == 0, "\(args): \(r.stderr)")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `healthledger --ledger dir/ledger args…` with the key file `kek`.
    static func hl(_ dir: TemporaryDirectory, _ args: [String], ledger: String = "E", key: String? = "kek") throws -> CLIResult {
        try E.run(dir, ledger, args, key: key)
    }

    static func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
    static func write(_ bytes: [UInt8], _ path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }

    /// A defined exit status (0–7, `healthledger --help`), not a trap (a signal).
    static func defined(_ r: CLIResult) -> Bool { (0...7).contains(r.status) }

    // MARK: The log's bytes (events/FORMAT.md Part 1), for an attacker without keys

    struct RawRecord {
        let offset: Int, payloadLength: Int, sequence: UInt64, recordedAt: Int64, kind: UInt16, flags: UInt32
        let keyId: UInt64?
        var payloadOffset: Int { offset + 32 }
    }

    struct RawBatch {
        let offset: Int, length: Int, firstSequence: UInt64, isSeal: Bool, records: [RawRecord]
        var end: Int { offset + length }
    }

    static func u16(_ b: [UInt8], _ at: Int) -> UInt16 { UInt16(b[at]) | UInt16(b[at + 1]) << 8 }
    static func u32(_ b: [UInt8], _ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(b[at + $1]) << (8 * UInt32($1)) } }
    static func u64(_ b: [UInt8], _ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(b[at + $1]) << (8 * UInt64($1)) } }
    static func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }

    /// Every batch of `log` (a v2 log: a record's flags word at 28, a sealed payload's key id first).
    static func batches(_ log: [UInt8]) -> [RawBatch] {
        var out: [RawBatch] = []
        var at = 64
        while at + 72 <= log.count, u32(log, at) == 0x3142_4C48 {
            let length = Int(u32(log, at + 4)), count = Int(u32(log, at + 16))
            guard at + length <= log.count else { break }
            var records: [RawRecord] = []
            var o = at + 40
            for _ in 0..<count {
                let flags = u32(log, o + 28)
                records.append(RawRecord(offset: o, payloadLength: Int(u32(log, o + 4)), sequence: u64(log, o + 8),
                                         recordedAt: Int64(bitPattern: u64(log, o + 16)), kind: u16(log, o + 24), flags: flags,
                                         keyId: flags & 1 == 1 ? u64(log, o + 32) : nil))
                o += 32 + Int(u32(log, o + 4))
            }
            out.append(RawBatch(offset: at, length: length, firstSequence: u64(log, at + 8), isSeal: u16(log, at + 20) & 1 == 1,
                                records: records))
            at += length
        }
        return out
    }

    static func records(_ log: [UInt8]) -> [RawRecord] { batches(log).flatMap(\.records) }

    /// R1: the record's CRC made to fit its (changed) bytes.
    static func fixCRC(_ log: inout [UInt8], _ r: RawRecord) {
        let crc = CRC32C.checksum(Array(log[r.offset + 4 ..< r.payloadOffset + r.payloadLength]))
        log.replaceSubrange(r.offset ..< r.offset + 4, with: le(crc))
    }

    /// B8: every link from the batch at `offset` on made again (no key needed).
    static func relink(_ log: inout [UInt8], from offset: Int) {
        let all = batches(log)
        for (i, b) in all.enumerated() where b.end > offset {
            let previous = i == 0 ? LedgerChecksums.SHA256.hash(Array(log[0..<64])).array : Array(log[b.offset - 32 ..< b.offset])
            let link = LedgerChecksums.SHA256.hash(previous + Array(log[b.offset ..< b.end - 32])).array
            log.replaceSubrange(b.end - 32 ..< b.end, with: link)
        }
    }

    /// A batch of one record appended after the last one, with its CRC and link.
    static func appendBatch(_ log: inout [UInt8], kind: UInt16, version: UInt16, flags: UInt32, payload: [UInt8]) {
        let all = batches(log)
        let last = all.last!
        let next = last.isSeal ? last.firstSequence : last.firstSequence + UInt64(last.records.count)
        let recordedAt = (records(log).last?.recordedAt ?? 0) + 1_000
        var record = [UInt8](repeating: 0, count: 4) + le(UInt32(payload.count)) + le(next) + le(recordedAt)
        record += le(kind) + le(version) + le(flags) + payload
        record.replaceSubrange(0..<4, with: le(CRC32C.checksum(Array(record[4...]))))
        let offset = log.count
        var header = le(UInt32(0x3142_4C48)) + le(UInt32(40 + record.count + 32)) + le(next) + le(UInt32(1))
        header += le(UInt16(0)) + le(UInt16(0)) + le(UInt64(offset)) + le(UInt32(0))
        header += le(CRC32C.checksum(header))
        let link = LedgerChecksums.SHA256.hash(Array(log[(log.count - 32)...]) + header + record).array
        log += header + record + link
    }

    /// Changes `dir/E/ledger.log` as an attacker would, then drops what is derived from
    /// it (index files, snapshots: "deleting everything else loses nothing").
    static func tamper(_ dir: TemporaryDirectory, _ change: (inout [UInt8]) throws -> Void) throws {
        let path = dir.path + "/E/ledger.log"
        var log = try bytes(path)
        try change(&log)
        try write(log, path)
        let fm = FileManager.default
        for folder in ["index", "snapshots"] {
            for name in (try? fm.contentsOfDirectory(atPath: dir.path + "/E/" + folder)) ?? [] {
                try fm.removeItem(atPath: dir.path + "/E/" + folder + "/" + name)
            }
        }
    }

    /// The sealed record of kind `kind` (the last one).
    static func lastRecord(ofKind kind: UInt16, _ log: [UInt8]) throws -> RawRecord {
        try #require(records(log).last { $0.kind == kind }, "no record of kind \(kind)")
    }

    static func uuidBytes(_ text: String) -> [UInt8] {
        let u = UUID(uuidString: text)!.uuid
        return [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
    }

    // MARK: Forged and changed erasures

    /// Rule K4: a plain `erased` record in an encrypted ledger was written by someone
    /// without the key (anyone may append a record with a fitting CRC and link) and is
    /// malformed. Forged here: a plain kind 27 of scope "everything" listing every key
    /// id the ledger used and the weight's UUID, appended by the log's own writer. It
    /// must hide nothing: no read answers without the weight, every command refuses
    /// (exit 6), and no writer appends after it. Both ways replay finds erasures: a ledger
    /// that never erased (no erasure key: the forged record is met while folding) and one
    /// that did (read first, by `ErasureIndex`).
    @Test(arguments: [false, true])
    func aForgedPlainErasedRecordIsMalformedAndHidesNothing(afterARealErasure: Bool) async throws {
        let dir = TemporaryDirectory("erase-forged-plain")
        try Self.ledger(dir)
        try Self.save(dir, "bodyMass", "123.456", "kg", at: "2026-11-03T08:00:00Z", uuid: Self.weight, meta: "note=ZZ-ERASE-ME")
        if afterARealErasure {
            try Self.save(dir, "stepCount", "10", "count", at: "2026-11-04T08:00:00Z")
            let r = try Self.hl(dir, ["erase", "--type", "stepCount", "--reason", "real"])
            try #require(r.status == 0, "\(r.stderr)")
        }
        let log = try Self.bytes(dir.path + "/E/ledger.log")
        let maxKey = Self.records(log).compactMap(\.keyId).max() ?? 1
        try #require(maxKey < 120, "one-byte varints below")
        var payload: [UInt8] = [0x00, 0x04]  // actor owner, scope 4 (everything)
        payload += [6] + Array("forged".utf8)
        payload += [UInt8(maxKey + 5)] + (1...(maxKey + 5)).map { UInt8($0) }  // key ids 1… ascending
        payload += [1] + Self.uuidBytes(Self.weight) + [1]  // one UUID, live
        payload += [0, 0, 0]  // no replacements, re-appended saves, associations
        let writer = try LogWriter.open(PosixFileSystem(path: dir.path + "/E"), options: LogWriterOptions())
        _ = try await writer.append([LogRecord(kind: 27, kindVersion: 1, payload: payload)])
        try await writer.close()
        let forged = try Self.bytes(dir.path + "/E/ledger.log")

        for args in [["--owner", "query", "bodyMass", "--json"], ["--owner", "latest", "bodyMass", "--json"], ["verify"], ["log"],
                     ["audit", Self.weight], ["stats"]] {
            let r = try Self.hl(dir, args)
            #expect(r.status == 6, "\(args): exit \(r.status) \(r.stdout) \(r.stderr)")
            #expect((r.stdout + r.stderr).contains("record of an encrypted ledger is not sealed")
                    && (r.stdout + r.stderr).contains("K4"), "\(args): \(r.stdout) \(r.stderr)")
            #expect(!r.stdout.contains("erased everything"), "\(args): the forgery is obeyed: \(r.stdout)")
        }
        let write = try Self.hl(dir, ["save", "--app", Self.app, "--type", "bodyMass", "--value", "1", "--unit", "kg"])
        #expect(write.status == 6 && write.stderr.contains("K4"), "\(write.status) \(write.stderr)")
        let erase = try Self.hl(dir, ["erase", "--all", "--reason", "x"])
        #expect(erase.status == 6, "\(erase.status) \(erase.stderr)")
        #expect(try Self.bytes(dir.path + "/E/ledger.log") == forged, "a writer appended after the forgery")
        // Without the key, the structure is intact: the forgery has a fitting CRC and link.
        #expect(try Self.hl(dir, ["verify", "--structure"], key: nil).status == 0)
    }

    /// R8: a sealed record whose tag does not verify under the right key was changed.
    /// The `erased` record is what every replay reads first; a changed byte in it (its
    /// ciphertext or its tag, with the CRC and every later link made to fit, or not) must
    /// be refused as damage by reads, `verify` and writers alike — never taken as "no
    /// erasure" (the erased weight is gone either way: its key is destroyed).
    @Test(arguments: ["ciphertext, CRC and links made to fit", "tag, CRC and links made to fit", "ciphertext, CRC left"])
    func aChangedByteInAnErasedRecordIsDamageNotIgnored(change: String) throws {
        let dir = TemporaryDirectory("erase-flip")
        try Self.ledger(dir)
        try Self.save(dir, "bodyMass", "123.456", "kg", at: "2026-11-03T08:00:00Z", uuid: Self.weight, meta: "note=ZZ-ERASE-ME")
        let pulse = try Self.save(dir, "heartRate", "61", "count/min", at: "2026-11-03T08:00:00Z")
        let erased = try Self.hl(dir, ["erase", "--type", "bodyMass", "--reason", "asked"])
        try #require(erased.status == 0, "\(erased.stderr)")
        try Self.tamper(dir) { log in
            let r = try Self.lastRecord(ofKind: 27, log)
            let at = change.hasPrefix("tag") ? r.payloadOffset + r.payloadLength - 1 : r.payloadOffset + 12 + 3
            log[at] ^= 0x20
            if change.hasSuffix("made to fit") {
                Self.fixCRC(&log, r)
                Self.relink(&log, from: r.offset)
            }
        }
        let changed = try Self.bytes(dir.path + "/E/ledger.log")
        for args in [["--owner", "query", "heartRate", "--json"], ["--owner", "query", "bodyMass", "--json"], ["log"], ["verify"],
                     ["audit", Self.weight]] {
            let r = try Self.hl(dir, args)
            #expect(r.status == 6, "\(change): \(args): exit \(r.status) \(r.stdout) \(r.stderr)")
            #expect(!r.stdout.contains(pulse) || args == ["log"], "\(change): \(args) answered as if nothing were wrong")
        }
        let write = try Self.hl(dir, ["save", "--app", Self.app, "--type", "heartRate", "--value", "62", "--unit", "count/min"])
        #expect(write.status == 6, "\(change): \(write.status) \(write.stderr)")
        let again = try Self.hl(dir, ["erase", "--type", "bodyMass", "--reason", "again"])
        #expect(again.status == 6, "\(change): \(again.status) \(again.stderr)")
        #expect(try Self.bytes(dir.path + "/E/ledger.log") == changed, "\(change): a writer appended to a damaged ledger")
        let structure = try Self.hl(dir, ["verify", "--structure"], key: nil)
        #expect(structure.status == (change.hasSuffix("CRC left") ? 6 : 0), "\(change): \(structure.stdout)")
    }

    /// A crash in the middle of writing the erasure's batch (`kill -9`, power loss): the
    /// keys are destroyed only after the batch is durable, so the folder is the one
    /// before the erasure with a torn tail. Readers stop before the tail and answer as
    /// before (the weight still there, nothing acknowledged lost); the next writer cuts
    /// the tail, and `erase` run again erases for good.
    @Test func aTornErasureBatchIsCutAndTheErasureCanBeRunAgain() throws {
        let dir = TemporaryDirectory("erase-torn")
        try Self.ledger(dir)
        try Self.save(dir, "bodyMass", "123.456", "kg", at: "2026-11-03T08:00:00Z", uuid: Self.weight, meta: "note=ZZ-ERASE-ME")
        let pulse = try Self.save(dir, "heartRate", "61", "count/min", at: "2026-11-03T08:00:00Z")
        let fm = FileManager.default
        try fm.copyItem(atPath: dir.path + "/E", toPath: dir.path + "/before")
        let beforeLog = try Self.bytes(dir.path + "/E/ledger.log")
        let query = try Self.hl(dir, ["--owner", "query", "bodyMass", "--json"])
        try #require(query.status == 0 && query.stdout.contains(Self.weight))
        let erased = try Self.hl(dir, ["erase", "--type", "bodyMass", "--reason", "asked"])
        try #require(erased.status == 0, "\(erased.stderr)")
        let afterLog = try Self.bytes(dir.path + "/E/ledger.log")
        let batch = try #require(Self.batches(afterLog).first { $0.records.contains { $0.kind == 27 } })
        #expect(batch.offset == beforeLog.count, "the erasure's batch follows the log as it was")
        // The crash: the folder as it was before, and half of the erasure's batch.
        try fm.removeItem(atPath: dir.path + "/E")
        try fm.copyItem(atPath: dir.path + "/before", toPath: dir.path + "/E")
        try Self.write(beforeLog + Array(afterLog[batch.offset ..< batch.offset + batch.length / 2]), dir.path + "/E/ledger.log")

        let read = try Self.hl(dir, ["--owner", "query", "bodyMass", "--json"])
        #expect(read.status == 0 && read.stdout == query.stdout, "\(read.stdout) \(read.stderr)")
        #expect(read.stderr.contains("incomplete batch"), "\(read.stderr)")
        let log = try Self.hl(dir, ["log"])
        #expect(log.status == 0 && !log.stdout.contains("\terased\t"), "\(log.stdout)")
        let again = try Self.hl(dir, ["--json", "erase", "--type", "bodyMass", "--reason", "asked again"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("recovered a torn tail"), "\(again.stderr)")
        #expect(try ErasureCommandTests.json(again.stdout)["samplesErased"] as? Int == 1, "\(again.stdout)")
        let gone = try Self.hl(dir, ["--owner", "query", "bodyMass", "--json"])
        #expect(gone.status == 0 && !gone.stdout.contains(Self.weight), "\(gone.stdout)")
        #expect(try Self.hl(dir, ["--owner", "query", "heartRate", "--json"]).stdout.contains(pulse))
        let verify = try Self.hl(dir, ["verify"])
        #expect(verify.status == 0 && verify.stdout.contains("OK: the ledger is intact"), "\(verify.stdout)")
    }

    /// The log cut back behind an erasure whose keys are already destroyed (a
    /// `ledger.log` restored from a backup, a disk that lost a synced write): no crash
    /// leaves this (the event is durable before the keys go), so the plain behaviour is
    /// stated. With `index/log.idx` in place it proves the lost bytes were durable: every
    /// command says so (I3, exit 6) and nothing is written. With the index gone (it is
    /// derived), every read names the destroyed key (R8, exit 4) — the heart rate, which
    /// was not erased, too — and the next writer cuts the torn tail, then refuses the same
    /// way: nothing is appended, and no `erase` can record the erasure again.
    @Test func aLogCutBehindAnErasureWhoseKeysAreGoneNamesTheDestroyedKey() throws {
        let dir = TemporaryDirectory("erase-cut-after")
        try Self.ledger(dir)
        try Self.save(dir, "bodyMass", "123.456", "kg", at: "2026-11-03T08:00:00Z", uuid: Self.weight, meta: "note=ZZ-ERASE-ME")
        try Self.save(dir, "heartRate", "61", "count/min", at: "2026-11-03T08:00:00Z")
        let beforeLog = try Self.bytes(dir.path + "/E/ledger.log")
        try #require(try Self.hl(dir, ["erase", "--type", "bodyMass", "--reason", "asked"]).status == 0)
        let afterLog = try Self.bytes(dir.path + "/E/ledger.log")
        let cut = Array(afterLog[..<(beforeLog.count + 60)])
        try Self.write(cut, dir.path + "/E/ledger.log")
        for args in [["--owner", "query", "heartRate", "--json"], ["log"], ["erase", "--type", "bodyMass", "--reason", "again"]] {
            let r = try Self.hl(dir, args)
            #expect(r.status == 6 && r.stderr.contains("acknowledged bytes are missing: damage [I3]"), "\(args): \(r.status) \(r.stderr)")
        }
        #expect(try Self.bytes(dir.path + "/E/ledger.log") == cut)
        try FileManager.default.removeItem(atPath: dir.path + "/E/index/log.idx")
        for args in [["--owner", "query", "heartRate", "--json"], ["--owner", "query", "bodyMass", "--json"], ["log"]] {
            let r = try Self.hl(dir, args)
            #expect(r.status == 4 && r.stderr.contains("which was destroyed (erased) [R8]"), "\(args): \(r.status) \(r.stderr)")
            #expect(!r.stdout.contains("123.456"))
        }
        let again = try Self.hl(dir, ["erase", "--type", "bodyMass", "--reason", "again"])
        #expect(again.status == 4 && again.stderr.contains("which was destroyed (erased) [R8]"), "\(again.status) \(again.stderr)")
        #expect(try Self.bytes(dir.path + "/E/ledger.log") == beforeLog, "the writer cut the torn tail, and appended nothing")
    }

    /// Anyone who may write the folder can append a record with its sealed flag set that
    /// names a key an erasure destroyed: nobody can check its tag any more. Before the
    /// erasure, such a record was sealed by the key's holder; after the erasure that
    /// destroyed the key, none can have been (a destroyed key seals nothing again), so
    /// it is a forgery like a plain one (K4's reason: only the seal proves the key's
    /// holder wrote it). Found: it is passed over as "erased", and `verify` says intact.
    @Test func aRecordSealedUnderAnErasedKeyAfterTheErasureIsAForgery() throws {
        let dir = TemporaryDirectory("erase-forged-sealed")
        try Self.ledger(dir)
        try Self.save(dir, "bodyMass", "123.456", "kg", at: "2026-11-03T08:00:00Z", uuid: Self.weight, meta: "note=ZZ-ERASE-ME")
        let erased = try Self.hl(dir, ["erase", "--type", "bodyMass", "--reason", "asked"])
        try #require(erased.status == 0, "\(erased.stderr)")
        let log = try Self.bytes(dir.path + "/E/ledger.log")
        let save = try #require(Self.records(log).first { $0.kind == 6 })
        let erasedKey = try #require(save.keyId)
        try Self.tamper(dir) { log in
            // A "save" sealed under the erased key: key id, salt, 40 bytes of noise, a tag.
            let payload = Self.le(erasedKey) + Self.le(UInt32(7)) + (0..<56).map { UInt8(truncatingIfNeeded: $0 &* 37) }
            Self.appendBatch(&log, kind: 6, version: 2, flags: 1, payload: payload)
        }
        #expect(try Self.hl(dir, ["verify", "--structure"], key: nil).status == 0, "the forgery's framing fits")
        let verify = try Self.hl(dir, ["verify"])
        #expect(verify.status == 6, "verify passes a record forged under an erased key after its erasure: \(verify.stdout)")
        let listed = try Self.hl(dir, ["log"])
        #expect(!listed.stdout.split(separator: "\n").last!.contains("[erased at event"),
                "log calls a record written after the erasure erased by it: \(listed.stdout)")
    }

    /// The same hole, inside the history: an attacker who may write the folder rewrites
    /// the key id of the app's `samplesDeleted` to a key an (unrelated) erasure destroyed,
    /// and makes the CRC and links fit (no key needed). Replay passes over any record
    /// under an erased key, so the deletion silently disappears and the deleted sample
    /// is live again — a change to sealed history made without the key, which the seal
    /// is there to prevent. Expected: refused as damage (the erased key's scope is heart
    /// rate; a deletion is never sealed under it), never a deleted sample back.
    @Test func aDeletionsKeyIdSwappedForAnErasedOneDoesNotBringTheSampleBack() throws {
        let dir = TemporaryDirectory("erase-swap-key")
        try Self.ledger(dir)
        try Self.save(dir, "bodyMass", "123.456", "kg", at: "2026-11-03T08:00:00Z", uuid: Self.weight, meta: "note=ZZ-ERASE-ME")
        try Self.save(dir, "heartRate", "61", "count/min", at: "2026-11-03T08:00:00Z")
        let deleted = try Self.hl(dir, ["delete", "--app", Self.app, Self.weight])
        try #require(deleted.status == 0, "\(deleted.stderr)")
        let erased = try Self.hl(dir, ["erase", "--type", "heartRate", "--reason", "pulse only"])
        try #require(erased.status == 0, "\(erased.stderr)")
        let before = try Self.hl(dir, ["--owner", "query", "bodyMass", "--json"])
        try #require(before.status == 0 && !before.stdout.contains(Self.weight))
        // The keys the erasure destroyed (heart rate's), as `log --json` lists them.
        let listed = try Self.hl(dir, ["log", "--json"]).stdout.split(separator: "\n").map(String.init).last { $0.contains("\"kind\":\"erased\"") }
        let keys = try ErasureCommandTests.json(try #require(listed))["keys"] as? [Int]
        let pulseKey = UInt64(try #require(keys?.first))
        try Self.tamper(dir) { log in
            let deletion = try Self.lastRecord(ofKind: 7, log)
            log.replaceSubrange(deletion.payloadOffset ..< deletion.payloadOffset + 8, with: Self.le(pulseKey))
            Self.fixCRC(&log, deletion)
            Self.relink(&log, from: deletion.offset)
        }
        let after = try Self.hl(dir, ["--owner", "query", "bodyMass", "--json"])
        #expect(!after.stdout.contains(Self.weight), "the deleted weight is back without the key: \(after.stdout)")
        let verify = try Self.hl(dir, ["verify"])
        #expect(verify.status == 6, "verify passes a deletion hidden under an erased key id: \(verify.stdout)")
    }

    // MARK: The key store deleted or restored

    /// `keys/keys.bin` deleted after an erasure: every read names the missing store
    /// (R8, exit 6), a writer refuses (exit 1) and neither the log nor a new key store
    /// is written.
    @Test func aKeyStoreDeletedAfterAnErasureIsNamedAndNothingIsWritten() throws {
        let dir = TemporaryDirectory("erase-no-store")
        try Self.ledger(dir)
        try Self.save(dir, "bodyMass", "123.456", "kg", at: "2026-11-03T08:00:00Z", uuid: Self.weight)
        try Self.save(dir, "heartRate", "61", "count/min", at: "2026-11-03T08:00:00Z")
        try #require(try Self.hl(dir, ["erase", "--type", "bodyMass", "--reason", "asked"]).status == 0)
        try FileManager.default.removeItem(atPath: dir.path + "/E/keys/keys.bin")
        let log = try Self.bytes(dir.path + "/E/ledger.log")
        for args in [["--owner", "query", "heartRate", "--json"], ["log"], ["audit", Self.weight]] {
            let r = try Self.hl(dir, args)
            #expect(r.status == 6 && r.stderr.contains("keys/keys.bin is missing [R8]"), "\(args): \(r.status) \(r.stderr)")
        }
        #expect(try Self.hl(dir, ["verify"]).status == 6)
        #expect(try Self.hl(dir, ["verify", "--structure"], key: nil).status == 0)
        for args in [["save", "--app", Self.app, "--type", "heartRate", "--value", "62", "--unit", "count/min"],
                     ["erase", "--all", "--reason", "x"]] {
            let r = try Self.hl(dir, args)
            #expect(r.status == 1 && r.stderr.contains("keys/keys.bin is missing"), "\(args): \(r.status) \(r.stderr)")
        }
        #expect(try Self.bytes(dir.path + "/E/ledger.log") == log)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/E/keys/keys.bin"), "a writer made a new, empty key store")
    }

    /// A backup of `keys/keys.bin` taken before the ledger's first erasure, put back:
    /// it holds the erased keys (DESIGN.md, "What erasure cannot reach": a copy taken
    /// before, with the key file, still opens them) but not the erasure key, so the
    /// `erased` event cannot be read. Stated plainly: every command stops at the erasure
    /// with exit 6 ("the key store never issued" its key), `log` prints the erased
    /// weight of the events before it, and no writer appends.
    @Test func aKeyStoreFromBeforeTheFirstErasureStopsEveryCommandAtTheErasure() throws {
        let dir = TemporaryDirectory("erase-old-store")
        try Self.ledger(dir)
        try Self.save(dir, "bodyMass", "123.456", "kg", at: "2026-11-03T08:00:00Z", uuid: Self.weight, meta: "note=ZZ-ERASE-ME")
        try Self.save(dir, "heartRate", "61", "count/min", at: "2026-11-03T08:00:00Z")
        let backup = try Self.bytes(dir.path + "/E/keys/keys.bin")
        let erased = try Self.hl(dir, ["--json", "erase", "--type", "bodyMass", "--reason", "asked"])
        try #require(erased.status == 0)
        let sequence = try #require(try ErasureCommandTests.json(erased.stdout)["sequence"] as? Int)
        try Self.write(backup, dir.path + "/E/keys/keys.bin")
        let log = try Self.bytes(dir.path + "/E/ledger.log")
        for args in [["--owner", "query", "heartRate", "--json"], ["--owner", "query", "bodyMass", "--json"], ["verify"],
                     ["audit", Self.weight], ["stats"], ["log"]] {
            let r = try Self.hl(dir, args)
            #expect(r.status == 6, "\(args): \(r.status) \(r.stderr)")
            #expect((r.stderr + r.stdout).contains("sealedRecordUnopened: sealed under key") && (r.stderr + r.stdout).contains("which the key store never issued [R8]"),
                    "\(args): \(r.stderr)")
            #expect((r.stderr + r.stdout).contains("event \(sequence)") || (r.stderr + r.stdout).contains("sequence \(sequence)"), "\(args): \(r.stderr)")
        }
        #expect(try Self.hl(dir, ["log"]).stdout.contains("1 sample (bodyMass 123.456 kg)"), "the backup opens the erased weight")
        for args in [["save", "--app", Self.app, "--type", "heartRate", "--value", "62", "--unit", "count/min"],
                     ["erase", "--type", "bodyMass", "--reason", "again"]] {
            let r = try Self.hl(dir, args)
            #expect(r.status == 6 && r.stderr.contains("never issued"), "\(args): \(r.status) \(r.stderr)")
        }
        #expect(try Self.bytes(dir.path + "/E/ledger.log") == log)
    }

    /// A backup of `keys/keys.bin` taken between two erasures, put back: it holds the
    /// erasure key (made by the first) and the keys the second erasure destroyed. The
    /// erased records are still passed over, because the second `erased` event (readable
    /// under the erasure key) lists their keys: no read shows the weight. The next writer
    /// finishes the erasure (E16, `finishErasures`): it destroys those keys again, so a
    /// copy of the log cut back before the second erasure reads the weight before that
    /// writer ran, and names the destroyed key after.
    @Test func aKeyStoreFromBetweenErasuresStillPassesOverAndTheNextWriterDestroysTheKeysAgain() throws {
        let dir = TemporaryDirectory("erase-between-store")
        try Self.ledger(dir)
        try Self.save(dir, "stepCount", "10", "count", at: "2026-11-04T08:00:00Z")
        try #require(try Self.hl(dir, ["erase", "--type", "stepCount", "--reason", "first"]).status == 0)
        try Self.save(dir, "bodyMass", "123.456", "kg", at: "2026-11-03T08:00:00Z", uuid: Self.weight, meta: "note=ZZ-ERASE-ME")
        let pulse = try Self.save(dir, "heartRate", "61", "count/min", at: "2026-11-03T08:00:00Z")
        let backup = try Self.bytes(dir.path + "/E/keys/keys.bin")
        let logBefore = try Self.bytes(dir.path + "/E/ledger.log")
        try #require(try Self.hl(dir, ["erase", "--type", "bodyMass", "--reason", "second"]).status == 0)
        try Self.write(backup, dir.path + "/E/keys/keys.bin")

        for args in [["--owner", "query", "bodyMass", "--json"], ["log"], ["--owner", "export", "csv", "--out", dir.path + "/csv"]] {
            let r = try Self.hl(dir, args)
            #expect(r.status == 0, "\(args): \(r.status) \(r.stderr)")
            #expect(!r.stdout.contains("123.456") && !r.stdout.contains(Self.weight), "\(args): \(r.stdout)")
        }
        #expect(try Self.hl(dir, ["--owner", "query", "heartRate", "--json"]).stdout.contains(pulse))
        let verify = try Self.hl(dir, ["verify"])
        #expect(verify.stdout.contains("events checked:") && !verify.stdout.contains("FAILED events"), "\(verify.stdout)")

        // A copy cut back before the second erasure, now: the restored store opens the weight.
        func cutCopy(_ name: String) throws -> CLIResult {
            let fm = FileManager.default
            try fm.copyItem(atPath: dir.path + "/E", toPath: dir.path + "/" + name)
            try Self.write(logBefore, dir.path + "/" + name + "/ledger.log")
            for folder in ["index", "snapshots"] {
                for f in (try? fm.contentsOfDirectory(atPath: dir.path + "/\(name)/\(folder)")) ?? [] {
                    try fm.removeItem(atPath: dir.path + "/\(name)/\(folder)/\(f)")
                }
            }
            return try Self.hl(dir, ["--owner", "query", "bodyMass", "--json"], ledger: name)
        }
        let open = try cutCopy("C1")
        #expect(open.status == 0 && open.stdout.contains("ZZ-ERASE-ME"), "\(open.stdout) \(open.stderr)")
        // The next writer: it destroys the listed keys again before anything else.
        let again = try Self.hl(dir, ["erase", "--type", "bodyMass", "--reason", "third"])
        #expect(again.status == 4 && again.stderr.contains("nothing to erase"), "\(again.status) \(again.stderr)")
        let shut = try cutCopy("C2")
        #expect(shut.status == 4 && shut.stderr.contains("which was destroyed (erased) [R8]"), "\(shut.status) \(shut.stdout) \(shut.stderr)")
    }

    /// A backup of `keys/keys.bin` taken after one erasure and before a key was issued
    /// (then destroyed by a second erasure), put back: the store's id counter is back
    /// below that key's id. Part 5, Y3: "a data key's id is issued once". Found: the
    /// next new key is issued that id again; replay passes over every record under an
    /// id an erasure lists, so a save under the new key is acknowledged (exit 0, its
    /// UUID printed) and then never read: silently lost. Without an erasure the reuse is
    /// loud (the old records name an id the store "never issued", exit 6, and no writer
    /// opens); the erasure's pass-over hides it. Expected: the writer refuses a store
    /// older than the log (or issues ids above every id the log names), and a save it
    /// acknowledged is read back.
    @Test func aRestoredKeyStoreNeverAcknowledgesASaveItThenReadsAsErased() throws {
        let dir = TemporaryDirectory("erase-id-reuse")
        try Self.ledger(dir)
        try Self.save(dir, "stepCount", "10", "count", at: "2026-12-01T08:00:00Z")
        try #require(try Self.hl(dir, ["erase", "--type", "stepCount", "--reason", "first"]).status == 0)
        let backup = try Self.bytes(dir.path + "/E/keys/keys.bin")
        try Self.save(dir, "bodyMass", "123.456", "kg", at: "2026-12-03T08:00:00Z", uuid: Self.weight, meta: "note=ZZ-ERASE-ME")
        try #require(try Self.hl(dir, ["erase", "--type", "bodyMass", "--reason", "second"]).status == 0)
        try Self.write(backup, dir.path + "/E/keys/keys.bin")
        let log = try Self.bytes(dir.path + "/E/ledger.log")

        let pulse = "00000000-0000-4000-8000-0000000000AB"
        let saved = try Self.hl(dir, ["save", "--app", Self.app, "--type", "heartRate", "--value", "61", "--unit", "count/min",
                                      "--start", "2026-12-04T08:00:00Z", "--uuid", pulse])
        if saved.status == 0 {
            let read = try Self.hl(dir, ["--owner", "query", "heartRate", "--json"])
            #expect(read.status == 0 && read.stdout.contains(pulse),
                    "the save was acknowledged (\(saved.stdout.trimmingCharacters(in: .whitespacesAndNewlines))) and is not read back: \(read.status) \(read.stdout) \(read.stderr)")
            let listed = try Self.hl(dir, ["log"]).stdout.split(separator: "\n").last.map(String.init) ?? ""
            #expect(!listed.contains("[erased at event"), "a save made after every erasure is listed as erased: \(listed)")
        } else {
            #expect(Self.defined(saved) && saved.status != 0, "\(saved.status) \(saved.stderr)")
            #expect(try Self.bytes(dir.path + "/E/ledger.log") == log, "a refused save wrote")
        }
    }

    // MARK: Concurrency

    /// `serve` is the ledger's writer; `erase` while it runs is refused as locked (exit
    /// 7), even with `LOCK` unlinked (W1: the writer locks the log itself), and changes
    /// nothing; a reader answers meanwhile; once the server stopped, `erase` runs.
    @Test func eraseWhileServeRunsIsLockedEvenWithLOCKUnlinked() throws {
        let dir = TemporaryDirectory("erase-serve")
        try Self.ledger(dir)
        try Self.save(dir, "bodyMass", "123.456", "kg", at: "2026-11-03T08:00:00Z", uuid: Self.weight)
        let server = try CLIRunner.start(["--ledger", dir.path + "/E", "serve", "--listen", "127.0.0.1:0"],
                                         environment: ["HEALTHLEDGER_KEY_FILE": dir.path + "/kek"], stderr: .pipe, timeout: 120)
        defer {
            server.kill(SIGKILL)
            server.wait()
        }
        try #require(server.waitForOutput(seconds: 60) { $0.contains("listening on 127.0.0.1:") }, "\(server.errorOutput)")
        let log = try Self.bytes(dir.path + "/E/ledger.log")
        let store = try Self.bytes(dir.path + "/E/keys/keys.bin")
        let locked = try Self.hl(dir, ["erase", "--all", "--reason", "x"])
        #expect(locked.status == 7, "\(locked.status) \(locked.stderr)")
        try FileManager.default.removeItem(atPath: dir.path + "/E/LOCK")
        let unlinked = try Self.hl(dir, ["erase", "--all", "--reason", "x"])
        #expect(unlinked.status == 7, "a second writer got in with LOCK unlinked: \(unlinked.status) \(unlinked.stderr)")
        let read = try Self.hl(dir, ["--owner", "query", "bodyMass", "--json"])
        #expect(read.status == 0 && read.stdout.contains(Self.weight))
        #expect(try Self.bytes(dir.path + "/E/ledger.log") == log && (try Self.bytes(dir.path + "/E/keys/keys.bin")) == store)
        server.kill(SIGTERM)
        #expect(server.wait() == .exited(0))
        let erased = try Self.hl(dir, ["erase", "--all", "--reason", "x"])
        #expect(erased.status == 0, "\(erased.stderr)")
        #expect(try Self.hl(dir, ["verify"]).status == 0)
    }

    /// Two erasures started together, `LOCK` unlinked first: each exits 0 or 7 (locked),
    /// at least one erases, and the ledger then holds exactly what the successful ones
    /// left; it verifies. The same scope twice: at most one erases it.
    @Test func twoErasuresRacingLeaveOneConsistentLedger() throws {
        let dir = TemporaryDirectory("erase-race")
        try Self.ledger(dir)
        var uuids: [(String, String)] = []
        for (type, value, unit) in [("bodyMass", "80", "kg"), ("heartRate", "61", "count/min"), ("stepCount", "100", "count")] {
            uuids.append((type, try Self.save(dir, type, value, unit, at: "2026-11-03T08:00:00Z")))
        }
        let ledger = dir.path + "/E", key = dir.path + "/kek"
        func race(_ a: [String], _ b: [String]) -> [CLIResult?] {
            try? FileManager.default.removeItem(atPath: ledger + "/LOCK")
            let results = Mutex<[CLIResult?]>([nil, nil])
            let commands = [a, b]
            DispatchQueue.concurrentPerform(iterations: 2) { i in
                let r = try? CLIRunner.run(["--ledger", ledger] + commands[i], environment: ["HEALTHLEDGER_KEY_FILE": key])
                results.withLock { $0[i] = r }
            }
            return results.withLock { $0 }
        }
        let first = race(["erase", "--type", "bodyMass", "--reason", "a"], ["erase", "--type", "heartRate", "--reason", "b"])
        let statuses = first.map { $0?.status ?? -1 }
        #expect(statuses.allSatisfy { $0 == 0 || $0 == 7 } && statuses.contains(0), "\(statuses) \(first.map { $0?.stderr ?? "" })")
        for (i, (type, uuid)) in uuids.prefix(2).enumerated() {
            let q = try Self.hl(dir, ["--owner", "query", type, "--json"])
            #expect(q.status == 0 && q.stdout.contains(uuid) == (statuses[i] != 0), "\(type): \(statuses[i]) \(q.stdout)")
        }
        let same = race(["--json", "erase", "--type", "stepCount", "--reason", "c"], ["--json", "erase", "--type", "stepCount", "--reason", "d"])
        let twice = same.map { $0?.status ?? -1 }
        #expect(twice.filter { $0 == 0 }.count == 1 && twice.allSatisfy { [0, 4, 7].contains($0) },
                "\(twice) \(same.map { ($0?.stdout ?? "") + ($0?.stderr ?? "") })")
        #expect(!(try Self.hl(dir, ["--owner", "query", "stepCount", "--json"]).stdout.contains(uuids[2].1)))
        let verify = try Self.hl(dir, ["verify"])
        #expect(verify.status == 0 && verify.stdout.contains("OK: the ledger is intact"), "\(verify.stdout)")
    }

    /// A `changes --follow` reader open while the owner erases: its anchor counts the
    /// erased weight, so it is told of it as deleted (naming the erasure), then of
    /// everything current again (the heart rate), and follows on from there; the erasure
    /// itself is not held up.
    @Test func aFollowerOpenDuringAnErasureIsToldOfTheErasedSampleAsDeleted() throws {
        let dir = TemporaryDirectory("erase-follow")
        try Self.ledger(dir)
        try Self.save(dir, "bodyMass", "123.456", "kg", at: "2026-11-03T08:00:00Z", uuid: Self.weight)
        try Self.save(dir, "heartRate", "61", "count/min", at: "2026-11-03T08:00:00Z")
        let follower = try CLIRunner.start(["--ledger", dir.path + "/E", "--json", "changes", "bodyMass,heartRate", "--owner", "--follow"],
                                           environment: ["HEALTHLEDGER_KEY_FILE": dir.path + "/kek"], stderr: .pipe, timeout: 120)
        defer {
            follower.kill(SIGKILL)
            follower.wait()
        }
        try #require(follower.waitForOutput(containing: "{\"anchor\":", seconds: 60), "\(follower.errorOutput)")
        #expect(follower.output.contains(Self.weight))
        let erased = try Self.hl(dir, ["--json", "erase", "--type", "bodyMass", "--reason", "asked"])
        #expect(erased.status == 0, "\(erased.stderr)")
        let sequence = try #require(try ErasureCommandTests.json(erased.stdout)["sequence"] as? Int)
        let deletion = "{\"change\":\"deleted\",\"uuid\":\"\(Self.weight.uppercased())\",\"type\":\"HKQuantityTypeIdentifierBodyMass\",\"syncIdentifier\":null,\"syncVersion\":null,\"replacedBy\":null,\"erasedAt\":\(sequence)}"
        #expect(follower.waitForOutput(containing: deletion, seconds: 60), "\(follower.output)\(follower.errorOutput)")
        // Then everything current again: the heart rate a second time, and an anchor.
        try Self.save(dir, "heartRate", "62", "count/min", at: "2026-11-04T08:00:00Z")
        #expect(follower.waitForOutput(containing: "\"value\":62", seconds: 60), "\(follower.output)\(follower.errorOutput)")
        let lines = follower.output.split(separator: "\n").map(String.init)
        let after = try #require(lines.firstIndex(of: deletion))
        #expect(lines[after...].filter { $0.contains("\"value\":61,") }.count == 1, "\(lines)")
        #expect(!lines[after...].contains { $0.contains("123.456") })
        #expect(!follower.errorOutput.contains("anchorBeforeErasure"))
    }

    // MARK: Odd input

    /// Every odd input is refused by name with its exit status, and changes neither the
    /// log nor the key store. Then the edges that are accepted: a reason of exactly
    /// 1,000 bytes (multi-byte) kept verbatim, and `--all` given twice.
    @Test func oddInputIsRefusedByNameAndChangesNothing() throws {
        let dir = TemporaryDirectory("erase-odd")
        try Self.ledger(dir)
        try Self.save(dir, "bodyMass", "123.456", "kg", at: "2026-11-03T08:00:00Z", uuid: Self.weight)
        let log = try Self.bytes(dir.path + "/E/ledger.log"), store = try Self.bytes(dir.path + "/E/keys/keys.bin")
        let long = String(repeating: "é", count: 500) + "a"  // 1,001 bytes, 501 characters
        let cases: [([String], Int32, String)] = [
            (["erase", "--all", "--reason", long], 2, "erasureRefused: an erasure's reason has 1 to 1000 bytes"),
            (["erase", "--all", "--reason", ""], 2, "erasureRefused: an erasure's reason has 1 to 1000 bytes"),
            (["erase", "--all", "--reason", " \n\t"], 2, "erasureRefused: an erasure's reason is one line without control characters"),
            // A line feed would forge lines in `log`'s text output.
            (["erase", "--all", "--reason", "ok\nOK: the ledger is intact"], 2,
             "erasureRefused: an erasure's reason is one line without control characters"),
            // A NUL cannot cross exec(2): the argument ends there, and is empty.
            (["erase", "--all", "--reason", "\0hidden"], 2, "erasureRefused: an erasure's reason has 1 to 1000 bytes"),
            (["erase", "--all"], 2, "usage: erase needs --reason TEXT"),
            (["erase", "--import", "not-a-uuid", "--reason", "x"], 3, "invalidUUID: 'not-a-uuid'"),
            (["erase", "--import", "00000000-0000-4000-8000-0000000000ff", "--reason", "x"], 4,
             "erasureRefused: nothing to erase: no live key holds import 00000000-0000-4000-8000-0000000000ff"),
            (["erase", "--source", "com.nobody", "--reason", "x"], 4, "erasureRefused: no app com.nobody is registered"),
            (["erase", "--source", "com.x", "--source", "com.y", "--reason", "x"], 2, "--source is given 2 times"),
            (["erase", "--type", "HKQuantityTypeIdentifierNope", "--reason", "x"], 3, "dataTypeNotAvailable"),
            (["erase", "--type", "heartRate", "--reason", "x"], 4, "erasureRefused: nothing to erase: no live key holds type heartRate"),
            (["erase", "--type", "bodyMass", "--from", "2026-11-05", "--to", "2026-11-01", "--reason", "x"], 3,
             "invalidRange: --from 2026-11-05 is after --to 2026-11-01"),
            (["erase", "--type", "bodyMass", "--from", "2026-11-05T00:00:00Z", "--to", "2026-11-05T00:00:00Z", "--reason", "x"], 3,
             "invalidRange: --from 2026-11-05T00:00:00Z is after --to 2026-11-05T00:00:00Z"),
            (["erase", "--type", "HKWorkoutTypeIdentifier", "--from", "2026-11-01", "--to", "2026-11-05", "--reason", "x"], 2,
             "a range of days erases samples of a quantity, category or correlation type"),
            (["erase", "--type", "dateOfBirth", "--from", "2026-11-01", "--to", "2026-11-05", "--reason", "x"], 2,
             "a range of days erases samples of a quantity, category or correlation type"),
            (["erase", "--type", "bodyMass", "--from", "garbage", "--to", "2026-11-05", "--reason", "x"], 3, "invalidDate: --from 'garbage'"),
            (["erase", "--type", "bodyMass", "--from", "2026-11-01", "--reason", "x"], 2, "give --from D and --to D together"),
            (["erase", "--all", "--from", "2026-11-01", "--to", "2026-11-05", "--reason", "x"], 2, "--from and --to go with --type T"),
            (["erase", "--all", "--type", "bodyMass", "--reason", "x"], 2, "give exactly one of --source ID, --import ID, --type T, --all"),
            (["erase", "--reason", "x"], 2, "give exactly one of --source ID, --import ID, --type T, --all"),
            (["--app", "com.x", "erase", "--all", "--reason", "x"], 2, "usage: unexpected argument '--app"),
        ]
        for (args, status, message) in cases {
            let r = try Self.hl(dir, args)
            #expect(r.status == status && r.stderr.contains(message), "\(args.map { $0.prefix(40) }): \(r.status) \(r.stderr)")
            #expect(r.stdout.isEmpty, "\(args.map { $0.prefix(40) }): \(r.stdout)")
        }
        let noKey = try Self.hl(dir, ["erase", "--all", "--reason", "x"], key: nil)
        #expect(noKey.status == 2 && noKey.stderr.contains("keyFileNotGiven"), "\(noKey.stderr)")
        #expect(try Self.bytes(dir.path + "/E/ledger.log") == log, "a refused erase wrote to the log")
        #expect(try Self.bytes(dir.path + "/E/keys/keys.bin") == store, "a refused erase wrote the key store")

        let reason = String(repeating: "é", count: 499) + "ab"  // exactly 1,000 bytes
        #expect(reason.utf8.count == 1_000)
        let accepted = try Self.hl(dir, ["--json", "erase", "--all", "--all", "--reason", reason])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        let outcome = try ErasureCommandTests.json(accepted.stdout)
        #expect(outcome["scope"] as? String == "everything" && outcome["samplesErased"] as? Int == 1, "\(accepted.stdout)")
        let line = try #require(try Self.hl(dir, ["log", "--json"]).stdout.split(separator: "\n").last.map(String.init))
        #expect(try ErasureCommandTests.json(line)["reason"] as? String == reason, "\(line.prefix(200))")
        #expect(try Self.hl(dir, ["verify"]).status == 0)
    }

    /// `--to D` is the whole day D: the range ends at the start of the next one. For
    /// D = 9999-12-31 that is 10000-01-01, outside what an event may hold (D1), and
    /// `--to 9999-12-31` is how a person says "from --from on". Found: the `erased` event
    /// is appended with that end, the keys are destroyed and the snapshots removed, and
    /// then no event of the ledger can be read: every command, readers and writers,
    /// exits 6 ("date outside … [D1]") for good. Expected: refused before anything is
    /// written (exit 2 or 3), or an erasure that reads back.
    @Test func aRangeToTheLastDayOfYear9999DoesNotBreakTheLedger() throws {
        let dir = TemporaryDirectory("erase-9999")
        try Self.ledger(dir)
        try Self.save(dir, "bodyMass", "123.456", "kg", at: "2026-11-03T08:00:00Z", uuid: Self.weight)
        let kept = try Self.save(dir, "bodyMass", "80", "kg", at: "2026-10-03T08:00:00Z")
        let pulse = try Self.save(dir, "heartRate", "61", "count/min", at: "2026-11-03T08:00:00Z")
        let log = try Self.bytes(dir.path + "/E/ledger.log")
        let r = try Self.hl(dir, ["erase", "--type", "bodyMass", "--from", "2026-11-01", "--to", "9999-12-31", "--reason", "from November on"])
        if r.status == 0 {
            let q = try Self.hl(dir, ["--owner", "query", "bodyMass", "--json"])
            #expect(q.status == 0 && q.stdout.contains(kept) && !q.stdout.contains(Self.weight), "\(q.status) \(q.stderr)")
        } else {
            #expect([2, 3].contains(r.status), "erase exits \(r.status): \(r.stderr)")
            #expect(try Self.bytes(dir.path + "/E/ledger.log") == log, "a refused erasure wrote")
        }
        let pulseRead = try Self.hl(dir, ["--owner", "query", "heartRate", "--json"])
        #expect(pulseRead.status == 0 && pulseRead.stdout.contains(pulse), "the ledger no longer reads: \(pulseRead.status) \(pulseRead.stderr)")
        let verify = try Self.hl(dir, ["verify"])
        #expect(verify.status == 0, "\(verify.stdout)")
    }

    // MARK: Erased UUIDs used again

    /// E3: an erased UUID was never folded and may be saved again. Saved again, one of
    /// them deleted, the ledger verifies; the source erased a second time, its `erased`
    /// event lists "every sample a destroyed key sealed, live or deleted, each once"
    /// (FORMAT.md, kind 27), so it counts both again, and `audit` of such a UUID names
    /// the erasure that took its second life. Found: the second erasure lists none of
    /// them (they are in the first one's list), says "0 samples", and `audit` names only
    /// the first erasure and its reason.
    @Test func erasedUUIDsSavedAgainAreCountedByTheNextErasure() throws {
        let dir = TemporaryDirectory("erase-reuse")
        try Self.ledger(dir)
        let a = "00000000-0000-4000-8000-00000000000A", b = "00000000-0000-4000-8000-00000000000B"
        try Self.save(dir, "bodyMass", "70", "kg", at: "2026-11-03T08:00:00Z", uuid: a)
        try Self.save(dir, "bodyMass", "71", "kg", at: "2026-11-04T08:00:00Z", uuid: b)
        let first = try Self.hl(dir, ["--json", "erase", "--source", Self.app, "--reason", "first life"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try ErasureCommandTests.json(first.stdout)["samplesSealed"] as? Int == 2, "\(first.stdout)")
        try Self.save(dir, "bodyMass", "72", "kg", at: "2026-11-05T08:00:00Z", uuid: a)
        try Self.save(dir, "bodyMass", "73", "kg", at: "2026-11-05T09:00:00Z", uuid: b)
        let query = try Self.hl(dir, ["--owner", "query", "bodyMass", "--json"])
        #expect(query.stdout.contains("\"value\":72") && query.stdout.contains("\"value\":73"), "\(query.stdout)")
        let deleted = try Self.hl(dir, ["delete", "--app", Self.app, a])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        let resaved = try Self.hl(dir, ["save", "--app", Self.app, "--type", "bodyMass", "--value", "74", "--unit", "kg", "--uuid", a])
        #expect(resaved.status == 5 && resaved.stderr.contains("[E3]"), "a deleted UUID is not reused: \(resaved.status) \(resaved.stderr)")
        let verify = try Self.hl(dir, ["verify"])
        #expect(verify.status == 0, "\(verify.stdout)")

        let second = try Self.hl(dir, ["--json", "erase", "--source", Self.app, "--reason", "second life"])
        #expect(second.status == 0, "\(second.stderr)")
        let outcome = try ErasureCommandTests.json(second.stdout)
        #expect(outcome["samplesErased"] as? Int == 1 && outcome["samplesSealed"] as? Int == 2,
                "the second erasure erased b (live) and a (deleted) again: \(second.stdout)")
        let after = try Self.hl(dir, ["--owner", "query", "bodyMass", "--json"])
        #expect(after.status == 0 && !after.stdout.contains(b), "\(after.stdout)")
        let audit = try Self.hl(dir, ["audit", b])
        #expect(audit.status == 0 && audit.stdout.contains("reason: second life"), "audit names the wrong erasure: \(audit.stdout)")
        #expect(try Self.hl(dir, ["verify"]).status == 0)
        // And the UUIDs come back a third time.
        try Self.save(dir, "bodyMass", "75", "kg", at: "2026-11-06T08:00:00Z", uuid: b)
        #expect(try Self.hl(dir, ["--owner", "query", "bodyMass", "--json"]).stdout.contains("\"value\":75"))
    }

    /// An import whose process died before it finished: E11, the next writer appends its
    /// `importAborted` and none of its events applies — but its records stay in the log,
    /// sealed under the import's keys, and `log` with the key prints them (the export's
    /// birth date, its weights, its sources' names). `erase --import ID` is how the owner
    /// erases everything one import brought (DESIGN.md: "erasing one import … is whole
    /// keys"). Found: refused, "no import … is in the ledger" (exit 4), though `log` names
    /// that very import; `--source export:Health` is refused too ("no app … is
    /// registered"): only `--type`, type by type, or `--all` reach what it brought.
    @Test func anAbortedImportCanBeErasedByItsId() throws {
        let dir = TemporaryDirectory("erase-aborted-import")
        try SmallExport.write(in: dir.path)
        try Self.ledger(dir)
        let imported = try Self.hl(dir, ["import-apple-health", "export.xml"])
        try #require(imported.status == 0, "\(imported.stderr)")
        // The importer died before its last batch (the importFinished) was written.
        try Self.tamper(dir) { log in
            let finished = try #require(Self.batches(log).first { $0.records.contains { $0.kind == 10 } })
            log.removeSubrange(finished.offset...)
        }
        let next = try Self.hl(dir, ["characteristic", "set", "bloodType", "AB+"])
        try #require(next.status == 0, "\(next.stderr)")
        let listed = try Self.hl(dir, ["log"])
        try #require(listed.stdout.contains("dateOfBirth = 1985-03-14") && listed.stdout.contains("[not applied: import aborted]"),
                     "\(listed.stdout)")
        let start = try #require(try Self.hl(dir, ["log", "--json"]).stdout.split(separator: "\n").first { $0.contains("\"importStarted\"") })
        let id = try #require(try ErasureCommandTests.json(String(start))["importId"] as? String)

        let erased = try Self.hl(dir, ["erase", "--import", id, "--reason", "that phone"])
        #expect(erased.status == 0, "erase --import of the aborted import: \(erased.status) \(erased.stderr)")
        let after = try Self.hl(dir, ["log"])
        #expect(after.status == 0, "\(after.stderr)")
        for needle in ["1985-03-14", "165.4", "48.2 ms"] {
            #expect(!after.stdout.contains(needle), "log still prints the aborted import's \(needle)")
        }
        let profile = try Self.hl(dir, ["--owner", "profile", "--json"])
        #expect(profile.stdout.contains("\"bloodType\":\"AB+\""), "the owner's own entry stays: \(profile.stdout)")
        #expect(try Self.hl(dir, ["verify"]).status == 0)
    }

    // MARK: Every command after an erasure

    /// An app's deletion is sealed under the app's deletion key (type 0xFFFE), which
    /// `erase --source` destroys. `diff` (the reasons of deletions in its range) and
    /// `report` (its audit timeline) read such records themselves rather than through the
    /// erasure index, and must not stop at one. Found: both exit 4, "sealed under key K,
    /// which was destroyed (erased)", on any ledger where an erased source had deleted
    /// something (`report` also after `erase --import` and `erase --all`).
    @Test func diffAndReportStillAnswerAfterAnErasedSourcesDeletion() throws {
        let dir = TemporaryDirectory("erase-diff-report")
        try Self.ledger(dir)
        let a = try Self.save(dir, "bodyMass", "70", "kg", at: "2026-11-03T08:00:00Z")
        try Self.save(dir, "bodyMass", "71", "kg", at: "2026-11-04T08:00:00Z")
        try #require(try Self.hl(dir, ["delete", "--app", Self.app, a, "--reason", "typo"]).status == 0)
        let erased = try Self.hl(dir, ["--json", "erase", "--source", Self.app, "--reason", "gone"])
        try #require(erased.status == 0, "\(erased.stderr)")
        let sequence = try #require(try ErasureCommandTests.json(erased.stdout)["sequence"] as? Int)
        let diff = try Self.hl(dir, ["diff", "@1", "@\(sequence)"])
        #expect(diff.status == 0, "diff: \(diff.status) \(diff.stderr)")
        let report = try Self.hl(dir, ["--owner", "report", "--out", dir.path + "/r.html"])
        #expect(report.status == 0, "report: \(report.status) \(report.stderr)")
        if report.status == 0 {
            let html = try String(contentsOfFile: dir.path + "/r.html", encoding: .utf8)
            #expect(!html.contains("typo"), "the erased deletion's reason is in the report")
        }
    }

    /// `erase --all` on a ledger holding an import, the owner's own weight and birth
    /// date, and a deletion: then every reading command answers with its defined status
    /// (none traps, none says "damaged"), none prints anything erased, and the history
    /// verifies.
    @Test func afterEraseAllEveryCommandAnswersAndNothingErasedShows() throws {
        let dir = TemporaryDirectory("erase-all")
        try SmallExport.write(in: dir.path)
        try Self.ledger(dir)
        let imported = try Self.hl(dir, ["import-apple-health", "export.xml"])
        try #require(imported.status == 0, "\(imported.stderr)")
        try Self.save(dir, "bodyMass", "123.456", "kg", at: "2026-11-03T08:00:00Z", uuid: Self.weight, meta: "note=ZZ-ERASE-ME")
        let doomed = try Self.save(dir, "heartRate", "61", "count/min", at: "2026-11-03T08:00:00Z")
        try #require(try Self.hl(dir, ["--owner", "delete", doomed]).status == 0)
        try #require(try Self.hl(dir, ["characteristic", "set", "dateOfBirth", "1980-05-17"]).status == 0)
        let before = try Self.hl(dir, ["--owner", "profile", "--json"])
        try #require(before.stdout.contains("\"bloodType\":\"O-\""), "\(before.stdout)")
        let erased = try Self.hl(dir, ["--json", "erase", "--all", "--reason", "everything, Art. 17"])
        try #require(erased.status == 0, "\(erased.stderr)")
        let sequence = try #require(try ErasureCommandTests.json(erased.stdout)["sequence"] as? Int)

        let needles = ["ZZ-ERASE-ME", "123.456", "1985-03-14", "1980-05-17", "165.4", "HKBloodTypeONegative", "\"bloodType\":\"O-\""]
        let commands: [([String], Int32)] = [
            (["verify"], 0), (["verify", "--structure"], 0), (["replay"], 0), (["replay", "--no-snapshot"], 0),
            (["replay", "--to", "3"], 0), (["replay", "--write-snapshot"], 0), (["log"], 0), (["log", "--json"], 0), (["stats"], 0),
            (["audit", "bodyMass"], 0), (["audit", Self.weight], 0), (["audit", doomed], 0),
            (["--owner", "query", "bodyMass", "--json"], 0), (["--owner", "query", "HKWorkoutTypeIdentifier", "--json"], 0),
            (["--owner", "latest", "bodyMass"], 4), (["--owner", "statistics", "bodyMass", "--average"], 0),
            (["--owner", "changes", "bodyMass,heartRate"], 0), (["--owner", "profile", "--json"], 0),
            (["--owner", "activity", "--from", "2019-05-01", "--to", "2019-05-31"], 0), (["characteristic", "get", "dateOfBirth"], 4),
            (["--owner", "export", "csv", "--out", dir.path + "/csv"], 0), (["--owner", "export", "fhir", "--out", dir.path + "/fhir"], 0),
            (["diff", "@1", "@\(sequence)"], 0), (["diff", "@\(sequence - 1)", "@\(sequence)"], 0),
            (["--owner", "report", "--out", dir.path + "/r.html"], 0), (["checkpoint"], 0), (["prove", "--seq", "1"], 0),
            (["erase", "--all", "--reason", "again"], 4),
        ]
        var failed: [String] = []
        for (args, status) in commands {
            let r = try Self.hl(dir, args)
            #expect(Self.defined(r), "\(args): exit \(r.status) \(r.stderr)")
            if r.status != status { failed.append("\(args.joined(separator: " ")): exit \(r.status) (\(status) expected) \(r.stderr)") }
            #expect(r.status != 6, "\(args) calls the ledger damaged: \(r.stderr)")
            for needle in needles { #expect(!r.stdout.contains(needle), "\(args) prints the erased \(needle)") }
        }
        #expect(failed.isEmpty, "\(failed.joined(separator: "\n"))")
        let audit = try Self.hl(dir, ["audit", Self.weight])
        #expect(audit.stdout.contains("erased (everything), reason: everything, Art. 17"), "\(audit.stdout)")
        let profile = try Self.hl(dir, ["--owner", "profile", "--json"])
        #expect(profile.stdout.contains("\"bloodType\":\"Not Set\""), "\(profile.stdout)")
        for (name, bytes) in try E.files(dir.path + "/E") + E.files(dir.path + "/csv") + E.files(dir.path + "/fhir") {
            for (what, needle) in E.needles { #expect(bytes.firstRange(of: needle) == nil, "\(name) holds the \(what)") }
        }
    }
}
