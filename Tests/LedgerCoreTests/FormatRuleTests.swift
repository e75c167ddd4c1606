import Foundation
import Testing
import LedgerChecksums
import HealthModel
@testable import LedgerCore
import LedgerLog
import TestSupport

/// A forged payload, snapshot or refused event per rule of events/FORMAT.md Parts 2
/// and 3 that had no test of its own, each with the exact error the spec says.
struct EventFormatRuleTests {
    static func decode(_ kind: EventKind, version: UInt16? = nil, _ payload: [UInt8]) throws -> Event {
        try payload.withUnsafeBytes { raw in
            try EventCodec.decode(kind: kind.rawValue, version: version ?? kind.currentVersion, payload: raw)
        }
    }

    static func save(_ samples: [Sample]) -> [UInt8] {
        EventCodec.payload(.samplesSaved(app: 1, samples: samples.map { SavedSample($0) }))
    }

    static func index(of needle: [UInt8], in bytes: [UInt8]) throws -> Int {
        try #require((0...(bytes.count - needle.count)).first { Array(bytes[$0..<$0 + needle.count]) == needle })
    }

    static func uuidBytes(_ u: UUID) -> [UInt8] { withUnsafeBytes(of: u.uuid) { Array($0) } }

    @Test func k1AKindOrVersionThisReaderDoesNotKnowIsNamed() throws {
        #expect(throws: EventDecodingError.unknownKind(kind: 99, version: 1)) {
            try [UInt8(0)].withUnsafeBytes { try EventCodec.decode(kind: 99, version: 1, payload: $0) }
        }
        #expect(throws: EventDecodingError.unknownVersion(kind: 1, version: 9)) { try Self.decode(.appRegistered, version: 9, [1]) }
        #expect(EventDecodingError.unknownKind(kind: 99, version: 1).description
                == "unknownKind: event kind 99 (version 1) is not known to this version [K1]")
    }

    @Test func k2APayloadIsExactlyOneEvent() throws {
        let payload = EventCodec.payload(.appRegistered(app: 1, appA))
        #expect(throws: EventDecodingError.truncated(offset: payload.count - 1)) {
            try Self.decode(.appRegistered, Array(payload.dropLast()))
        }
        #expect(throws: EventDecodingError.trailingBytes(offset: payload.count)) { try Self.decode(.appRegistered, payload + [0]) }
        #expect(EventDecodingError.trailingBytes(offset: 7).description == "trailingBytes: unexpected bytes from byte 7 [K2]")
    }

    @Test func k3AFieldOutsideItsEncodingIsMalformed() throws {
        var payload = EventCodec.payload(.appRegistered(app: 1, appA))
        payload[payload.count - 1] = 2  // `imported` is a bool: 0 or 1
        let refusal = EventDecodingError.malformed(offset: payload.count - 1, reason: "bad bool")
        #expect(throws: refusal) { try Self.decode(.appRegistered, payload) }
        #expect(refusal.description == "malformed: byte \(payload.count - 1): bad bool [K3]")
    }

    @Test func d1ADateOutsideYears1To9999IsMalformed() throws {
        let sample = try quantitySample(.bodyMass, 70, "kg", at: "2026-02-01T08:00:00Z", uuid: fixedUUID(1))
        var payload = Self.save([sample])
        let start = try Self.index(of: Self.uuidBytes(fixedUUID(1)), in: payload) + 16 + 2
        withUnsafeBytes(of: (1e15).bitPattern.littleEndian) { payload.replaceSubrange(start..<start + 8, with: $0) }
        let refusal = EventDecodingError.malformed(offset: start, reason: "date outside \(ISO8601.validRangeText)", rule: "D1")
        #expect(throws: refusal) { try Self.decode(.samplesSaved, payload) }
        #expect(refusal.description.hasSuffix("[D1]"))
    }

    @Test func d2AUTCOffsetBeyond2359IsMalformed() throws {
        let at = date("2026-02-01T08:00:00Z")
        let common = try SampleCommon(uuid: fixedUUID(2), startDate: at, endDate: at,
                                      writtenOffsets: WrittenOffsets(start: 36_000, end: 36_000, creation: nil))
        let sample = try QuantitySample(type: .bodyMass, quantity: try Quantity(70, unit: "kg"), common: common)
        var payload = Self.save([.quantity(sample)])
        // zigzag(36,000) = 72,000 → C0 B2 04; zigzag(86,400) = 172,800 → 80 C6 0A (same length)
        let offsets = try Self.index(of: [0xC0, 0xB2, 0x04, 0xC0, 0xB2, 0x04], in: payload)
        payload.replaceSubrange(offsets..<offsets + 3, with: [0x80, 0xC6, 0x0A])
        let refusal = EventDecodingError.malformed(offset: offsets + 6, reason: "UTC offset beyond ±23:59", rule: "D2")
        #expect(throws: refusal) { try Self.decode(.samplesSaved, payload) }
        #expect(refusal.description == "malformed: byte \(offsets + 6): UTC offset beyond ±23:59 [D2]")
    }

    @Test func v2ACorrelationMemberThatIsNotAQuantityIsRefusedOnItsFirstByte() throws {
        let at = date("2026-02-01T08:00:00Z")
        let sys = try QuantitySample(type: .bloodPressureSystolic, quantity: try Quantity(120, unit: "mmHg"), start: at, end: at, uuid: fixedUUID(3))
        let dia = try QuantitySample(type: .bloodPressureDiastolic, quantity: try Quantity(80, unit: "mmHg"), start: at, end: at, uuid: fixedUUID(4))
        let bp = try Correlation(type: .bloodPressure, start: at, end: at, objects: [sys, dia], uuid: fixedUUID(5))
        var payload = Self.save([.correlation(bp)])
        let member = try Self.index(of: Self.uuidBytes(fixedUUID(3)), in: payload) - 1
        #expect(payload[member] == 1)  // kind: quantity
        payload[member] = 2  // a category
        let refusal = EventDecodingError.malformed(offset: member, reason: SampleCodec.memberRule, rule: "V2")
        #expect(throws: refusal) { try Self.decode(.samplesSaved, payload) }
        #expect(refusal.description == "malformed: byte \(member): a correlation member must be a quantity sample and replaces nothing [V2]")
    }

    @Test func v3AUnitOutsideTheBoundedGrammarIsUnitSyntax() throws {
        let sample = try quantitySample(.bodyMass, 70, "kg", at: "2026-02-01T08:00:00Z", uuid: fixedUUID(6))
        var payload = Self.save([sample])
        let unit = try Self.index(of: [2, UInt8(ascii: "k"), UInt8(ascii: "g")], in: payload)
        payload.replaceSubrange(unit + 1..<unit + 3, with: Array("((".utf8))
        var modelError: (any Error)?
        do { _ = try Quantity(70, unit: "((") } catch { modelError = error }
        guard case .unitSyntax? = modelError as? HealthModelError else {
            Issue.record("\"((\" parsed: \(String(describing: modelError))")
            return
        }
        let refusal = EventDecodingError.malformed(offset: payload.count, reason: "the model refuses the sample: \(modelError!)", rule: "V3")
        #expect(throws: refusal) { try Self.decode(.samplesSaved, payload) }
        #expect(refusal.description.hasSuffix("[V3]"))
    }

    /// E7: an event holds at least one item, and an import starts once.
    @Test func e7EmptyCallsAndASecondStartOfAnImportAreRefused() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        await #expect(throws: RuleViolation.emptyCall("a save", rule: "E7")) {
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: []))
        }
        await #expect(throws: RuleViolation.emptyCall("a delete", rule: "E7")) {
            try await ledger.append(.delete(bundleIdentifier: nil, uuids: [], reason: nil))
        }
        let start = ExportImportStart(importId: fixedUUID(9), contentSHA256: [UInt8](repeating: 1, count: 32), exportDate: nil,
                                      locale: nil, exportVersion: nil, sourcePath: "export.zip", again: false, me: [])
        try await ledger.append(.startImport(start))
        await #expect(throws: RuleViolation.importMismatch(fixedUUID(9), "was already started")) {
            try await ledger.append(.startImport(start))
        }
        #expect(RuleViolation.importMismatch(fixedUUID(9), "was already started").description
                == "importMismatch: import \(fixedUUID(9).uuidString) was already started [E7]")
    }
}

