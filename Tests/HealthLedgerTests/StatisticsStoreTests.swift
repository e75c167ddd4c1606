import Foundation
import HealthLedger
import HealthModel
import LedgerCore
import LedgerLog
import Testing
import TestSupport

/// HKStatisticsQuery / HKStatisticsCollectionQuery through the stores: source
/// priority (default order, the owner's list, replay), visibility, collections.
struct StatisticsStoreTests {
    // Apple's devices by their bundle identifiers (only an import marks an app imported: rule E13)
    static let watch = AppRegistration(bundleIdentifier: "com.apple.health.WATCH-UUID", name: "Alice's Apple Watch",
                                       readPurpose: "r", sharePurpose: "s")
    static let phone = AppRegistration(bundleIdentifier: "com.apple.health.PHONE-UUID", name: "Alice's iPhone",
                                       readPurpose: "r", sharePurpose: "s")
    static let appA = AppRegistration(bundleIdentifier: "com.example.a", name: "A", readPurpose: "r", sharePurpose: "s")
    static let appB = AppRegistration(bundleIdentifier: "com.example.b", name: "B", readPurpose: "r", sharePurpose: "s")
    static let steps = ObjectType.quantity(.stepCount)

    static func steps(_ n: Double, _ from: String, _ to: String, manual: Bool = false) throws -> Sample {
        var m = Metadata()
        if manual { m.append(Metadata.WellKnownKey.wasUserEntered, .bool(true)) }
        return .quantity(try QuantitySample(type: .stepCount, quantity: try Quantity(n, unit: "count"), start: date(from),
                                            end: date(to), metadata: m))
    }

    /// A store for `app`, granted share (and read, unless `read` is false) of `types`.
    static func store(_ ledger: Ledger, _ app: AppRegistration, _ types: [ObjectType] = [steps], read: Bool = true) async throws -> HealthStore {
        let store = try await HealthStore(ledger: ledger, app: app)
        try await store.requestAuthorization(toShare: Set(types), read: Set(types))
        try await OwnerStore(ledger: ledger).decide(app: app.bundleIdentifier,
                                                    types.map { ($0, Answer.granted, read ? Answer.granted : .denied) })
        return store
    }

    static func sum(_ s: Statistics) throws -> Double? { try s.sumQuantity?.doubleValue(for: .count) }

