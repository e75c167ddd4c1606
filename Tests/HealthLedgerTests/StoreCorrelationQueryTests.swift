import Foundation
import HealthLedger
import HealthModel
import LedgerCore
import Testing
import TestSupport

/// HKCorrelationQuery through the stores: member predicates, and an app that may read
/// one member type sees correlations through it, with that member only.
struct StoreCorrelationQueryTests {
    static func bloodPressure(_ systolic: Double, _ diastolic: Double, at: String) throws -> Sample {
        let t = date(at)
        return .correlation(try Correlation(type: .bloodPressure, start: t, end: t, objects: [
            try QuantitySample(type: .bloodPressureSystolic, quantity: try Quantity(systolic, unit: "mmHg"), start: t, end: t),
            try QuantitySample(type: .bloodPressureDiastolic, quantity: try Quantity(diastolic, unit: "mmHg"), start: t, end: t),
        ]))
    }

    @Test func memberPredicatesAndPartialReadPermission() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let cuff = AppRegistration(bundleIdentifier: "com.example.cuff", name: "Cuff", readPurpose: "Shows your pressure.",
                                   sharePurpose: "Saves your pressure.")
        let members: Set<ObjectType> = [.quantity(.bloodPressureSystolic), .quantity(.bloodPressureDiastolic)]
        let writer = try await HealthStore(ledger: ledger, app: cuff)
        try await writer.requestAuthorization(toShare: members, read: [])
        try await owner.grantRequested(app: cuff.bundleIdentifier)
        let low = try Self.bloodPressure(118, 76, at: "2026-03-01T08:00:00Z")
        let high = try Self.bloodPressure(142, 91, at: "2026-03-02T08:00:00Z")
        try await writer.save([low, high])
        // a reader granted systolic only
        let reader = try await HealthStore(ledger: ledger, app: tracker)
        try await reader.requestAuthorization(toShare: [], read: [.quantity(.bloodPressureSystolic)])
        try await owner.grantRequested(app: tracker.bundleIdentifier)

        let query = CorrelationQuery(type: .bloodPressure,
                                     memberPredicates: [.bloodPressureSystolic: SamplePredicate.quantity(.greater, try Quantity(130, unit: "mmHg"))],
                                     sort: [SampleSortDescriptor(.startDate, ascending: true)])
        // the owner: the high reading, both members
        let owned = try await owner.correlations(query).samples
        #expect(owned.map(\.uuid) == [high.uuid])
        guard case .correlation(let full)? = owned.first else { Issue.record("not a correlation"); return }
        #expect(full.objects.count == 2)
        // the reader: the same correlation, through systolic, holding systolic only
        let seen = try await reader.correlations(query).samples
        #expect(seen.map(\.uuid) == [high.uuid])
        guard case .correlation(let partial)? = seen.first else { Issue.record("not a correlation"); return }
        #expect(partial.objects.map(\.type) == [.bloodPressureSystolic])
        // a predicate on the member it may not read matches nothing for it, everything for the owner
        let byDiastolic = CorrelationQuery(type: .bloodPressure,
                                           memberPredicates: [.bloodPressureDiastolic: SamplePredicate.quantity(.greater, try Quantity(0, unit: "mmHg"))])
        #expect(try await reader.correlations(byDiastolic).samples.isEmpty)
        #expect(Set(try await owner.correlations(byDiastolic).samples.map(\.uuid)) == [low.uuid, high.uuid])
        try await ledger.close()
    }
}
