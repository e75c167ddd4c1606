import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerLog
import TestSupport

/// `verify` names the first bad event for logs written by a tampered tool (events
/// appended straight to the log, past the rules), for flipped bytes and for
/// damaged snapshots.
struct VerifyTests {
    /// Appends events one batch each, without the rules.
    static func tamperedLog(_ events: [Event]) async throws -> SimulatedFileSystem {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, ledgerId: fixedLedgerId, options: testOptions)
        for event in events {
            var batch = RecordBatch()
            EventCodec.append(event, to: &batch)
            try await writer.append(batch)
        }
        try await writer.close()
        return fs
    }

    static func save(_ uuid: UUID, app: AppOrdinal = 1) throws -> Event {
        .samplesSaved(app: app, samples: [SavedSample(try quantitySample(.bodyMass, 70, "kg", at: "2026-02-01T08:00:00Z", uuid: uuid))])
    }

    static func grant(_ share: Answer) -> Event {
        .authorizationDecided(AuthorizationDecision(app: 1, type: .quantity(.bodyMass), share: share, read: nil))
    }

    @Test func aSaveAfterTheRevocationIsNamed() async throws {
        let fs = try await Self.tamperedLog([.appRegistered(app: 1, appA), Self.grant(.granted), try Self.save(fixedUUID(1)),
                                             Self.grant(.denied), try Self.save(fixedUUID(2))])
        let report = try LedgerVerifier.verify(fs)
        #expect(report.log.isIntact)
        #expect(!report.isIntact)
        guard case .ruleViolation(let sequence, let offset, let violation)? = report.eventProblem else {
            Issue.record("no rule violation reported: \(String(describing: report.eventProblem))")
            return
        }
        #expect(sequence == 5)
        #expect(offset > 0)
        #expect(violation == .authorizationDenied(app: "com.example.a", type: "HKQuantityTypeIdentifierBodyMass"))
        #expect(report.events == 4)  // checked up to the bad one
        // and a store refuses to open it for writing
        #expect(throws: LedgerError.self) { try Ledger.open(fs) }
    }

    @Test func aDuplicateUUIDIsNamed() async throws {
        let fs = try await Self.tamperedLog([.appRegistered(app: 1, appA), Self.grant(.granted), try Self.save(fixedUUID(1)),
                                             try Self.save(fixedUUID(1))])
        let report = try LedgerVerifier.verify(fs)
        guard case .ruleViolation(4, _, .duplicateUUID(fixedUUID(1)))? = report.eventProblem else {
            Issue.record("expected duplicateUUID at 4, got \(String(describing: report.eventProblem))")
            return
        }
    }

    @Test func aForgedCharacteristicFromAnAppDoesNotDecode() async throws {
        // characteristicSet must come from the owner: forge actor = app 1 in the payload
        var payload = EventCodec.payload(.characteristicSet(.bloodType(.oNegative)))
        payload[0] = 1
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, options: testOptions)
        var batch = RecordBatch()
        EventCodec.append(.appRegistered(app: 1, appA), to: &batch)
        batch.append(kind: EventKind.characteristicSet.rawValue, version: 1, payload: payload)
        try await writer.append(batch)
        try await writer.close()
        guard case .undecodable(2, _, .malformed(_, let reason, let rule))? = try LedgerVerifier.verify(fs).eventProblem else {
            Issue.record("expected an undecodable event 2")
            return
        }
        #expect(reason == "characteristicSet needs the owner as its actor")
        #expect(rule == "E6")  // only the owner sets characteristics: the decoder enforces the actor
    }

    @Test func anUnknownFutureEventKindIsNamedNotACrash() async throws {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, options: testOptions)
        try await writer.append([LogRecord(kind: 77, kindVersion: 1, payload: [0])])
        try await writer.close()
        guard case .undecodable(1, _, .unknownKind(kind: 77, version: 1))? = try LedgerVerifier.verify(fs).eventProblem else {
            Issue.record("expected unknownKind at 1")
            return
        }
    }

    @Test func aFlippedByteIsNamedBySequenceAndOffset() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try await Story.write(to: fs)
        try await ledger.close()
        var bytes = fs.currentBytes(LogWriter.logFileName)
        // a byte inside event 17's payload (the height sample)
        let reader = try LogReader(fs)
        let record = try reader.record(sequence: 17)
        bytes[Int(record.offset) + 40] ^= 0x01
        fs.setBytes(LogWriter.logFileName, bytes)
        let report = try LedgerVerifier.verify(fs)
        let damage = try #require(report.log.damage)
        #expect(damage.kind == .recordChecksum)
        #expect(damage.sequence == 17)
        #expect(damage.offset == record.offset)
        #expect(!report.isIntact)
    }

    @Test func aDamagedSnapshotIsDetectedIgnoredAndRebuilt() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try await Story.write(to: fs)
        let name = try await ledger.snapshot()
        let digest = await ledger.state.digest()
        try await ledger.close()
        #expect(try LedgerVerifier.verify(fs).isIntact)

        var bytes = fs.currentBytes(name)
        bytes[bytes.count - 20] ^= 0xFF
        fs.setBytes(name, bytes)
        let report = try LedgerVerifier.verify(fs)
        #expect(report.snapshots.count == 1)
        #expect(report.snapshots.first?.file == name)
        #expect(report.snapshots.first?.problem.contains("is damaged") == true, "\(report.snapshots)")
        // opening ignores it with a warning and replays from the log
        let reopened = try Ledger.open(fs, options: LedgerOptions(log: testOptions))
        #expect(reopened.openReport.snapshot == nil)
        #expect(reopened.openReport.warnings.count == 1)
        #expect(reopened.openReport.replayed == 20)
        #expect(await reopened.state.digest() == digest)
        try await reopened.close()
    }

    @Test func aSnapshotThatDiffersFromAFreshReplayNamesProjectionAndKey() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try await Story.write(to: fs)
        try await ledger.sync()
        var forged = await ledger.state
        let position = LogReader.Position(offset: ledger.logLength, nextSequence: forged.lastSequence + 1, link: ledger.chainHead)
        try await ledger.close()
        // a snapshot with well-formed checksums but a blood type the log never set
        forged.restore(events: [.characteristicSet(.bloodType(.oNegative))], permissions: [], lastSequence: forged.lastSequence,
                       lastRecordedAt: forged.lastRecordedAt, eventCounts: forged.eventCounts)
        // the position must be where the seal starts: the last data batch's end
        let reader = try LogReader(fs)
        var lastDataEnd = reader.start
        try reader.forEachBatch { b in
            if !b.isSeal { lastDataEnd = b.endPosition }
            return true
        }
        _ = position
        let name = try SnapshotFile.write(forged, at: lastDataEnd, ledgerId: fixedLedgerId, to: fs)
        let report = try LedgerVerifier.verify(fs)
        let finding = try #require(report.snapshots.first)
        #expect(finding.file == name)
        #expect(finding.sequence == 20)
        #expect(finding.difference == StateDifference(projection: "characteristics", key: "HKCharacteristicTypeIdentifierBloodType"))
    }
}
