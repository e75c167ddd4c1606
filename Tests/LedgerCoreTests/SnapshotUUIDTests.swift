import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerChecksums
import LedgerLog
import TestSupport

/// Snapshot version 3 (issue 31): slots hold no UUID — the log does (rule S11) — and the
/// UUID table is stored compact. A restored index reads a slot's UUID from the log when
/// a lookup needs it; what it reads is checked to be the slot's sample; a log that does
/// not give it fails the lookup and changes nothing.
struct SnapshotUUIDTests {
    /// The fresh state (replayed from the log, every UUID in memory) and the restored
    /// one (the newest snapshot, its UUIDs in the log), read or mapped.
    static func states(_ dir: TemporaryDirectory, mapped: Bool) throws -> (fresh: LedgerState, restored: LedgerState) {
        let reader = try LogReader(dir.fs)
        let fresh = try StateLoader.load(dir.fs, reader: reader, useSnapshots: false).state
        let loaded = try StateLoader.load(dir.fs, reader: reader, mapped: mapped)
        #expect(loaded.snapshot != nil)
        return (fresh, loaded.state)
    }

    @Test(arguments: [false, true]) func s11ARestoredSlotsUUIDIsTheLogsAndFindsItsSlot(mapped: Bool) async throws {
        let dir = TemporaryDirectory()
        _ = try await MappedSnapshotTests.ledgerWithSnapshot(dir)
        let (fresh, restored) = try Self.states(dir, mapped: mapped)
        let n = restored.samples.count
        #expect(n == 3_005 && fresh.samples.count == n)
        // Nothing of the UUIDs came from the snapshot.
        #expect(restored.samples.uuidBase == n && restored.samples.uuids.isEmpty && restored.samples.logUUIDs != nil)
        #expect(fresh.samples.uuidBase == 0 && fresh.samples.uuids.count == n)
        for slot in 0..<UInt32(n) {
            let uuid = try fresh.samples.uuid(slot)
            #expect(try restored.samples.uuid(slot) == uuid)
            #expect(try restored.samples.slot(of: uuid) == slot)
        }
        // The correlation's members (positions 1 and 2 of its record's flattened order).
        #expect(try restored.samples.uuid(UInt32(n - 2)) == fixedUUID(3) && restored.samples.uuid(UInt32(n - 1)) == fixedUUID(4))
        #expect(try restored.samples.slot(of: fixedUUID(999_999)) == nil)
        #expect(StateDifference.first(fresh, restored) == nil)
        #expect(fresh.digest() == restored.digest())
        #expect(restored.checkInvariants() == [])
    }

