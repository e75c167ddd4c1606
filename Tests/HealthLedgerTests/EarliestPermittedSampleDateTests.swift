import Foundation
import Testing
import HealthModel
import HealthLedger
import LedgerCore
import TestSupport

/// HKHealthStore.earliestPermittedSampleDate(): nothing may start before it; a save
/// of such a sample is refused and writes nothing, a query before it finds nothing.
struct EarliestPermittedSampleDateTests {
    @Test func samplesBeforeTheEarliestPermittedDateAreRefused() async throws {
        let ledger = try makeLedger()
        let app = try await HealthStore(ledger: ledger, app: tracker)
        let earliest = app.earliestPermittedSampleDate()
        #expect(ISO8601.string(earliest) == "0001-01-01T00:00:00Z")
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [])
        try await OwnerStore(ledger: ledger).grantRequested(app: tracker.bundleIdentifier)
        let before = earliest.addingTimeInterval(-1)
        #expect(throws: HealthModelError.dateOutOfRange(field: "bodyMass startDate", date: ISO8601.string(before), range: ISO8601.validRangeText)) {
            _ = try QuantitySample(type: .bodyMass, quantity: try Quantity(70, unit: "kg"), start: before, end: earliest)
        }
        let events = await ledger.state.lastSequence
        // At the earliest date itself a save is fine.
        try await app.save(.quantity(try QuantitySample(type: .bodyMass, quantity: try Quantity(70, unit: "kg"), start: earliest, end: earliest)))
        #expect(await ledger.state.lastSequence == events + 1)
        let query = SampleQuery(type: .quantity(.bodyMass), predicate: DatePredicate(start: Date.distantPast, end: earliest))
        #expect(try await app.execute(query).isEmpty)
        try await ledger.close()
    }
}