    @Test func overlappingSourcesMergeByDefaultOrderAndByTheOwnersList() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let phone = try await Self.store(ledger, Self.phone)  // granted first, but a Watch ranks above an iPhone
        let watch = try await Self.store(ledger, Self.watch)
        try await watch.save(try Self.steps(60, "2025-06-01T10:00:00Z", "2025-06-01T11:00:00Z"))
        try await phone.save(try Self.steps(120, "2025-06-01T10:30:00Z", "2025-06-01T11:30:00Z"))
        let day = DatePredicate(start: date("2025-06-01T00:00:00Z"), end: date("2025-06-02T00:00:00Z"))
        var s = try await owner.statistics(for: .stepCount, predicate: day, options: [.cumulativeSum, .separateBySource])
        #expect(try Self.sum(s) == 120)
        // per source, unmerged, they sum to more than the merged total
        #expect(try s.sumQuantity(for: Self.watch.bundleIdentifier)?.doubleValue(for: .count) == 60)
        #expect(try s.sumQuantity(for: Self.phone.bundleIdentifier)?.doubleValue(for: .count) == 120)
        #expect(s.sources == [Self.phone.bundleIdentifier, Self.watch.bundleIdentifier])
        #expect(await owner.sourcePriority(for: .stepCount) == [Self.watch.bundleIdentifier, Self.phone.bundleIdentifier])
        // the owner puts the iPhone first: 150
        try await owner.setSourcePriority(.stepCount, [Self.phone.bundleIdentifier, Self.watch.bundleIdentifier])
        s = try await owner.statistics(for: .stepCount, predicate: day, options: .cumulativeSum)
        #expect(try Self.sum(s) == 150)
        #expect(await owner.sourcePriority(for: .stepCount) == [Self.phone.bundleIdentifier, Self.watch.bundleIdentifier])
        // the same order again appends nothing; another type keeps the default order
        let before = await ledger.state.lastSequence
        try await owner.setSourcePriority(.stepCount, [Self.phone.bundleIdentifier, Self.watch.bundleIdentifier])
        #expect(await ledger.state.lastSequence == before)
        #expect(await owner.sourcePriority(for: .distanceWalkingRunning) == [Self.watch.bundleIdentifier, Self.phone.bundleIdentifier])
        // refused lists leave the ledger unchanged
        await #expect(throws: HealthStoreError.refused(.appNotRegistered("com.example.nobody", rule: "E8"))) {
            try await owner.setSourcePriority(.stepCount, ["com.example.nobody"])
        }
        await #expect(throws: HealthStoreError.invalidArgument("a source priority lists each source once")) {
            try await owner.setSourcePriority(.stepCount, [Self.watch.bundleIdentifier, Self.watch.bundleIdentifier])
        }
        #expect(await ledger.state.lastSequence == before)
        // back to the default order
        try await owner.setSourcePriority(.stepCount, [])
        #expect(try Self.sum(try await owner.statistics(for: .stepCount, predicate: day, options: .cumulativeSum)) == 120)
        // replay: the state as of each event gives the totals of the priority then in force
        let reader = try LogReader(ledger.fs)
        let last = await ledger.state.lastSequence
        var totals: [Double?] = []
        for seq in [last - 2, last - 1, last] {
            var state = try StateLoader.load(ledger.fs, reader: reader, limit: .sequence(seq), useSnapshots: false).state
            let t = try StatisticsQuery.statistics(type: .stepCount, predicate: day, options: .cumulativeSum,
                                                   visibility: .everything, fs: ledger.fs, in: &state)
            totals.append(try Self.sum(t))
        }
        #expect(totals == [120, 150, 120])
        try await ledger.close()
    }

    @Test func manualEntriesRankFirstAndTiesFollowTheFirstGrant() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        // A registers first but B is granted first: unlisted, B ranks above A
        let a = try await HealthStore(ledger: ledger, app: Self.appA)
        try await a.requestAuthorization(toShare: [Self.steps], read: [Self.steps])
        let b = try await Self.store(ledger, Self.appB)
        try await owner.grantRequested(app: Self.appA.bundleIdentifier)
        try await a.save(try Self.steps(100, "2025-06-01T10:00:00Z", "2025-06-01T11:00:00Z"))
        try await b.save(try Self.steps(40, "2025-06-01T10:00:00Z", "2025-06-01T11:00:00Z"))
        let hour = DatePredicate(start: date("2025-06-01T10:00:00Z"), end: date("2025-06-01T11:00:00Z"))
        #expect(try Self.sum(try await owner.statistics(for: .stepCount, predicate: hour, options: .cumulativeSum)) == 40)
        // a manual entry of A ranks above everything by default
        try await a.save(try Self.steps(7, "2025-06-01T10:00:00Z", "2025-06-01T10:30:00Z", manual: true))
        #expect(try Self.sum(try await owner.statistics(for: .stepCount, predicate: hour, options: .cumulativeSum)) == 7 + 20)
        // listing A first: A's manual entry, then A's own sample, both of A's rank group
        try await owner.setSourcePriority(.stepCount, [Self.appA.bundleIdentifier])
        #expect(try Self.sum(try await owner.statistics(for: .stepCount, predicate: hour, options: .cumulativeSum)) == 7 + 50)
        try await ledger.close()
    }

    @Test func sourcesAnExportBroughtRankAsAppleDevices() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        // granted in this order: a third-party app, the exported iPhone, the exported Watch
        _ = try await Self.store(ledger, Self.appA)
        for name in ["Bob’s iPhone", "Bob’s Apple Watch"] {
            // as an import registers its sources (rule E13: only an import may)
            try await ledger.importing([.registerApp(AppRegistration(bundleIdentifier: "export:" + name, name: name, readPurpose: nil,
                                                                     sharePurpose: nil, imported: true)),
                                        .decideAuthorization(bundleIdentifier: "export:" + name,
                                                             decisions: [(Self.steps, .granted, nil)], basis: .imported)])
        }
        #expect(await owner.sourcePriority(for: .stepCount) == ["export:Bob’s Apple Watch", "export:Bob’s iPhone",
                                                                Self.appA.bundleIdentifier])
        try await ledger.close()
    }

    @Test func anAppWithoutReadPermissionGetsItsOwnSamplesOnly() async throws {
        let ledger = try makeLedger()
        let reader = try await Self.store(ledger, Self.appA)
        let writerOnly = try await Self.store(ledger, Self.appB, read: false)
        try await reader.save(try Self.steps(500, "2025-06-01T08:00:00Z", "2025-06-01T09:00:00Z"))
        try await writerOnly.save(try Self.steps(30, "2025-06-01T12:00:00Z", "2025-06-01T12:10:00Z"))
        let opts: StatisticsOptions = [.cumulativeSum, .separateBySource, .duration]
        let mine = try await writerOnly.statistics(for: .stepCount, options: opts)
        #expect(try Self.sum(mine) == 30)
        #expect(mine.sources == [Self.appB.bundleIdentifier])
        #expect(mine.startDate == date("2025-06-01T12:00:00Z"))
        #expect(try mine.duration?.doubleValue(for: .second) == 600)
        let all = try await reader.statistics(for: .stepCount, options: opts)
        #expect(try Self.sum(all) == 530)
        #expect(all.sources == [Self.appA.bundleIdentifier, Self.appB.bundleIdentifier])
        // a collection for the read-denied app: its own buckets only, no empty hint of others'
        let c = try await writerOnly.statisticsCollection(for: .stepCount, options: .cumulativeSum,
                                                          anchor: date("2025-06-01T00:00:00Z"),
                                                          interval: try StatisticsInterval(.hour))
        #expect(c.statistics().map(\.startDate) == [date("2025-06-01T12:00:00Z")])
        try await ledger.close()
    }

    @Test func collectionsEnumerateBucketsWithValuesInAnyUnit() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let app = try await Self.store(ledger, Self.appA, [.quantity(.heartRate)])
        func bpm(_ v: Double, _ from: String, _ to: String) throws -> Sample {
            .quantity(try QuantitySample(type: .heartRate, quantity: try Quantity(v, unit: "count/min"), start: date(from), end: date(to)))
        }
        // 60 bpm for 50 min and 120 bpm for 10 min on 1 June; 80 bpm once on 3 June
        try await app.save([try bpm(60, "2025-06-01T10:00:00Z", "2025-06-01T10:50:00Z"),
                            try bpm(120, "2025-06-01T10:50:00Z", "2025-06-01T11:00:00Z"),
                            try bpm(80, "2025-06-03T09:00:00Z", "2025-06-03T09:00:00Z")])
        let perMinute = try HealthUnit("count/min")
        let c = try await app.statisticsCollection(for: .heartRate, options: [.discreteAverage, .discreteMax, .mostRecent],
                                                   anchor: date("2025-01-01T00:00:00+01:00"),
                                                   interval: try StatisticsInterval(.day), timeZone: TimeZone(identifier: "Europe/Berlin"))
        var days: [(Date, Double?)] = []
        try c.enumerateStatistics(from: date("2025-06-01T00:00:00+02:00"), to: date("2025-06-04T00:00:00+02:00")) { s in
            days.append((s.startDate, try s.averageQuantity.map { (try $0.doubleValue(for: perMinute) * 1e9).rounded() / 1e9 }))
        }
        #expect(days.map(\.0) == ["2025-06-01", "2025-06-02", "2025-06-03"].map { date("\($0)T00:00:00+02:00") })
        #expect(days.map(\.1) == [70, nil, 80])
        let first = c.statistics(for: date("2025-06-01T12:00:00Z"))
        #expect(try first.maximumQuantity?.doubleValue(for: perMinute) == 120)
        #expect(first.mostRecentQuantityDateInterval == DateInterval(start: date("2025-06-01T10:50:00Z"), end: date("2025-06-01T11:00:00Z")))
        #expect(c.statistics(for: date("2025-06-02T12:00:00Z")).isEmpty)
        // a cumulative option on a discrete type is refused, as in HealthKit
        await #expect(throws: StatisticsError.optionNotAllowed(option: "cumulativeSum", type: "heartRate",
                                                               style: "discreteTemporallyWeighted")) {
            _ = try await owner.statistics(for: .heartRate, options: .cumulativeSum)
        }
        // a filter (the read engine's predicates) narrows the samples
        let fast = try await owner.statistics(for: .heartRate, filter: .quantity(.greater, try Quantity(100, unit: "count/min")),
                                              options: .discreteAverage)
        #expect(try fast.averageQuantity?.doubleValue(for: perMinute) == 120)
        try await ledger.close()
    }

    @Test func theProjectionSurvivesASnapshotAndDeletionsLeaveTheSums() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        let owner = OwnerStore(ledger: ledger)
        let app = try await Self.store(ledger, Self.appA)
        let kept = try Self.steps(10, "2025-06-01T10:00:00Z", "2025-06-01T10:10:00Z")
        let gone = try Self.steps(99, "2025-06-01T11:00:00Z", "2025-06-01T11:10:00Z")
        try await app.save([kept, gone])
        try await owner.setSourcePriority(.stepCount, [Self.appA.bundleIdentifier])
        try await app.delete([gone.uuid])
        #expect(try Self.sum(try await owner.statistics(for: .stepCount, options: .cumulativeSum)) == 10)
        try await ledger.snapshot()
        let before = await ledger.state
        try await ledger.close()
        let reopened = try Ledger.open(fs)
        let after = await reopened.state
        #expect(after.statistics == before.statistics)
        #expect(after.statistics.priority(ObjectType.quantity(.stepCount).code) == [Self.appA.bundleIdentifier])
        #expect(try Self.sum(try await OwnerStore(ledger: reopened).statistics(for: .stepCount, options: .cumulativeSum)) == 10)
        try await reopened.close()
    }

    /// Daily and hourly collections through the store (values read back from the
    /// projection, units converted at save) equal a brute-force merge over the saved
    /// samples, in several zones, with the owner's order.
    @Test(arguments: ["Europe/Berlin", "America/Los_Angeles", "Asia/Kolkata"])
    func storeCollectionsEqualABruteForceMerge(zone: String) async throws {
        let tz = try #require(TimeZone(identifier: zone))
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let apps = [Self.appA, Self.appB, Self.watch]
        var stores: [HealthStore] = []
        for app in apps { stores.append(try await Self.store(ledger, app, [.quantity(.distanceWalkingRunning)])) }
        var state: UInt64 = UInt64(zone.utf8.count) &* 7919
        func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        let origin = date("2025-03-28T00:00:00Z").timeIntervalSinceReferenceDate
        var saved: [(start: Double, end: Double, value: Double, app: Int)] = []
        for i in 0..<120 {
            let app = next(3)
            let start = origin + Double(next(5 * 24 * 60)) * 60
            let end = start + (i % 5 == 0 ? 0 : Double(next(180)) * 60)
            let kilometres = Double(1 + next(400)) / 100
            // distances saved in km and mi: the projection holds metres
            let unit = i % 2 == 0 ? "km" : "mi"
            let quantity = try Quantity(unit == "km" ? kilometres : kilometres / 1.609344, unit: unit)
            try await stores[app].save(.quantity(try QuantitySample(type: .distanceWalkingRunning, quantity: quantity,
                                                                    start: Date(timeIntervalSinceReferenceDate: start),
                                                                    end: Date(timeIntervalSinceReferenceDate: end))))
            saved.append((start, end, try quantity.doubleValue(for: .meter), app))
        }
        let order = [2, 0, 1]  // the Watch, then A, then B
        try await owner.setSourcePriority(.distanceWalkingRunning, order.map { apps[$0].bundleIdentifier })
        func rank(_ app: Int) -> Int { order.firstIndex(of: app)! }
        for unit in [StatisticsInterval.Unit.day, .hour] {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = tz
            let anchor = calendar.startOfDay(for: date("2025-01-01T12:00:00Z"))
            let c = try await owner.statisticsCollection(for: .distanceWalkingRunning, options: [.cumulativeSum, .separateBySource],
                                                         anchor: anchor, interval: try StatisticsInterval(unit), timeZone: tz)
            let low = saved.map(\.start).min()!, high = saved.map(\.end).max()!
            var buckets = 0
            try c.enumerateStatistics(from: Date(timeIntervalSinceReferenceDate: low),
                                      to: Date(timeIntervalSinceReferenceDate: high + 1)) { s in
                let a = s.startDate.timeIntervalSinceReferenceDate, b = s.endDate.timeIntervalSinceReferenceDate
                if unit == .day {
                    #expect(calendar.startOfDay(for: s.startDate) == s.startDate)
                    #expect(calendar.date(byAdding: .day, value: 1, to: s.startDate) == s.endDate)
                }
                let inside = saved.filter { ($0.end > $0.start && $0.start < b && $0.end > a) || ($0.end == $0.start && $0.start >= a && $0.start < b) }
                #expect(s.isEmpty == inside.isEmpty)
                guard !inside.isEmpty else { return }
                buckets += 1
                var points = Set([a, b])
                for x in inside { for p in [x.start, x.end] where p > a && p < b { points.insert(p) } }
                let p = points.sorted()
                var expected = 0.0
                for (u, v) in zip(p, p.dropFirst()) {
                    let mid = (u + v) / 2
                    let covering = inside.filter { $0.end > $0.start && $0.start <= mid && mid < $0.end }
                    guard let best = covering.map({ rank($0.app) }).min() else { continue }
                    for x in covering where rank(x.app) == best { expected += x.value * (v - u) / (x.end - x.start) }
                }
                for x in inside where x.end == x.start {
                    if !inside.contains(where: { $0.end > $0.start && $0.start <= x.start && x.start < $0.end && rank($0.app) < rank(x.app) }) {
                        expected += x.value
                    }
                }
                let got = try #require(try s.sumQuantity?.doubleValue(for: .meter))
                #expect(abs(got - expected) <= 1e-6 * max(1, expected), "\(zone) \(unit) \(s.startDate)")
                let bySource = try s.sources.map { try s.sumQuantity(for: $0)!.doubleValue(for: .meter) }.reduce(0, +)
                #expect(bySource >= got - 1e-6)
            }
            #expect(buckets == c.statistics().count)
        }
        try await ledger.close()
    }
}