    /// The table restored compact becomes buckets when the index grows, and grows from
    /// its fingerprints alone (a restored slot's UUID is not in memory): every UUID,
    /// old and new, still finds its slot, and the state is the fresh replay's.
    @Test func aRestoredTableGrowsWithoutReadingAUUID() async throws {
        let dir = TemporaryDirectory()
        _ = try await MappedSnapshotTests.ledgerWithSnapshot(dir)
        let ledger = try Ledger.open(dir.fs, options: LedgerOptions(log: testOptions))
        let before = await ledger.state
        #expect(before.samples.table.compact != nil && before.samples.uuidBase == 3_005)
        let buckets = before.samples.table.bucketCount
        var added: [UUID] = []
        for batch in 0..<4 {
            let samples = try (0..<1_000).map { i -> Sample in
                let uuid = fixedUUID(100_000 + batch * 1_000 + i)
                added.append(uuid)
                return try quantitySample(.stepCount, Double(i), "count", at: "2026-02-01T00:00:00Z", uuid: uuid)
            }
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: samples))
        }
        let after = await ledger.state
        #expect(after.samples.table.compact == nil && after.samples.table.bucketCount > buckets)
        for (i, uuid) in added.enumerated() { #expect(try after.samples.slot(of: uuid) == UInt32(3_005 + i)) }
        for i in 0..<3_000 { #expect(try after.samples.slot(of: fixedUUID(10_000 + i)) == UInt32(i)) }
        // A duplicate of a restored sample is still refused (its fingerprint matches, its
        // UUID is read from the log).
        await #expect(throws: RuleViolation.duplicateUUID(fixedUUID(10_007))) {
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier,
                                          samples: [try quantitySample(.stepCount, 1, "count", at: "2026-03-01T00:00:00Z",
                                                                       uuid: fixedUUID(10_007))]))
        }
        try await ledger.close()
        let fresh = try StateLoader.load(dir.fs, reader: try LogReader(dir.fs), useSnapshots: false).state
        #expect(StateDifference.first(fresh, after) == nil)
        #expect(after.checkInvariants() == [])
    }

    /// A record the index points into, damaged after the snapshot: a delete of a sample
    /// it saved is refused, naming the log's damage (S11), and nothing is appended; the
    /// same delete by a fresh replay of the log fails the replay itself.
    @Test func s11ADamagedRecordFailsTheLookupAndAppendsNothing() async throws {
        let dir = TemporaryDirectory()
        _ = try await MappedSnapshotTests.ledgerWithSnapshot(dir)
        let reader = try LogReader(dir.fs)
        let restored = try StateLoader.load(dir.fs, reader: reader).state
        let slot = try #require(try restored.samples.slot(of: fixedUUID(1)))
        let offset = restored.samples.entry(slot).recordOffset
        // A byte of the save's payload: its CRC32C no longer holds.
        let path = dir.url.appendingPathComponent(LogWriter.logFileName).path
        var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[Int(offset) + LogFormat.recordHeaderLength + 40] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let damaged = try StateLoader.load(dir.fs, reader: try LogReader(dir.fs)).state
        #expect(throws: SampleIndex.UUIDUnreadable.self) { try damaged.samples.uuid(slot) }
        do {
            _ = try damaged.samples.slot(of: fixedUUID(1))
            Issue.record("a lookup through a damaged record found something")
        } catch {
            #expect(error.slot == slot)
            #expect(error.reason.hasPrefix("the record at byte \(offset): "))
            #expect(error.cause is LogError)
        }
        let rules = LedgerRules.violation(.other(.samplesDeleted(actor: .owner, objects: [DeletedObject(uuid: fixedUUID(1))],
                                                                 reason: nil)), in: damaged)
        guard case .sampleUnreadable(let s, let reason)? = rules else {
            Issue.record("expected sampleUnreadable, got \(String(describing: rules))")
            return
        }
        #expect(s == slot && reason.hasPrefix("the record at byte \(offset): "))
        #expect(rules?.ruleID == "S11" && rules?.description.hasSuffix("[S11]") == true)
    }

    /// What the log holds at a slot's place must be the slot's sample: another one, a
    /// position past the record's samples, a record that is not a save — each refused,
    /// named, never a trap.
    @Test func s11TheLogsSampleMustBeTheSlots() async throws {
        let dir = TemporaryDirectory()
        _ = try await MappedSnapshotTests.ledgerWithSnapshot(dir)
        let reader = try LogReader(dir.fs)
        let fresh = try StateLoader.load(dir.fs, reader: reader, useSnapshots: false).state
        let e = fresh.samples.entry(5)
        let uuids = LogSampleUUIDs(reader: reader)
        #expect(try uuids.uuid(slot: 5, recordOffset: e.recordOffset, position: 5, typeCode: e.typeCode, start: e.start,
                               end: e.end) == fresh.samples.uuid(5))
        func refusal(_ body: () throws(SampleIndex.UUIDUnreadable) -> UUID) -> String? {
            do { _ = try body(); return nil } catch { return error.reason }
        }
        let other = LogSampleUUIDs(reader: reader)
        #expect(refusal { () throws(SampleIndex.UUIDUnreadable) -> UUID in try other.uuid(slot: 6, recordOffset: e.recordOffset, position: 6, typeCode: e.typeCode,
                                         start: e.start + 1, end: e.end) }
                == "the save at byte \(e.recordOffset) holds another sample at position 6 than the index says")
        #expect(refusal { () throws(SampleIndex.UUIDUnreadable) -> UUID in try other.uuid(slot: 7, recordOffset: e.recordOffset, position: 3_005, typeCode: e.typeCode,
                                         start: e.start, end: e.end) }
                == "the save at byte \(e.recordOffset) has 3005 samples, the index says position 3005")
        // The log's first record (40 bytes into its first batch) registers an app: not a save.
        let first = reader.start.offset + 40
        let notASave = refusal { () throws(SampleIndex.UUIDUnreadable) -> UUID in try other.uuid(slot: 8, recordOffset: first, position: 0, typeCode: e.typeCode, start: e.start,
                                                end: e.end) }
        #expect(notASave?.hasPrefix("the record at byte \(first) is not a save (kind ") == true)
        // Past the log's end: the log's error, named.
        let past = refusal { () throws(SampleIndex.UUIDUnreadable) -> UUID in try other.uuid(slot: 9, recordOffset: 1 << 30, position: 0, typeCode: e.typeCode, start: e.start,
                                            end: e.end) }
        #expect(past?.hasPrefix("the record at byte \(1 << 30): ") == true)
    }
}

