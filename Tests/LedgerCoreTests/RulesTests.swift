import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerLog
import TestSupport

struct RulesTests {
    // E2: a save needs sharingAuthorized for each sample's type at its point in the log.
    @Test func savingNeedsSharePermissionAtThatPointInTheLog() async throws {
        let ledger = try makeLedger()
        try await ledger.append(.registerApp(appA))
        let s = try quantitySample(.bodyMass, 70, "kg", at: "2026-02-01T08:00:00Z")
        await #expect(throws: RuleViolation.authorizationNotDetermined(app: "com.example.a", type: "HKQuantityTypeIdentifierBodyMass")) {
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [s]))
        }
        try await ledger.append(.decideAuthorization(bundleIdentifier: appA.bundleIdentifier,
                                                      decisions: [(.quantity(.bodyMass), .denied, nil)], basis: .owner))
        await #expect(throws: RuleViolation.authorizationDenied(app: "com.example.a", type: "HKQuantityTypeIdentifierBodyMass")) {
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [s]))
        }
        try await ledger.append(.decideAuthorization(bundleIdentifier: appA.bundleIdentifier,
                                                      decisions: [(.quantity(.bodyMass), .granted, nil)], basis: .owner))
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [s]))
        // revoked: from this event on
        try await ledger.append(.decideAuthorization(bundleIdentifier: appA.bundleIdentifier,
                                                      decisions: [(.quantity(.bodyMass), .denied, nil)], basis: .owner))
        let later = try quantitySample(.bodyMass, 71, "kg", at: "2026-02-02T08:00:00Z")
        await #expect(throws: RuleViolation.authorizationDenied(app: "com.example.a", type: "HKQuantityTypeIdentifierBodyMass")) {
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [later]))
        }
        #expect(await ledger.state.samples.count == 1)
    }

    @Test func aSaveIsAllOrNothing() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        let ok = try quantitySample(.bodyMass, 70, "kg", at: "2026-02-01T08:00:00Z")
        let notAllowed = try quantitySample(.height, 1.7, "m", at: "2026-02-01T08:00:00Z")
        let before = await ledger.state.lastSequence
        await #expect(throws: RuleViolation.self) {
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [ok, notAllowed]))
        }
        #expect(await ledger.state.lastSequence == before)
        #expect(await ledger.state.samples.count == 0)
    }

    // E3 inside one save: the second listing of a UUID is refused, wherever it falls in
    // a batch (the batch set's probing wraps around its table), and nothing is written.
    @Test func aUUIDListedTwiceInOneSaveIsRefusedAndNothingWritten() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        let samples = try (0..<300).map { i in
            try quantitySample(.bodyMass, 70 + Double(i) / 10, "kg", at: "2026-02-01T08:00:00Z", uuid: fixedUUID(1000 + i))
        }
        for (first, second) in [(0, 1), (0, 299), (150, 299), (298, 299)] {
            var batch = samples
            batch[second] = try quantitySample(.bodyMass, 99, "kg", at: "2026-02-02T08:00:00Z", uuid: samples[first].uuid)
            let before = await ledger.state.lastSequence
            await #expect(throws: RuleViolation.duplicateUUID(samples[first].uuid)) {
                try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: batch))
            }
            #expect(await ledger.state.lastSequence == before)
            #expect(await ledger.state.samples.count == 0)
        }
        // The all-zero UUID is a member like any other.
        let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let twiceZero = try [quantitySample(.bodyMass, 70, "kg", at: "2026-02-01T08:00:00Z", uuid: zero),
                             quantitySample(.bodyMass, 71, "kg", at: "2026-02-01T09:00:00Z", uuid: zero)]
        await #expect(throws: RuleViolation.duplicateUUID(zero)) {
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: twiceZero))
        }
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: samples))
        #expect(await ledger.state.samples.count == 300)
    }

    // UUIDs numbered in one place (their last bytes, like `fixedUUID`, or a counter in
    // bytes 4–7) must spread over the table: a hash that let them share a start slot
    // made a batch of n such UUIDs cost n²/2 probes (40,000: 800 million).
    @Test(arguments: [15, 7, 3])
    func numberedUUIDsSpreadOverTheBatchSet(byte last: Int) {
        let n = 40_000
        var set = UUIDBatchSet(count: n)
        for k in 0..<n {
            var u: uuid_t = (0x12, 0x34, 0x56, 0x78, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &u) { b in
                b[last] = UInt8(truncatingIfNeeded: k)
                b[last - 1] = UInt8(truncatingIfNeeded: k >> 8)
                b[last - 2] = UInt8(truncatingIfNeeded: k >> 16)
            }
            let new = set.insert(UUID(uuid: u))
            #expect(new, "\(k)")
        }
        // At most half full with linear probing: about n/2 probes for well-spread keys.
        #expect(set.probes < 2 * n, "\(set.probes) probes for \(n) inserts")
    }

    @Test func theBatchSetFindsEveryRepeatAndNothingElse() {
        var set = UUIDBatchSet(count: 1000)
        // UUIDs that differ in one byte, in either half: all distinct.
        for i in 0..<500 {
            var a: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            var b = a
            withUnsafeMutableBytes(of: &a) { $0[i % 8] = UInt8(i / 8 + 1) }
            withUnsafeMutableBytes(of: &b) { $0[8 + i % 8] = UInt8(i / 8 + 1) }
            let newA = set.insert(UUID(uuid: a)), newB = set.insert(UUID(uuid: b))
            #expect(newA && newB, "\(i)")
        }
        for i in stride(from: 0, to: 500, by: 7) {
            var a: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &a) { $0[i % 8] = UInt8(i / 8 + 1) }
            let new = set.insert(UUID(uuid: a))
            #expect(!new, "\(i)")
        }
    }

    @Test func aUUIDIsStoredOnceEvenAfterDeletion() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        let id = fixedUUID(7)
        let s = try quantitySample(.bodyMass, 70, "kg", at: "2026-02-01T08:00:00Z", uuid: id)
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [s]))
        await #expect(throws: RuleViolation.duplicateUUID(id)) {
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [s]))
        }
        try await ledger.append(.delete(bundleIdentifier: nil, uuids: [id], reason: nil))
        await #expect(throws: RuleViolation.duplicateUUID(id)) {
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [s]))
        }
        await #expect(throws: RuleViolation.objectNotFound(id)) {
            try await ledger.append(.delete(bundleIdentifier: nil, uuids: [id], reason: nil))
        }
    }

    @Test func appsDeleteOnlyTheirOwnWhileAllowedAndTheOwnerAnything() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        try await ledger.grant(appB, share: [.quantity(.bodyMass)])
        let a = try quantitySample(.bodyMass, 70, "kg", at: "2026-02-01T08:00:00Z", uuid: fixedUUID(1))
        let b = try quantitySample(.bodyMass, 71, "kg", at: "2026-02-02T08:00:00Z", uuid: fixedUUID(2))
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [a]))
        try await ledger.append(.save(bundleIdentifier: appB.bundleIdentifier, samples: [b]))
        await #expect(throws: RuleViolation.notOwnerOfObject(uuid: fixedUUID(2), app: "com.example.a")) {
            try await ledger.append(.delete(bundleIdentifier: appA.bundleIdentifier, uuids: [fixedUUID(2)], reason: nil))
        }
        // a batch delete is all or nothing
        await #expect(throws: RuleViolation.self) {
            try await ledger.append(.delete(bundleIdentifier: appA.bundleIdentifier, uuids: [fixedUUID(1), fixedUUID(2)], reason: nil))
        }
        #expect(await ledger.state.samples.deletedCount == 0)
        // losing share permission loses the right to delete
        try await ledger.append(.decideAuthorization(bundleIdentifier: appA.bundleIdentifier,
                                                      decisions: [(.quantity(.bodyMass), .denied, nil)], basis: .owner))
        // E5: an app deletes only while it holds share permission for the type
        await #expect(throws: RuleViolation.authorizationDenied(app: "com.example.a", type: "HKQuantityTypeIdentifierBodyMass", rule: "E5")) {
            try await ledger.append(.delete(bundleIdentifier: appA.bundleIdentifier, uuids: [fixedUUID(1)], reason: nil))
        }
        try await ledger.append(.delete(bundleIdentifier: nil, uuids: [fixedUUID(1), fixedUUID(2)], reason: "owner"))
        #expect(await ledger.state.samples.deletedCount == 2)
        let tombstones = await ledger.state.samples.tombstones
        #expect(tombstones.map(\.actor) == [.owner, .owner])
    }

    @Test func aHigherSyncVersionReplacesAndRecordsWhat() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        func sample(_ version: Int64, _ uuid: UUID, _ value: Double) throws -> Sample {
            try quantitySample(.bodyMass, value, "kg", at: "2026-02-01T08:00:00Z", uuid: uuid, metadata: [
                Metadata.WellKnownKey.syncIdentifier: .string("scale-7"), Metadata.WellKnownKey.syncVersion: .integer(version)])
        }
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [try sample(1, fixedUUID(1), 70)]))
        let stored = try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [try sample(2, fixedUUID(2), 69)]))
        guard case .samplesSaved(_, let saved) = stored.first?.event else { Issue.record("no save"); return }
        #expect(saved.first?.replaces == fixedUUID(1))
        let state = await ledger.state
        #expect(state.samples.entry(try state.samples.slot(of: fixedUUID(1))!).isDeleted)
        #expect(try state.samples.tombstones.last?.replacedBy == state.samples.slot(of: fixedUUID(2)))
        await #expect(throws: RuleViolation.syncVersionNotNewer(syncIdentifier: "scale-7", stored: 2, given: 2)) {
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [try sample(2, fixedUUID(3), 68)]))
        }
        await #expect(throws: RuleViolation.syncVersionNotNewer(syncIdentifier: "scale-7", stored: 2, given: 1)) {
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [try sample(1, fixedUUID(4), 68)]))
        }
        // the tombstone keeps the sync identity
        let deleted = try await ledger.append(.delete(bundleIdentifier: nil, uuids: [fixedUUID(2)], reason: nil))
        guard case .samplesDeleted(_, let objects, _) = deleted.first?.event else { Issue.record("no delete"); return }
        #expect(objects == [DeletedObject(uuid: fixedUUID(2), syncIdentifier: "scale-7", syncVersion: 2)])
    }

    /// Two objects of one save with the same sync identifier: refused as such (not as
    /// "stored at version v; v does not replace it", which nothing stored), nothing appended.
    @Test func oneSaveHoldingASyncIdentifierTwiceIsRefusedAsSuch() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        func sample(_ version: Int64, _ uuid: UUID) throws -> Sample {
            try quantitySample(.bodyMass, 70, "kg", at: "2026-02-01T08:00:00Z", uuid: uuid, metadata: [
                Metadata.WellKnownKey.syncIdentifier: .string("scale-9"), Metadata.WellKnownKey.syncVersion: .integer(version)])
        }
        let before = await ledger.state.lastSequence
        await #expect(throws: RuleViolation.syncIdentifierRepeated(syncIdentifier: "scale-9")) {
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [try sample(1, fixedUUID(5)), try sample(2, fixedUUID(6))]))
        }
        #expect(await ledger.state.lastSequence == before)
        #expect(RuleViolation.syncIdentifierRepeated(syncIdentifier: "scale-9").description == "syncIdentifierRepeated: one save holds scale-9 twice [E4]")
    }

    // E6, and E1: an app that is not registered cannot act.
    @Test func characteristicsAreNeverSharedAndCorrelationTypesNeverRequested() async throws {
        let ledger = try makeLedger()
        try await ledger.append(.registerApp(appA))
        await #expect(throws: RuleViolation.typeNotAuthorizable(type: "HKCharacteristicTypeIdentifierBloodType",
                                                                reason: "characteristics can only be read")) {
            try await ledger.append(.requestAuthorization(bundleIdentifier: appA.bundleIdentifier,
                                                          share: [.characteristic(.bloodType)], read: []))
        }
        await #expect(throws: RuleViolation.typeNotAuthorizable(type: "HKCorrelationTypeIdentifierBloodPressure",
                                                                reason: "request the member types of a correlation")) {
            try await ledger.append(.requestAuthorization(bundleIdentifier: appA.bundleIdentifier,
                                                          share: [], read: [.correlation(.bloodPressure)]))
        }
        await #expect(throws: RuleViolation.appNotRegistered("com.example.b")) {
            try await ledger.append(.requestAuthorization(bundleIdentifier: appB.bundleIdentifier, share: [], read: [.workout]))
        }
    }

    @Test func askingAgainForAnsweredTypesRecordsNothing() async throws {
        let ledger = try makeLedger()
        try await ledger.append(.registerApp(appA))
        let first = try await ledger.append(.requestAuthorization(bundleIdentifier: appA.bundleIdentifier,
                                                                   share: [.quantity(.bodyMass)], read: [.quantity(.height)]))
        #expect(first.count == 1)
        let again = try await ledger.append(.requestAuthorization(bundleIdentifier: appA.bundleIdentifier,
                                                                   share: [.quantity(.bodyMass)], read: [.quantity(.height)]))
        #expect(again.isEmpty)
        let more = try await ledger.append(.requestAuthorization(bundleIdentifier: appA.bundleIdentifier,
                                                                  share: [.quantity(.bodyMass), .workout], read: []))
        guard case .authorizationRequested(_, let share, _) = more.first?.event else { Issue.record("no request"); return }
        #expect(share == [.workout])
        // registering the same app again with the same strings records nothing
        #expect(try await ledger.append(.registerApp(appA)).isEmpty)
    }

    @Test func correlationsRestOnTheirMembersTypes() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.bloodPressureSystolic)])
        let t = date("2026-02-01T08:00:00Z")
        let sys = try QuantitySample(type: .bloodPressureSystolic, quantity: try Quantity(120, unit: "mmHg"), start: t, end: t)
        let dia = try QuantitySample(type: .bloodPressureDiastolic, quantity: try Quantity(80, unit: "mmHg"), start: t, end: t)
        let bp = try Correlation(type: .bloodPressure, start: t, end: t, objects: [sys, dia], uuid: fixedUUID(9))
        await #expect(throws: RuleViolation.authorizationNotDetermined(app: "com.example.a", type: "HKQuantityTypeIdentifierBloodPressureDiastolic")) {
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [.correlation(bp)]))
        }
        try await ledger.append(.decideAuthorization(bundleIdentifier: appA.bundleIdentifier,
                                                      decisions: [(.quantity(.bloodPressureDiastolic), .granted, nil)], basis: .owner))
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [.correlation(bp)]))
        #expect(await ledger.state.samples.count == 3)
        // deleting the correlation deletes its members with it
        try await ledger.append(.delete(bundleIdentifier: appA.bundleIdentifier, uuids: [fixedUUID(9)], reason: nil))
        #expect(await ledger.state.samples.deletedCount == 3)
    }
}

