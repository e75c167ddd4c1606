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
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: samples))
        try await ledger.append(.delete(bundleIdentifier: nil, uuids: [fixedUUID(2)], reason: "typo"))
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
        #expect(mapped.samples.slots.isMapped && mapped.samples.table.compact?.entries.isMapped == true
                && mapped.samples.table.compact?.bitmap.isMapped == true && mapped.statistics.values.isMapped)
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
        bytes[slots.array + 24 * 7 + 3] ^= 0x40  // a byte of slot 7's start
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

extension MappedSnapshotTests {
    /// Recomputes a column section's block CRCs and its prefix's CRC (a forgery that
    /// only the value checks can catch).
    static func resign(_ bytes: inout [UInt8], section: UInt32) {
        guard let p = place(of: section, in: bytes) else { return }
        let blockSize = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: p.payload, as: UInt32.self) })
        let blocks = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: p.payload + 4, as: UInt32.self) })
        for b in 0..<blocks {
            let lower = p.array + b * blockSize, upper = min(p.array + p.arrayLength, lower + blockSize)
            let crc = CRC32C.checksum(Array(bytes[lower..<upper]))
            bytes.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, toByteOffset: p.payload + 8 + 4 * b, as: UInt32.self) }
        }
        let prefix = CRC32C.checksum(Array(bytes[p.payload..<p.array]))
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: prefix.littleEndian, toByteOffset: p.header + 16, as: UInt32.self) }
    }

    /// verify's load (mapped, checked whole) fails or succeeds exactly as a read does,
    /// with the same problem and the same state: every byte of the header, of each
    /// section header and column prefix, a spread of the other bytes, and values
    /// forged with good checksums (a type code out of range, an app said to overflow
    /// without an entry, a timeline value that is no slot, a flag that is not 0 or 1).
    @Test func aMappingCheckedWholeLoadsAsAReadDoes() async throws {
        let dir = TemporaryDirectory()
        let name = try await Self.ledgerWithSnapshot(dir)
        let path = dir.path + "/" + name
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let reader = try LogReader(dir.fs)
        func load(checkingWhole: Bool) -> Result<LedgerState, SnapshotProblem> {
            Result { () throws(SnapshotProblem) -> LedgerState in
                try SnapshotFile.load(dir.fs, name, reader: reader, mapped: checkingWhole, checkingWhole: checkingWhole).1
            }
        }
        // Each case a change to the original (made when it is tried: the file is large).
        var cases: [(String, (inout [UInt8]) -> Void)] = [("intact", { _ in })]
        var positions = Set(0..<SnapshotFile.headerLength)
        for id: UInt32 in [1, 2, 3, 4, 8, 10, 11, 12, 13, 20, 21, 22, 23, 24, 30, 31, 50, 51] {
            guard let p = Self.place(of: id, in: original) else { continue }
            // A column's header and prefix; a small section's header (`place` reads a
            // column's layout, which a small section does not have).
            positions.formUnion(p.header..<([10, 11, 12, 13, 30, 31].contains(id) ? p.array : p.header + 24))
        }
        positions.formUnion(stride(from: 0, to: original.count, by: max(251, original.count / 600)))
        for i in positions.sorted() where i < original.count {
            cases.append(("byte \(i)", { $0[i] ^= 0x41 }))
        }
        let slots = try #require(Self.place(of: 10, in: original))
        func forged(_ what: String, section: UInt32, _ change: @escaping (inout [UInt8]) -> Void) {
            cases.append((what, { bytes in
                change(&bytes)
                Self.resign(&bytes, section: section)
            }))
        }
        forged("type code out of range", section: 10) { b in
            b.withUnsafeMutableBytes { raw in
                let at = slots.array + 24 * 9 + 16
                let word = raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)
                raw.storeBytes(of: word & ~(0x7FF << 40) | (0x700 << 40), toByteOffset: at, as: UInt64.self)
            }
        }
        forged("app overflow without an entry", section: 10) { b in
            b.withUnsafeMutableBytes { raw in
                let at = slots.array + 24 * 11 + 16
                let word = raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)
                raw.storeBytes(of: word | (0x7FF << 53), toByteOffset: at, as: UInt64.self)
            }
        }
        let timelines = try #require(Self.place(of: 12, in: original))
        forged("timeline value beyond the slots", section: 12) { b in
            b.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(1_000_000), toByteOffset: timelines.array + 4 * 5, as: UInt32.self) }
        }
        let flags = try #require(Self.place(of: 31, in: original))
        forged("flag that is not 0 or 1", section: 31) { b in b[flags.array + 17] = 2 }

        var refused = 0
        for (what, change) in cases {
            var bytes = original
            change(&bytes)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            switch (load(checkingWhole: false), load(checkingWhole: true)) {
            case (.success(let read), .success(let mapped)):
                #expect(StateDifference.first(read, mapped) == nil, "\(what)")
                #expect(read.digest() == mapped.digest(), "\(what)")
                #expect(mapped.snapshotDamage == nil && mapped.samples.isMapped, "\(what)")
            case (.failure(let read), .failure(let mapped)):
                #expect(read == mapped, "\(what)")
                refused += 1
            case (let read, let mapped):
                Issue.record("\(what): read \(read), mapped \(mapped)")
            }
        }
        #expect(refused > cases.count / 4)
    }
}
