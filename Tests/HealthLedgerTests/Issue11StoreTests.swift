import Foundation
import Testing
import HealthModel
import HealthLedger
import LedgerCore
import TestSupport
import LedgerLog

/// Issue 11: HealthKit's rules, exactly. One test per bug, named after it; each failed
/// on the code before the fix.
struct Issue11StoreTests {
    func synced(_ type: QuantityType, _ value: Double, unit: String, version: Int64) throws -> Sample {
        .quantity(try QuantitySample(type: type, quantity: try Quantity(value, unit: unit), start: date("2026-02-01T08:00:00Z"),
                                     end: date("2026-02-01T08:00:00Z"), metadata: [
                                        Metadata.WellKnownKey.syncIdentifier: .string("x"),
                                        Metadata.WellKnownKey.syncVersion: .integer(version)]))
    }

    /// Bug 2: a height sample with the sync identifier of a bodyMass sample replaced it,
    /// even after the owner denied sharing bodyMass. Now: another type is refused, and
    /// the same type needs the permission a delete needs.
    @Test func bug2SyncReplacementMatchesTypeAndNeedsDeletePermission() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass), .quantity(.height)], read: [])
        try await owner.grantRequested(app: tracker.bundleIdentifier)
        try await app.save(try synced(.bodyMass, 70, unit: "kg", version: 1))
        await #expect(throws: HealthStoreError.refused(.syncReplacementTypeMismatch(
            syncIdentifier: "x", stored: "HKQuantityTypeIdentifierBodyMass", given: "HKQuantityTypeIdentifierHeight"))) {
            try await app.save(try synced(.height, 1.8, unit: "m", version: 2))
        }
        try await owner.decide(app: tracker.bundleIdentifier, [(.quantity(.bodyMass), .denied, nil)])
        let before = try await owner.execute(SampleQuery(type: .quantity(.bodyMass)))
        await #expect(throws: HealthStoreError.refused(.syncReplacementTypeMismatch(
            syncIdentifier: "x", stored: "HKQuantityTypeIdentifierBodyMass", given: "HKQuantityTypeIdentifierHeight"))) {
            try await app.save(try synced(.height, 1.8, unit: "m", version: 2))
        }
        await #expect(throws: HealthStoreError.authorizationDenied(type: "HKQuantityTypeIdentifierBodyMass")) {
            try await app.save(try synced(.bodyMass, 69, unit: "kg", version: 2))
        }
        #expect(try await owner.execute(SampleQuery(type: .quantity(.bodyMass))) == before)
        #expect(try await owner.execute(SampleQuery(type: .quantity(.height))).isEmpty)
        // The audit of the replaced object names the grant in force for its type.
        try await owner.decide(app: tracker.bundleIdentifier, [(.quantity(.bodyMass), .granted, nil)])
        try await app.save(try synced(.bodyMass, 69, unit: "kg", version: 3))
        let reader = try LogReader(ledger.fs)
        let history = try LedgerAudit.history(reader, of: .object(before[0].uuid))
        #expect(history.count == 2)
        #expect(history.last?.what.hasPrefix("replaced by ") == true)
        #expect(history.last?.authorization == "share sharingAuthorized, read notDetermined (owner)")
        try await ledger.close()
    }

    /// Bug 4: a date of birth after today gave a negative age. Refused now.
    @Test func bug4FutureDateOfBirthIsRefused() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let now = date("2026-03-01T12:00:00Z")
        await #expect(throws: HealthStoreError.invalidArgument("dateOfBirth 2030-01-01 is after today (2026-03-01 in GMT)")) {
            try await owner.setCharacteristic(.dateOfBirth(try DateOfBirth(year: 2030, month: 1, day: 1)), now: now)
        }
        await #expect(throws: HealthStoreError.invalidArgument("dateOfBirth 2026-03-02 is after today (2026-03-01 in GMT)")) {
            try await owner.setCharacteristic(.dateOfBirth(try DateOfBirth(year: 2026, month: 3, day: 2)), now: now)
        }
        #expect(await owner.characteristic(.dateOfBirth) == nil)
        try await owner.setCharacteristic(.dateOfBirth(try DateOfBirth(year: 2026, month: 3, day: 1)), now: now)
        #expect(await owner.characteristic(.dateOfBirth) == .dateOfBirth(try DateOfBirth(year: 2026, month: 3, day: 1)))
        try await ledger.close()
    }

    /// Bug 10: deleting another app's object answered `notOwner`; HealthKit answers
    /// errorAuthorizationDenied, with the detail in the message.
    @Test func bug10DeletingAnotherAppsObjectIsAuthorizationDenied() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let other = try await HealthStore(ledger: ledger, app: healthApp)
        try await owner.decide(app: healthApp.bundleIdentifier, [(.quantity(.bodyMass), .granted, nil)])
        let theirs = UUID()
        try await other.save(try weight(80, at: "2026-02-01T08:00:00Z", uuid: theirs))
        let app = try await HealthStore(ledger: ledger, app: tracker)
        do {
            try await app.delete([theirs])
            Issue.record("the delete should have been refused")
        } catch let error as HealthStoreError {
            #expect(error.code == "authorizationDenied")
            #expect(error.description == "authorizationDenied: this app did not save \(theirs.uuidString); only the app that saved an object may delete it")
        }
        try await ledger.close()
    }
}
