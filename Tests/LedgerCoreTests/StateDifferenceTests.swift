import Foundation
import Testing
import HealthModel
import LedgerChecksums
@testable import LedgerCore
import LedgerLog
import TestSupport

/// `StateDifference.first` names the first slot whose entry differs, whichever part
/// of the entry it is (the slot's fields, or what the index's tables say of it), and
/// passes over differences an entry does not show.
struct StateDifferenceTests {
    /// A state with two records: three samples (the second with a sync identity), then one.
    static func state() async throws -> LedgerState {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.stepCount), .quantity(.heartRate)])
        let synced: Metadata = [Metadata.WellKnownKey.syncIdentifier: .string("s-1"), Metadata.WellKnownKey.syncVersion: .integer(1)]
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [
            try quantitySample(.stepCount, 10, "count", at: "2026-01-05T08:00:00Z", uuid: fixedUUID(1)),
            try quantitySample(.stepCount, 11, "count", at: "2026-01-05T09:00:00Z", uuid: fixedUUID(2), metadata: synced),
            try quantitySample(.heartRate, 60, "count/min", at: "2026-01-05T10:00:00Z", uuid: fixedUUID(3)),
        ]))
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [
            try quantitySample(.heartRate, 61, "count/min", at: "2026-01-05T11:00:00Z", uuid: fixedUUID(4)),
        ]))
        let state = await ledger.state
        try await ledger.close()
        return state
    }

    /// `state` with its index's columns changed by `change`.
    static func changed(_ state: LedgerState, _ change: (inout SampleIndex.Columns) -> Void) -> LedgerState {
        var columns = state.samples.columns
        change(&columns)
        var other = state
        other.samples = SampleIndex(columns: columns)
        return other
    }

    static func slot(_ s: SampleIndex.Slot, start: Double? = nil, recordOffset: UInt64? = nil) -> SampleIndex.Slot {
        SampleIndex.Slot(start: start ?? s.start, end: s.end, recordOffset: recordOffset ?? s.recordOffset,
                         typeCode: s.typeCode, state: s.state, appField: s.appField)
    }

    @Test func theFirstDifferingEntryIsNamed() async throws {
        let a = try await Self.state()
        #expect(a.samples.count == 4)
        #expect(StateDifference.first(a, a) == nil)
        let samples = { (uuid: UUID) in StateDifference(projection: "samples", key: uuid.uuidString) }

        // A slot's date, record offset; its UUID, only where positions are ignored (else
        // the record offset and position say which sample of the log it is).
        let later = Self.changed(a) { $0.slots[2] = Self.slot($0.slots[2], start: $0.slots[2].start + 1) }
        #expect(StateDifference.first(a, later) == samples(fixedUUID(3)))
        let renamed = Self.changed(a) { $0.uuids[1] = fixedUUID(9).uuid }
        #expect(StateDifference.first(a, renamed, ignoringPosition: true) == samples(fixedUUID(2)))
        let moved = Self.changed(a) { c in for i in 0..<3 { c.slots[i] = Self.slot(c.slots[i], recordOffset: c.slots[i].recordOffset + 8) } }
        #expect(StateDifference.first(a, moved) == samples(fixedUUID(1)))
        // Ignoring positions, a record offset is not a difference, and nothing else differs.
        #expect(StateDifference.first(a, moved, ignoringPosition: true) == nil)

        // What the tables say: the position (slot 2 made to begin a record), the sync identity.
        let split = Self.changed(a) { $0.recordStarts[0] |= 1 << 2 }
        #expect(StateDifference.first(a, split) == samples(fixedUUID(3)))
        let unsynced = Self.changed(a) { $0.syncOfSlot = [:] }
        #expect(StateDifference.first(a, unsynced) == samples(fixedUUID(2)))
        let resynced = Self.changed(a) { $0.syncOfSlot[3] = SampleIndex.SyncValue(identifier: "s-2", version: 1) }
        #expect(StateDifference.first(a, resynced) == samples(fixedUUID(4)))

        // A date equal as a number but not as bits: the entries agree; the index does not.
        let zero = Self.changed(a) { $0.slots[3] = Self.slot($0.slots[3], start: -0.0) }
        let plusZero = Self.changed(a) { $0.slots[3] = Self.slot($0.slots[3], start: 0.0) }
        #expect(StateDifference.first(zero, plusZero) == StateDifference(projection: "sampleIndex", key: "internal tables"))

        // A slot only one side has.
        let shorter = Self.changed(a) { c in
            c.slots = Column(Array(c.slots.array.prefix(3)))
        }
        #expect(StateDifference.first(shorter, a) == samples(fixedUUID(4)))
    }
}

extension StateDifferenceTests {
    /// `verify` digests the fresh state once per point it compares a snapshot at (and
    /// reuses that at the end): a snapshot inside the log whose stored digest is
    /// forged is named, one at the end that holds is not, and the report's digest is
    /// the whole log's.
    @Test func verifyChecksEachSnapshotsStoredDigestAtItsPoint() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try await Story.write(to: fs)
        let digest = await ledger.state.digest()
        try await ledger.close()
        let reader = try LogReader(fs)
        let middle = try StateLoader.load(fs, reader: reader, limit: .sequence(12), useSnapshots: false)
        let end = try StateLoader.load(fs, reader: reader, useSnapshots: false)
        #expect(middle.state.lastSequence == 12)
        let forged = try SnapshotFile.write(middle.state, at: try #require(middle.position), ledgerId: fixedLedgerId, to: fs)
        let sound = try SnapshotFile.write(end.state, at: try #require(end.position), ledgerId: fixedLedgerId, to: fs)
        // The middle one's stored digest: the end's, its header checksum made good.
        var bytes = fs.currentBytes(forged)
        bytes.replaceSubrange(80..<112, with: digest.array)
        let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<124])) }
        withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange(124..<128, with: $0) }
        fs.setBytes(forged, bytes)

        let report = try LedgerVerifier.verify(fs)
        #expect(report.snapshotsChecked == 2)
        #expect(report.snapshots == [LedgerVerifier.SnapshotFinding(file: forged, sequence: 12,
                                                                      problem: "stored digest differs from a fresh replay's",
                                                                      difference: nil)])
        #expect(!report.snapshots.contains { $0.file == sound })
        #expect(report.digest == digest)
        #expect(report.events == 20)
    }
}

extension StateDifferenceTests {
    /// What verify throws when the log cannot be read: the log check's error (it ran
    /// first; it now runs beside the replay and still comes first), then the reader's.
    @Test func verifyThrowsTheLogChecksErrorFirst() throws {
        let empty = SimulatedFileSystem()
        try empty.createFolder()
        #expect(throws: LogError.ledgerNotFound(path: empty.path)) { _ = try LedgerVerifier.verify(empty) }

        // A header of zeros: the log check reports it as damage (H1) rather than
        // throwing; opening a reader then refuses the file, and that is what verify throws.
        let zeros = SimulatedFileSystem()
        zeros.setBytes(LogWriter.logFileName, [UInt8](repeating: 0, count: 64))
        let found = #expect(throws: LogError.self) { _ = try LedgerVerifier.verify(zeros) }
        guard case .notALedgerLog(_, "H1")? = found else {
            Issue.record("expected notALedgerLog [H1], got \(String(describing: found))")
            return
        }
        let logCheck = try LogVerifier.verify(zeros)
        #expect(logCheck.damage?.kind == .fileHeader)
    }
}