struct GroupTests {
    @Test func aGroupIsOneBatchAndLeavesOutRefusedCommands() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        let a = try quantitySample(.bodyMass, 70, "kg", at: "2026-02-01T08:00:00Z", uuid: fixedUUID(1))
        let refused = try quantitySample(.height, 1.7, "m", at: "2026-02-01T08:00:00Z", uuid: fixedUUID(2))
        let results = try await ledger.appendBestEffort([
            .registerApp(appA),
            .decideAuthorization(bundleIdentifier: appA.bundleIdentifier, decisions: [(.quantity(.bodyMass), .granted, nil)], basis: .owner),
            .save(bundleIdentifier: appA.bundleIdentifier, samples: [a]),
            .save(bundleIdentifier: appA.bundleIdentifier, samples: [refused]),
            .save(bundleIdentifier: appA.bundleIdentifier, samples: [a]),  // duplicate of one earlier in the group
        ]).results
        #expect(results.map { (try? $0.get())?.count ?? -1 } == [1, 1, 1, -1, -1])
        guard case .failure(.duplicateUUID(fixedUUID(1))) = results[4] else { Issue.record("\(results[4])"); return }
        let folded = await ledger.state
        #expect(folded.lastSequence == 3)
        try await ledger.close()
        let report = try LedgerVerifier.verify(fs)
        #expect(report.isIntact)
        #expect(report.log.batches == 2)  // the group, and the seal
        let replayed = try StateLoader.load(fs, reader: try LogReader(fs), useSnapshots: false).state
        #expect(StateDifference.first(folded, replayed) == nil)
        #expect(replayed == folded)
    }
}