/// The UUID table's compact form (snapshot sections 11, 14, 15) finds exactly what its
/// buckets find, and a damaged one finds nothing rather than trapping.
struct CompactUUIDTableTests {
    /// A table of `count` random UUIDs (slot i holds uuids[i]) in `capacity` buckets.
    static func table(_ count: Int, capacity: Int, seed: UInt64) -> (UUIDTable, [UUID]) {
        var rng = SeededGenerator(seed: seed)
        var uuids: [UUID] = []
        var table = UUIDTable(capacity: capacity)
        for i in 0..<count {
            var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &bytes) { b in
                b.storeBytes(of: rng.next(), toByteOffset: 0, as: UInt64.self)
                b.storeBytes(of: rng.next(), toByteOffset: 8, as: UInt64.self)
            }
            let uuid = UUID(uuid: bytes)
            uuids.append(uuid)
            let known = uuids
            table.insert(uuid, slot: UInt32(i)) { known[Int($0)] }
        }
        return (table, uuids)
    }

    @Test(arguments: [(0, 16), (1, 16), (12, 16), (200, 300), (5_000, 5_000), (5_000, 100)])
    func theCompactFormFindsWhatTheBucketsFind(count: Int, capacity: Int) throws {
        let (table, uuids) = Self.table(count, capacity: capacity, seed: UInt64(count * 31 + capacity))
        let compact = UUIDTable(compact: table.compactForm)
        #expect(compact.count == count && compact.bucketCount == table.bucketCount)
        #expect(compact.compact!.bitmap.count == max(1, table.bucketCount / 64))
        #expect(compact.compact!.ranks.count == (compact.compact!.bitmap.count + 3) / 4)
        #expect(compact.compact!.entries.count == count)
        #expect(compact.compact!.bucketWords() == table.buckets.array)
        #expect(compact == table)
        #expect(compact.checkInvariants(slotCount: count) == [])
        func uuidOf(_ slot: UInt32) -> UUID { uuids[Int(slot)] }
        for (i, uuid) in uuids.enumerated() {
            #expect(table.find(uuid, slotCount: UInt32(count), uuidOf: uuidOf) == UInt32(i))
            #expect(compact.find(uuid, slotCount: UInt32(count), uuidOf: uuidOf) == UInt32(i))
        }
        var rng = SeededGenerator(seed: 99)
        for _ in 0..<500 {
            let absent = UUID(uuid: (UInt8(truncatingIfNeeded: rng.next()), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
                                     UInt8(truncatingIfNeeded: rng.next())))
            #expect(compact.find(absent, slotCount: UInt32(count), uuidOf: uuidOf)
                    == table.find(absent, slotCount: UInt32(count), uuidOf: uuidOf))
        }
        // Changed, a compact table turns into the same buckets and goes on from there.
        var grown = compact
        let extra = UUID()
        grown.insert(extra, slot: UInt32(count)) { $0 < count ? uuids[Int($0)] : extra }
        #expect(grown.compact == nil && grown.count == count + 1)
        #expect(grown.find(extra, slotCount: UInt32(count + 1)) { $0 < count ? uuids[Int($0)] : extra } == UInt32(count))
    }

    /// A run of entries that wraps from the last bucket to bucket 0 is found in both forms.
    @Test func aRunThatWrapsIsFoundCompact() {
        var buckets = [UInt64](repeating: 0, count: 16)
        buckets[15] = UInt64(15) << 32 | 1  // slot 0, home 15
        buckets[0] = UInt64(15) << 32 | 2   // slot 1, home 15: wrapped
        buckets[1] = UInt64(1) << 32 | 3    // slot 2, home 1: after the wrapped one
        let table = UUIDTable(buckets: Column(buckets), count: 3)
        let compact = UUIDTable(compact: table.compactForm)
        #expect(compact.checkInvariants(slotCount: 3) == [])
        #expect(compact.compact!.rank(15) == 2 && compact.compact!.rank(0) == 0 && compact.compact!.rank(1) == 1)
        #expect(compact.compact!.rank(2) == nil)
        // Every lookup that reaches slot 1 asks for its UUID; a fingerprint of 15 finds it.
        var asked: [UInt32] = []
        let probe = compact.compact!.find(15, UUID(uuid: (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), slotCount: 3) { slot in
            asked.append(slot)
            return slot == 1 ? UUID(uuid: (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) : UUID()
        }
        #expect(probe == 1 && asked == [0, 1])
    }

    /// Forged sections: a rank past the entries, entries fewer than the bits, sizes that
    /// do not fit — nothing found or the table refused, never a trap.
    @Test func aForgedCompactTableFindsNothingOrIsRefused() {
        let (table, uuids) = Self.table(100, capacity: 100, seed: 5)
        let good = table.compactForm
        #expect(CompactUUIDTable(bucketCount: good.bucketCount, bitmap: good.bitmap, ranks: good.ranks, entries: good.entries) != nil)
        #expect(CompactUUIDTable(bucketCount: good.bucketCount * 2, bitmap: good.bitmap, ranks: good.ranks, entries: good.entries) == nil)
        #expect(CompactUUIDTable(bucketCount: good.bucketCount + 1, bitmap: good.bitmap, ranks: good.ranks, entries: good.entries) == nil)
        #expect(CompactUUIDTable(bucketCount: 8, bitmap: [0], ranks: [0], entries: []) == nil)
        #expect(CompactUUIDTable(bucketCount: good.bucketCount, bitmap: good.bitmap, ranks: [], entries: good.entries) == nil)
        let ranksPast = Column(good.ranks.array.map { _ in UInt32.max - 1 })
        let forged = UUIDTable(compact: CompactUUIDTable(bucketCount: good.bucketCount, bitmap: good.bitmap, ranks: ranksPast,
                                                          entries: good.entries)!)
        for uuid in uuids { #expect(forged.find(uuid, slotCount: 100) { uuids[Int($0)] } == nil) }
        #expect(forged.checkInvariants(slotCount: 100).map(\.invariant).contains("UUIDTable.compactRanksCountBits"))
        let fewer = UUIDTable(compact: CompactUUIDTable(bucketCount: good.bucketCount, bitmap: good.bitmap, ranks: good.ranks,
                                                         entries: Column(Array(good.entries.array.prefix(10))))!)
        for uuid in uuids { _ = fewer.find(uuid, slotCount: 100) { uuids[Int($0)] } }
        #expect(fewer.checkInvariants(slotCount: 100).map(\.invariant).contains("UUIDTable.compactRanksCountBits"))
    }
}

/// What a hostile review of snapshot version 3 found, each now refused or answered.
struct SnapshotUUIDReviewTests {
    /// Forges entry `index` of section 15 (the UUID table's entries), CRCs made good.
    static func forgeEntry(_ dir: TemporaryDirectory, _ name: String, index: Int, _ value: (UInt64) -> UInt64) throws {
        let path = dir.path + "/" + name
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let p = try #require(MappedSnapshotTests.place(of: 15, in: bytes))
        let at = p.array + 8 * index
        let old = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt64.self) }
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: value(old), toByteOffset: at, as: UInt64.self) }
        MappedSnapshotTests.resign(&bytes, section: 15)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Entries that name no slot, a slot past the slots, or one slot twice (CRCs good):
    /// a writer's load refuses the snapshot (S5) and rebuilds from the log, so an append
    /// that grows the table, or saves a UUID of the forged fingerprint, never traps.
    @Test(arguments: ["no slot", "past the slots", "a slot twice"]) func aForgedEntryMakesTheSnapshotUnreadable(_ what: String) async throws {
        let dir = TemporaryDirectory()
        let name = try await MappedSnapshotTests.ledgerWithSnapshot(dir)
        try Self.forgeEntry(dir, name, index: 0) { e in
            switch what {
            case "no slot": e & 0xFFFF_FFFF_0000_0000
            case "past the slots": e & 0xFFFF_FFFF_0000_0000 | 9_000
            default: e & 0xFFFF_FFFF_0000_0000 | 1  // slot 0 — unless entry 0 is slot 0's, then:
            }
        }
        if what == "a slot twice" {
            // Name, in entry 0, the slot entry 1 names.
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir.path + "/" + name)))
            let p = try #require(MappedSnapshotTests.place(of: 15, in: bytes))
            let second = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: p.array + 8, as: UInt64.self) }
            try Self.forgeEntry(dir, name, index: 0) { $0 & 0xFFFF_FFFF_0000_0000 | second & 0xFFFF_FFFF }
        }
        let reader = try LogReader(dir.fs)
        #expect(throws: SnapshotProblem.unreadable(file: name, reason: "inconsistent columns", rule: "S5")) {
            _ = try SnapshotFile.load(dir.fs, name, reader: reader)
        }
        let ledger = try Ledger.open(dir.fs, options: LedgerOptions(log: testOptions))
        #expect(ledger.openReport.snapshot == nil)
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: try (0..<400).map { i in
            try quantitySample(.stepCount, Double(i), "count", at: "2026-02-01T00:00:00Z", uuid: fixedUUID(500_000 + i))
        }))
        #expect(await ledger.state.checkInvariants() == [])
        try await ledger.close()
    }

    /// A fingerprint forged in place (CRCs good, the entry in the same bucket): the
    /// lookup of that slot's UUID would miss, and its UUID could be saved again — `verify`
    /// names the table's difference from a fresh replay.
    @Test func verifyNamesAForgedFingerprint() async throws {
        let dir = TemporaryDirectory()
        let name = try await MappedSnapshotTests.ledgerWithSnapshot(dir)
        let fresh = try StateLoader.load(dir.fs, reader: try LogReader(dir.fs), useSnapshots: false).state
        let restored = try StateLoader.load(dir.fs, reader: try LogReader(dir.fs)).state
        let entries = try #require(restored.samples.table.compact).entries.array
        let index = try #require(entries.firstIndex { UInt32(truncatingIfNeeded: $0) == 8 })  // slot 7's
        try Self.forgeEntry(dir, name, index: index) { $0 ^ 1 << 63 }
        let forged = try StateLoader.load(dir.fs, reader: try LogReader(dir.fs)).state
        #expect(try forged.samples.slot(of: fresh.samples.uuid(7)) == nil)
        #expect(StateDifference.first(fresh, forged) == StateDifference(projection: "uuidTable", key: fixedUUID(10_007).uuidString))
        let report = try LedgerVerifier.verify(dir.fs)
        #expect(!report.isIntact)
    }

    /// A damaged block of the mapped slot column: a lookup that meets one of its slots
    /// fails with the snapshot's S8 problem, and never reads the log at the offset the
    /// block's zeros give.
    @Test func aDamagedSlotBlockIsTheSnapshotsProblemNotTheLogs() async throws {
        let dir = TemporaryDirectory()
        let name = try await MappedSnapshotTests.ledgerWithSnapshot(dir)
        let path = dir.path + "/" + name
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let slots = try #require(MappedSnapshotTests.place(of: 10, in: bytes))
        bytes[slots.array + 24 * 7 + 3] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let mapped = try MappedSnapshotTests.load(dir, mapped: true)
        do {
            _ = try mapped.samples.slot(of: fixedUUID(10_007))
            Issue.record("a lookup through a damaged slot block answered")
        } catch {
            #expect(error.cause as? SnapshotProblem == .unreadable(file: name, reason: "section 10 block 0 fails its check", rule: "S8"))
        }
        let view = try LedgerReadView(state: mapped, fs: dir.fs, ledgerId: fixedLedgerId, viewer: .owner)
        #expect(throws: SnapshotProblem.unreadable(file: name, reason: "section 10 block 0 fails its check", rule: "S8")) {
            _ = try view.storedSample(fixedUUID(10_007))
        }
    }

    /// Lookups in any order read each record once (a re-import whose order is not the
    /// log's): 3,005 shuffled lookups of a ledger whose samples are in one save, one read.
    @Test func shuffledLookupsReadEachRecordOnce() async throws {
        let dir = TemporaryDirectory()
        _ = try await MappedSnapshotTests.ledgerWithSnapshot(dir)
        let fresh = try StateLoader.load(dir.fs, reader: try LogReader(dir.fs), useSnapshots: false).state
        let restored = try StateLoader.load(dir.fs, reader: try LogReader(dir.fs)).state
        var rng = SeededGenerator(seed: 8)
        for slot in (0..<UInt32(fresh.samples.count)).shuffled(using: &rng) {
            #expect(try restored.samples.slot(of: fresh.samples.uuid(slot)) == slot)
        }
        #expect(restored.samples.logUUIDs?.recordsRead == 1)
    }
}

