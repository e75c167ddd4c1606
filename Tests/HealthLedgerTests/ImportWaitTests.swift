import Foundation
import HealthModel
import HealthLedger
import LedgerCore
import Testing
import TestSupport

/// Rule E11 through the store API: no read of a store shows an
/// import that has not committed. Each read below starts while an import transaction
/// holding its answer is open; it must wait, and see nothing of the import once the
/// import is aborted.
struct ImportWaitTests {
    static func day(_ d: Int) throws -> ActivitySummary {
        try ActivitySummary(day: try DateOfBirth(year: 2026, month: 3, day: d), numbers: [420, 500, nil, nil, 30, 30, 10, 12],
                            activeEnergyBurnedUnit: "kcal", otherAttributes: [])
    }

    @Test func activitySummariesWaitForAnOpenImportAndShowNothingOfAnAbortedOne() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        try await app.requestAuthorization(toShare: [], read: [.activitySummary])
        try await owner.grantRequested(app: tracker.bundleIdentifier)
        let t = try await ledger.beginImport(ExportImportStart(importId: UUID(), exportDate: nil, locale: nil, exportVersion: nil,
                                                               sourcePath: "export.xml", me: []))
        _ = try await ledger.appendBestEffort([.recordActivitySummaries([try Self.day(1)])], in: t)
        let query = try ActivitySummaryQuery(start: try DateOfBirth(year: 2026, month: 3, day: 1), end: try DateOfBirth(year: 2026, month: 3, day: 31))
        async let byOwner = owner.activitySummaries(query)
        async let byApp = app.activitySummaries(query)
        try await Task.sleep(for: .milliseconds(100))
        try await ledger.abortImport(t, reason: "the test aborts it")
        #expect(await byOwner.isEmpty)
        #expect(try await byApp.isEmpty)
    }

    @Test func preferredUnitsWaitForAnOpenImport() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass), .workout], read: [.quantity(.bodyMass)])
        try await owner.grantRequested(app: tracker.bundleIdentifier)
        let t = try await ledger.beginImport(ExportImportStart(importId: UUID(), exportDate: nil, locale: nil, exportVersion: nil,
                                                               sourcePath: "export.xml", me: []))
        _ = try await ledger.appendBestEffort([.setPreferredUnit(.bodyMass, try HealthUnit("lb"))], in: t)
        async let units = owner.preferredUnits(for: [.bodyMass], locale: "de_DE")
        async let appUnits = app.preferredUnits(for: [.bodyMass], locale: "de_DE")
        try await Task.sleep(for: .milliseconds(100))
        try await ledger.abortImport(t, reason: "the test aborts it")
        #expect(await units[.bodyMass]?.canonicalString == "kg")
        #expect(try await appUnits[.bodyMass]?.canonicalString == "kg")
    }
}
