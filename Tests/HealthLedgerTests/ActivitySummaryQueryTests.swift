import Foundation
import Testing
import HealthModel
import HealthLedger
import LedgerCore
import TestSupport

/// HKActivitySummaryQuery on the stores: an inclusive day range, oldest first, and
/// nothing for an app until it may read HKActivitySummaryType.
struct ActivitySummaryQueryTests {
    func day(_ y: Int, _ m: Int, _ d: Int) throws -> DateOfBirth { try DateOfBirth(year: y, month: m, day: d) }

    @Test func summariesByDayRangeAsTheAppMaySeeThem() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        let days = [try day(2026, 2, 28), try day(2026, 3, 1), try day(2026, 3, 2)]
        let summaries = try days.map { try ActivitySummary(day: $0, activeEnergyBurned: 400, activeEnergyBurnedGoal: 500) }
        try await ledger.append(.recordActivitySummaries(summaries.reversed()))
        let march = try ActivitySummaryQuery(start: try day(2026, 3, 1), end: try day(2026, 3, 31))
        #expect(await owner.activitySummaries(march).map(\.day) == Array(days[1...]))
        #expect(await owner.activitySummaries(try ActivitySummaryQuery()).map(\.day) == days)
        #expect(try await app.activitySummaries(march).isEmpty)  // no read permission: nothing, and no error
        await #expect(throws: HealthStoreError.refused(.typeNotAuthorizable(type: "HKActivitySummaryTypeIdentifier",
                                                                           reason: "only Apple computes this type; apps may read it, never share it"))) {
            try await app.requestAuthorization(toShare: [.activitySummary], read: [])
        }
        try await app.requestAuthorization(toShare: [], read: [.activitySummary])
        #expect(try await app.activitySummaries(march).isEmpty)
        try await owner.grantRequested(app: tracker.bundleIdentifier)
        #expect(try await app.activitySummaries(march).map(\.day) == Array(days[1...]))
        #expect(throws: HealthModelError.invalidField(field: "activity summary range", reason: "2026-02-28 is before 2026-03-01")) {
            _ = try ActivitySummaryQuery(start: try day(2026, 3, 1), end: try day(2026, 2, 28))
        }
        try await ledger.close()
    }
}