/// Rule E8: an `absentFromExport` removes only what imports brought, inside an open
/// import, each object and day once.
struct AbsentFromExportRulesTests {
    @Test func removesOnlyWhatAnImportBroughtInsideAnOpenImport() async throws {
        let ledger = try makeLedger()
        let imported = AppRegistration(bundleIdentifier: "export:Health", name: "Health", readPurpose: nil, sharePurpose: nil,
                                       imported: true)
        let fromExport = try quantitySample(.bodyMass, 70, "kg", at: "2026-02-01T08:00:00Z")
        let fromApp = try quantitySample(.bodyMass, 71, "kg", at: "2026-02-02T08:00:00Z")
        // an earlier import brought the imported source's sample (rule E13: only an import may)
        try await ledger.importing([.registerApp(imported),
                                    .decideAuthorization(bundleIdentifier: imported.bundleIdentifier,
                                                         decisions: [(.quantity(.bodyMass), .granted, nil)], basis: .imported),
                                    .save(bundleIdentifier: imported.bundleIdentifier, samples: [fromExport])])
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [fromApp]))
        let id = fixedUUID(77)
        func absence(_ uuids: [UUID]) -> ExportAbsence {
            ExportAbsence(importId: id, exportDate: "2026-03-01 09:00:00 +0000", objects: uuids.map { DeletedObject(uuid: $0) }, days: [])
        }
        await #expect(throws: RuleViolation.importMismatch(id, "never started", rule: "E9")) {
            try await ledger.append(.removeAbsent(absence([fromExport.uuid])))
        }
        try await ledger.append(.startImport(ExportImportStart(importId: id, contentSHA256: [UInt8](repeating: 1, count: 32),
                                                                exportDate: "2026-03-01 09:00:00 +0000", locale: nil,
                                                                exportVersion: nil, sourcePath: "export.zip", again: false, me: [])))
        await #expect(throws: RuleViolation.notBroughtByImport("\(fromApp.uuid.uuidString) is not a sample an import brought")) {
            try await ledger.append(.removeAbsent(absence([fromApp.uuid])))
        }
        await #expect(throws: RuleViolation.objectNotFound(fromExport.uuid, rule: "E9")) {
            try await ledger.append(.removeAbsent(absence([fromExport.uuid, fromExport.uuid])))
        }
        try await ledger.append(.removeAbsent(absence([fromExport.uuid])))
        let state = await ledger.state
        #expect(state.samples.entry(try #require(try state.samples.slot(of: fromExport.uuid))).isDeleted)
        #expect(!state.samples.entry(try #require(try state.samples.slot(of: fromApp.uuid))).isDeleted)
        try await ledger.append(.finishImport(ExportImportFinish(importId: id, counts: [])))
        await #expect(throws: RuleViolation.importMismatch(id, "already finished", rule: "E9")) {
            try await ledger.append(.removeAbsent(absence([fromApp.uuid])))
        }
    }
}
