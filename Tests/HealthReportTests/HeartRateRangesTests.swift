import Foundation
import HealthLedger
import HealthModel
import LedgerCore
import Testing
import TestSupport
@testable import HealthReport

/// The heart-rate chart's per-day minimum, mean, maximum and count come from the
/// statistics projection (no sample decoded): they equal a brute force over the
/// decoded samples, for the owner and for an app that may read only its own.
@Suite struct HeartRateRangesTests {
    static let watch = AppRegistration(bundleIdentifier: "com.apple.health.WATCH", name: "Watch", readPurpose: "r", sharePurpose: "s")
    static let band = AppRegistration(bundleIdentifier: "com.example.band", name: "Band", readPurpose: "r", sharePurpose: "s")
    static let heartRate = ObjectType.quantity(.heartRate)

    /// `n` heart rates from a fixed generator over ten days from `start`: some instants,
    /// some lasting up to 40 minutes (a few across local midnight), in count/min and count/s.
    static func samples(_ n: Int, seed: UInt64, start: Double) throws -> [Sample] {
        var x = seed
        func next() -> UInt64 { x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407; return x >> 33 }
        return try (0..<n).map { i in
            let t = start + Double(next() % 864_000)
            let length = i % 3 == 0 ? 0 : Double(next() % 2400)
            let bpm = 40 + Double(next() % 14_000) / 100 + 1.0 / 3
            let q = i % 5 == 0 ? try Quantity(bpm / 60, unit: "count/s") : try Quantity(bpm, unit: "count/min")
            return .quantity(try QuantitySample(type: .heartRate, quantity: q, start: Date(timeIntervalSince1970: t),
                                                end: Date(timeIntervalSince1970: t + length)))
        }
    }

    /// The report's fold before the projection: decode every sample, bucket by its start's local day.
    static func bruteForce(_ viewer: ReportViewer, period: DatePredicate?, days: inout LocalDays) async throws -> [HealthReportData.DayRange] {
        var byDay: [Int: (min: Double, max: Double, sum: Double, n: Int)] = [:]
        try await viewer.forEach(heartRate, in: period) { s in
            guard case .quantity(let q) = s else { return }
            let v = try q.quantity.doubleValue(for: HealthReportUnits.perMinute)
            let d = days.day(q.startDate.timeIntervalSince1970)
            let e = byDay[d] ?? (.infinity, -.infinity, 0, 0)
            byDay[d] = (min(e.min, v), max(e.max, v), e.sum + v, e.n + 1)
        }
        return byDay.keys.sorted().map { d in
            let e = byDay[d]!
            return HealthReportData.DayRange(day: d, min: e.min, mean: e.sum / Double(e.n), max: e.max, count: e.n)
        }
    }

    static func expectSame(_ got: [HealthReportData.DayRange], _ want: [HealthReportData.DayRange]) {
        #expect(got.map(\.day) == want.map(\.day))
        #expect(got.map(\.count) == want.map(\.count))
        // values pass through the canonical unit (count/s): equal to within rounding
        func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) <= 1e-12 * abs(b) }
        for (g, w) in zip(got, want) {
            #expect(close(g.min, w.min) && close(g.max, w.max) && close(g.mean, w.mean), "day \(g.day): \(g) vs \(w)")
        }
    }

    @Test func dailyRangesEqualTheDecodedSamples() async throws {
        let ledger = try Ledger.create(SimulatedFileSystem(), ledgerId: fixedLedgerId)
        let owner = OwnerStore(ledger: ledger)
        var stores: [HealthStore] = []
        for (app, read) in [(Self.watch, Answer.granted), (Self.band, Answer.denied)] {
            let store = try await HealthStore(ledger: ledger, app: app)
            try await store.requestAuthorization(toShare: [Self.heartRate], read: [Self.heartRate])
            try await owner.decide(app: app.bundleIdentifier, [(Self.heartRate, Answer.granted, read)])
            stores.append(store)
        }
        let start = 1_748_736_000.0  // 2025-06-01T00:00:00Z
        let watchSamples = try Self.samples(900, seed: 7, start: start)
        try await stores[0].save(watchSamples)
        try await stores[1].save(try Self.samples(400, seed: 11, start: start))
        // a deleted sample counts nowhere
        try await stores[0].delete([watchSamples[1].uuid])

        let zone = TimeZone(identifier: "America/New_York")!
        let period = DatePredicate(start: Date(timeIntervalSince1970: start + 86_400 * 2 + 3_600),
                                   end: Date(timeIntervalSince1970: start + 86_400 * 8))
        for (viewer, whole) in [(ReportViewer.owner(owner), 1300 - 1), (.app(stores[1]), 400)] {
            for p in [nil, period] {
                var days = LocalDays(zone)
                let got = try await viewer.dailyRanges(.heartRate, unit: HealthReportUnits.perMinute, period: p, days: &days)
                let want = try await Self.bruteForce(viewer, period: p, days: &days)
                Self.expectSame(got, want)
                if p == nil { #expect(got.reduce(0) { $0 + $1.count } == whole) }
                #expect(!got.isEmpty)
            }
        }
    }
}
