import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerChecksums
import LedgerLog
import TestSupport

/// Rule S8: a reader maps a snapshot's columns instead of reading them, checks each
/// block when it first reads it, and fails — never answers from zeros, never traps —
/// when a block is damaged or forged.
struct MappedSnapshotTests {
    /// A ledger on the real file system (only it maps) with samples of two types, a
    /// deletion, a sync identity and a correlation, and a snapshot of it.
    static func ledgerWithSnapshot(_ dir: TemporaryDirectory) async throws -> String {
        let ledger = try Ledger.create(dir.fs, options: LedgerOptions(log: testOptions))
        try await ledger.grant(appA, share: [.quantity(.bodyMass), .quantity(.stepCount), .quantity(.bloodPressureSystolic),
                                             .quantity(.bloodPressureDiastolic)])
        var samples: [Sample] = []
        for i in 0..<3_000 {
            samples.append(try quantitySample(.stepCount, Double(i), "count", at: "2026-01-01T00:00:00Z", uuid: fixedUUID(10_000 + i)))
        }
        var sync = Metadata()
        sync.append(Metadata.WellKnownKey.syncIdentifier, .string("scale-1"))
        sync.append(Metadata.WellKnownKey.syncVersion, .integer(1))
        samples.append(try quantitySample(.bodyMass, 70, "kg", at: "2026-01-02T08:00:00Z", uuid: fixedUUID(1), metadata: sync))
        samples.append(try quantitySample(.bodyMass, 71, "kg", at: "2026-01-03T08:00:00Z", uuid: fixedUUID(2)))
        let t = date("2026-01-04T08:00:00Z")
        let sys = try QuantitySample(type: .bloodPressureSystolic, quantity: try Quantity(120, unit: "mmHg"), start: t, end: t, uuid: fixedUUID(3))
        let dia = try QuantitySample(type: .bloodPressureDiastolic, quantity: try Quantity(80, unit: "mmHg"), start: t, end: t, uuid: fixedUUID(4))
        samples.append(.correlation(try Correlation(type: .bloodPressure, start: t, end: t, objects: [sys, dia], uuid: fixedUUID(5))))
        try await ledger.execute(.save(bundleIdentifier: appA.bundleIdentifier, samples: samples))
        try await ledger.execute(.delete(bundleIdentifier: nil, uuids: [fixedUUID(2)], reason: "typo"))
        let name = try await ledger.snapshot()
        try await ledger.close()
        return name
    }

    static func load(_ dir: TemporaryDirectory, mapped: Bool) throws -> LedgerState {
        try StateLoader.load(dir.fs, reader: try LogReader(dir.fs), mapped: mapped).state
    }

    /// Where a column section is in a snapshot file (S3's layout): its section header,
    /// its payload (blockSize · blockCount · CRCs · padding) and its array.
    struct Place {
        let header: Int, payload: Int, array: Int, arrayLength: Int
    }

    static func place(of section: UInt32, in bytes: [UInt8]) -> Place? {
        var offset = 128
        while offset + 24 <= bytes.count {
            let id = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
            let length = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self) })
            let payload = offset + 24
            if id == section {
                let blocks = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: payload + 4, as: UInt32.self) })
                let prefix = (8 + 4 * blocks + 7) / 8 * 8
                return Place(header: offset, payload: payload, array: payload + prefix, arrayLength: length - prefix)
            }
            offset = payload + length + (8 - length % 8) % 8
        }
        return nil
    }

    @Test func s8AMappedSnapshotAnswersAsOneReadWhole() async throws {
        let dir = TemporaryDirectory()
        _ = try await Self.ledgerWithSnapshot(dir)
        let mapped = try Self.load(dir, mapped: true), read = try Self.load(dir, mapped: false)
        #expect(mapped.samples.slots.isMapped && mapped.samples.table.buckets.isMapped && mapped.statistics.values.isMapped)
        #expect(!read.samples.slots.isMapped)
        #expect(StateDifference.first(mapped, read) == nil)
        #expect(mapped.digest() == read.digest())
        var a = try LedgerReadView(state: mapped, fs: dir.fs, ledgerId: fixedLedgerId, viewer: .owner)
        var b = try LedgerReadView(state: read, fs: dir.fs, ledgerId: fixedLedgerId, viewer: .owner)
        for type in [ObjectType.quantity(.stepCount), .quantity(.bodyMass), .correlation(.bloodPressure)] {
            #expect(try a.samples(SampleQuery(type: type)).samples == (try b.samples(SampleQuery(type: type)).samples))
        }
        #expect(try mapped.checkIntact() == ())
    }

    /// A flipped byte in the slot column: the ledger opens (no column is read whole),
    /// and the read that touches the block fails with S8 — no answer from it.
    @Test func s8ADamagedBlockFailsTheReadThatTouchesIt() async throws {
        let dir = TemporaryDirectory()
        let name = try await Self.ledgerWithSnapshot(dir)
        let path = dir.path + "/" + name
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let slots = try #require(Self.place(of: 10, in: bytes))
        bytes[slots.array + 40 * 7 + 3] ^= 0x40  // a UUID byte of slot 7
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let mapped = try Self.load(dir, mapped: true)  // opens: no column read whole
        #expect(mapped.samples.slots.isMapped)
        var view = try LedgerReadView(state: mapped, fs: dir.fs, ledgerId: fixedLedgerId, viewer: .owner)
        #expect(throws: SnapshotProblem.unreadable(file: name, reason: "section 10 block 0 fails its check", rule: "S8")) {
            try view.samples(SampleQuery(type: .quantity(.stepCount)))
        }
        // Read whole, the same file is refused at once (S3), and the state comes from the log.
        let loaded = try StateLoader.load(dir.fs, reader: try LogReader(dir.fs))
        #expect(loaded.snapshot == nil)
        #expect(loaded.warnings.first?.hasPrefix("snapshot \(name) is damaged: checksum of a column [S3]") == true)
    }

    /// A forged timeline whose block checksum is right but which names a slot that
    /// does not exist: the read fails with S8, never indexes past the slots.
    @Test func s8AForgedTimelineNamingNoSlotFailsTheRead() async throws {
        let dir = TemporaryDirectory()
        let name = try await Self.ledgerWithSnapshot(dir)
        let path = dir.path + "/" + name
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let timelines = try #require(Self.place(of: 12, in: bytes))
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(1_000_000).littleEndian, toByteOffset: timelines.array, as: UInt32.self) }
        // Sealed again as a forger would: the block's CRC (one block), then the prefix's
        // CRC in the section header.
        #expect(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: timelines.payload + 4, as: UInt32.self) } == 1)
        let block = CRC32C.checksum(Array(bytes[timelines.array..<timelines.array + timelines.arrayLength]))
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: block.littleEndian, toByteOffset: timelines.payload + 8, as: UInt32.self) }
        let prefix = CRC32C.checksum(Array(bytes[timelines.payload..<timelines.array]))
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: prefix.littleEndian, toByteOffset: timelines.header + 16, as: UInt32.self) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let mapped = try Self.load(dir, mapped: true)
        var view = try LedgerReadView(state: mapped, fs: dir.fs, ledgerId: fixedLedgerId, viewer: .owner)
        #expect(throws: SnapshotProblem.self) { try view.samples(SampleQuery(type: .quantity(.bodyMass))) }
        #expect(mapped.snapshotDamage?.problem == .unreadable(file: name, reason: "section 12 block 0 fails its check", rule: "S8"))
    }
}
