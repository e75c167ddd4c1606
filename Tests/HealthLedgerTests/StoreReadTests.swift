import Foundation
import HealthLedger
import HealthModel
import LedgerCore
import LedgerReporting
import Testing
import TestSupport

/// The stores' read API: pages, the async stream, raw records for the owner only.
struct StoreReadTests {
    @Test func pagesAndTheStreamYieldEveryVisibleSampleOnceInOrder() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let store = try await HealthStore(ledger: ledger, app: tracker)
        try await store.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [.quantity(.bodyMass)])
        try await owner.grantRequested(app: tracker.bundleIdentifier)
        // 25 weights, every fifth on the same instant as the one before
        var saved: [Sample] = []
        for i in 0..<25 {
            let minute = i % 5 == 4 ? i - 1 : i
            saved.append(try weight(70 + Double(i), at: String(format: "2026-03-01T08:%02d:00Z", minute)))
        }
        try await store.save(saved)
        let q = SampleQuery(type: .quantity(.bodyMass), sort: [SampleSortDescriptor(.startDate, ascending: false)])
        let all = try await store.execute(q).map(\.uuid)
        #expect(all.count == 25)
        // pages of 4 through the store: the same order, each once
        var paged: [UUID] = []
        var after: UUID?
        var four = q
        four.limit = 4
        repeat {
            let page = try await store.samples(four, after: after)
            paged += page.samples.map(\.uuid)
            after = page.next
        } while after != nil
        #expect(paged == all)
        // the stream, 3 per page, and with a limit of 10
        var streamed: [UUID] = []
        for try await s in store.stream(q, pageSize: 3) { streamed.append(s.uuid) }
        #expect(streamed == all)
        var ten = q
        ten.limit = 10
        var limited: [UUID] = []
        for try await s in owner.stream(ten, pageSize: 3) { limited.append(s.uuid) }
        #expect(limited == Array(all.prefix(10)))
        try await ledger.close()
    }

    /// `sampleLines` (what `GET /v1/samples` sends) is `samples` written as JSON Lines:
    /// the same samples, order and cursor, for an app and the owner, plain samples
    /// (read in place) and others (a device, a non-ASCII note) alike, with a filter.
    @Test func sampleLinesArePagesWrittenAsJSONLines() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let store = try await HealthStore(ledger: ledger, app: tracker)
        try await store.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [.quantity(.bodyMass)])
        try await owner.grantRequested(app: tracker.bundleIdentifier)
        var saved: [Sample] = []
        for i in 0..<30 {
            let t = date(String(format: "2026-03-01T08:%02d:00Z", i))
            let metadata: Metadata = i % 3 == 0 ? ["HKWasUserEntered": .bool(true)] : i % 3 == 1 ? ["note": .string("Zürich")] : Metadata()
            saved.append(.quantity(try QuantitySample(type: .bodyMass, quantity: try Quantity(70 + Double(i) / 8, unit: "kg"),
                                                      start: t, end: t, metadata: metadata,
                                                      device: i % 7 == 0 ? Device(name: "Scale") : nil)))
        }
        try await store.save(saved)
        for filter in [nil, SamplePredicate.metadata("HKWasUserEntered", .equal, .bool(true))] {
            for limit in [0, 4] {
                let q = SampleQuery(type: .quantity(.bodyMass), limit: limit, sort: [SampleSortDescriptor(.startDate, ascending: false)],
                                    filter: filter)
                for asOwner in [false, true] {
                    var after: UUID?
                    var pages = 0
                    repeat {
                        let page = asOwner ? try await owner.samples(q, after: after) : try await store.samples(q, after: after)
                        let lines = asOwner ? try await owner.sampleLines(q, after: after) : try await store.sampleLines(q, after: after)
                        var expected: [UInt8] = []
                        for s in page.samples {
                            SampleJSONWriter.append(s, to: &expected)
                            expected.append(0x0A)
                        }
                        #expect(String(decoding: lines.lines, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
                        #expect(lines.count == page.samples.count && lines.next == page.next)
                        after = page.next
                        pages += 1
                    } while after != nil
                    #expect(pages == (limit == 0 ? 1 : (filter == nil ? 8 : 3)))
                }
            }
        }
        try await ledger.close()
    }

    @Test func theOwnerFindsRawRecordsAndAppsNeverSeeThem() async throws {
        let ledger = try makeLedger()
        let importer = AppRegistration(bundleIdentifier: "export:Health", name: "Health", readPurpose: nil, sharePurpose: nil,
                                       imported: true)
        let t = date("2026-03-01T08:00:00Z")
        let raw = UnrecognizedSample(typeIdentifier: "HKDataTypeSleepDurationGoal", value: "28800", unit: nil, reason: "unknown type",
                                     common: try SampleCommon(startDate: t, endDate: t))
        // what an import brings (rule E13: only an import registers and saves as `export:` sources)
        try await ledger.importing([.registerApp(importer), .save(bundleIdentifier: importer.bundleIdentifier, samples: [.unrecognized(raw)])])
        let owner = OwnerStore(ledger: ledger)
        let found = try await owner.rawSamples(identifier: "HKDataTypeSleepDurationGoal")
        #expect(found.map(\.uuid) == [raw.uuid])
        #expect(found.first?.value == "28800")
        #expect(found.first?.reason == "unknown type")
        #expect(try await owner.rawSamples(identifier: "HKDataTypeOther").isEmpty)
        // an app has no way to name the type, and no query of a known type returns it
        let store = try await HealthStore(ledger: ledger, app: tracker)
        for type in [ObjectType.quantity(.stepCount), .workout, .category(.sleepAnalysis)] {
            #expect(try await store.execute(SampleQuery(type: type)).isEmpty)
        }
        try await ledger.close()
    }
}