/// Snapshot rules (Part 3): each forged file is refused with the rule it breaks.
struct SnapshotFormatRuleTests {
    /// A ledger with samples, its snapshot's name and bytes.
    static func snapshotted() async throws -> (fs: SimulatedFileSystem, name: String, bytes: [UInt8]) {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        for day in 1...3 {
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier,
                                           samples: [try quantitySample(.bodyMass, 70, "kg", at: "2026-02-0\(day)T08:00:00Z")]))
        }
        let name = try await ledger.snapshot()
        try await ledger.close()
        return (fs, name, fs.currentBytes(name))
    }

    /// Sections after the 128-byte header: (id, offset of the section header, payload length).
    static func sections(_ bytes: [UInt8]) -> [(id: UInt32, at: Int, length: Int)] {
        var out: [(UInt32, Int, Int)] = []
        var at = 128
        while at + 24 <= bytes.count {
            let (id, length) = bytes.withUnsafeBytes {
                (UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt32.self)),
                 Int(UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self))))
            }
            out.append((id, at, length))
            at += 24 + length + (8 - length % 8) % 8
        }
        return out
    }

    static func load(_ fs: SimulatedFileSystem, _ name: String, _ bytes: [UInt8]) throws(SnapshotProblem) {
        fs.setBytes(name, bytes)
        let reader: LogReader
        do { reader = try LogReader(fs) } catch { Issue.record("\(error)"); return }
        _ = try SnapshotFile.load(fs, name, reader: reader)
    }

    @Test func s3AFlippedByteInAColumnFailsItsBlockChecksum() async throws {
        let (fs, name, bytes) = try await Self.snapshotted()
        try Self.load(fs, name, bytes)  // intact
        let slots = try #require(Self.sections(bytes).first { $0.id == 10 })
        var damaged = bytes
        damaged[slots.at + 24 + slots.length - 1] ^= 0x01  // the last byte of the slot array
        #expect(throws: SnapshotProblem.unreadable(file: name, reason: "checksum of a column", rule: "S3")) {
            try Self.load(fs, name, damaged)
        }
        #expect(SnapshotProblem.unreadable(file: name, reason: "checksum of a column", rule: "S3").description
                == "snapshot \(name) is damaged: checksum of a column [S3]")
    }

    @Test func s5ASectionLongerThanTheFileIsRefusedBeforeItIsRead() async throws {
        let (fs, name, bytes) = try await Self.snapshotted()
        let first = try #require(Self.sections(bytes).first)
        var forged = bytes
        forged.withUnsafeMutableBytes { $0.storeBytes(of: UInt64(1 << 40).littleEndian, toByteOffset: first.at + 8, as: UInt64.self) }
        let refusal = SnapshotProblem.unreadable(file: name, reason: "section \(first.id) of \(1 << 40) bytes at byte 128 does not fit the file",
                                                 rule: "S5")
        #expect(throws: refusal) { try Self.load(fs, name, forged) }
    }

    /// S5: the counts section names each kind folded, once, with a count of at least
    /// one; a zero (which no replay holds) makes the snapshot unreadable, checksum
    /// or no checksum.
    @Test func s5AZeroEventCountIsRefused() async throws {
        let (fs, name, bytes) = try await Self.snapshotted()
        let counts = try #require(Self.sections(bytes).first { $0.id == 4 })
        let payload = counts.at + 24
        // varint lastSequence · zigzag lastRecordedAt · varint n · n × (u16 kind · varint count)
        var at = payload
        func varint() -> UInt64 {
            var value: UInt64 = 0, shift: UInt64 = 0
            while true {
                let b = bytes[at]; at += 1
                value |= UInt64(b & 0x7F) << shift
                if b < 0x80 { return value }
                shift += 7
            }
        }
        _ = varint(); _ = varint()
        let n = varint()
        var countAt: Int?
        for _ in 0..<n {
            let kind = UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
            at += 2
            if kind == EventKind.samplesSaved.rawValue { countAt = at }
            #expect(varint() > 0)
        }
        let saves = try #require(countAt)
        #expect(bytes[saves] == 3)  // three saves, one byte
        var forged = bytes
        forged[saves] = 0
        let crc = forged.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[payload..<payload + counts.length])) }
        forged.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, toByteOffset: counts.at + 16, as: UInt32.self) }
        do {
            try Self.load(fs, name, forged)
            Issue.record("a zero count was restored")
        } catch {
            #expect(error.description == "snapshot \(name) is damaged: section contents: malformed: byte 20: event counts: "
                    + "kind 6 counted 0 times [S5] [S2]")
        }
    }

    /// S6: a snapshot with slots but without the statistics columns (written before
    /// them) is not used.
    @Test func s6ASnapshotWithoutTheStatisticsColumnsIsNotUsed() async throws {
        let (fs, name, bytes) = try await Self.snapshotted()
        var without = Array(bytes[0..<128])
        for s in Self.sections(bytes) where s.id != 30 && s.id != 31 {
            let padding: Int = (8 - s.length % 8) % 8
            let end: Int = s.at + 24 + s.length + padding
            without += bytes[s.at..<end]
        }
        #expect(without.count < bytes.count)
        let inner = EventDecodingError.malformed(offset: 0, reason: "no statistics projection (written by an older version)")
        #expect(throws: SnapshotProblem.unreadable(file: name, reason: "statistics: \(inner)", rule: "S6")) {
            try Self.load(fs, name, without)
        }
    }
}