/// A snapshot an earlier release wrote (S1): skipped with a named warning, the state
/// replayed from the log, and `verify` calls the ledger intact — derived data of an
/// older format is no damage — naming the snapshot it skipped.
struct OlderSnapshotFormatTests {
    @Test(arguments: [UInt32(1), 2]) func aSnapshotOfAnOlderFormatIsSkippedNotAProblem(version: UInt32) async throws {
        let dir = TemporaryDirectory()
        let name = try await MappedSnapshotTests.ledgerWithSnapshot(dir)
        let path = dir.path + "/" + name
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: version.littleEndian, toByteOffset: 8, as: UInt32.self)
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(raw)[0..<124]))
            raw.storeBytes(of: crc.littleEndian, toByteOffset: 124, as: UInt32.self)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let what = version == 1 ? "56-byte slots" : "40-byte slots, with UUIDs"
        let skipped = SnapshotProblem.olderFormat(file: name, version: version, what: what)
        #expect(skipped.description == "snapshot \(name) is of format version \(version) (\(what)), which this release does not read [S1]")
        #expect(throws: skipped) { _ = try SnapshotFile.header(dir.fs, name) }
        let loaded = try StateLoader.load(dir.fs, reader: try LogReader(dir.fs))
        #expect(loaded.snapshot == nil && loaded.state.samples.count == 3_005)
        #expect(loaded.warnings.contains { $0.hasPrefix(skipped.description) })
        let report = try LedgerVerifier.verify(dir.fs)
        #expect(report.isIntact)
        #expect(report.olderSnapshots == [skipped] && report.snapshots.isEmpty && report.snapshotsChecked == 0)
    }
}
