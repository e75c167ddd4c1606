import Foundation
import HealthModel
@testable import LedgerCore
import LedgerLog
import Testing
import TestSupport

/// The statistics arithmetic (`StatisticsEngine`) and the calendar buckets
/// (`StatisticsBuckets`), with worked examples and a brute-force comparison.
struct StatisticsEngineTests {
    static let utc = TimeZone(identifier: "UTC")!
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    static func t(_ text: String) -> Double { ISO8601.date(from: text)!.timeIntervalSinceReferenceDate }

    static func entry(_ from: Double, _ to: Double, _ value: Double, source: UInt32 = 1, rank: UInt32? = nil,
                      order: UInt32 = 0) -> StatisticsEntry {
        StatisticsEntry(start: from, end: to, value: value, source: source, rank: rank ?? source, order: order)
    }

    /// Values rounded to 1e-9, so that exact answers compare exactly.
    static func r(_ v: Double?) -> Double? { v.map { ($0 * 1e9).rounded() / 1e9 } }

    @Test func timeWeightedAverageWeighsByDuration() {
        // 60 bpm for 50 min, 120 bpm for 10 min: 70, not 90
        let e = [Self.entry(0, 3000, 60), Self.entry(3000, 3600, 120)]
        let out = StatisticsEngine.compute(e, style: .discreteTemporallyWeighted, options: [.discreteAverage], borders: [0, 3600])
        #expect(Self.r(out[0]?.merged.average) == 70)
        // the same samples averaged arithmetically: 90
        let plain = StatisticsEngine.compute(e, style: .discrete, options: [.discreteAverage], borders: [0, 3600])
        #expect(plain[0]?.merged.average == 90)
    }

    @Test func equivalentContinuousLevelAveragesEnergies() throws {
        let e = [Self.entry(0, 600, 70), Self.entry(600, 1200, 80)]
        let out = StatisticsEngine.compute(e, style: .discreteEquivalentContinuousLevel,
                                           options: [.discreteAverage, .discreteMin, .discreteMax], borders: [0, 1200])
        let average = try #require(out[0]?.merged.average)
        #expect((average * 100).rounded() / 100 == 77.40)
        #expect(out[0]?.merged.minimum == 70)
        #expect(out[0]?.merged.maximum == 80)
    }

    @Test func aSampleSpanningBucketsIsSplitByTime() {
        // 100 steps from 13:57 to 14:02, hourly buckets: 60 and 40
        let e = [Self.entry(Self.t("2025-06-01T13:57:00Z"), Self.t("2025-06-01T14:02:00Z"), 100)]
        let borders = [Self.t("2025-06-01T13:00:00Z"), Self.t("2025-06-01T14:00:00Z"), Self.t("2025-06-01T15:00:00Z")]
        let out = StatisticsEngine.compute(e, style: .cumulative, options: [.cumulativeSum, .separateBySource], borders: borders)
        #expect(out.map { Self.r($0?.merged.sum) } == [60, 40])
        #expect(out.map { Self.r($0?.bySource[1]?.sum) } == [60, 40])
    }

    @Test func aSampleSpanningThreeBucketsIsSplitInThree() {
        // 300 steps from 13:30 to 15:30: 75 · 150 · 75
        let e = [Self.entry(Self.t("2025-06-01T13:30:00Z"), Self.t("2025-06-01T15:30:00Z"), 300)]
        let borders = (13...16).map { Self.t("2025-06-01T\($0):00:00Z") }
        let out = StatisticsEngine.compute(e, style: .cumulative, options: [.cumulativeSum, .duration], borders: borders)
        #expect(out.map { $0?.merged.sum } == [75, 150, 75])
        #expect(out.map { $0?.merged.duration } == [1800, 3600, 1800])
    }

    @Test func aZeroLengthSampleCountsWholeInTheBucketHoldingItsInstant() {
        let borders = [0.0, 3600, 7200]
        let e = [Self.entry(3600, 3600, 42), Self.entry(100, 100, 8)]
        let out = StatisticsEngine.compute(e, style: .cumulative, options: [.cumulativeSum, .duration], borders: borders)
        #expect(out.map { $0?.merged.sum } == [8, 42])
        #expect(out.map { $0?.merged.duration } == [0, 0])
    }

    @Test func overlappingSourcesMergeByPriority() {
        // A = 60 steps over 0–60 min, B = 120 steps over 30–90 min
        let a = Self.entry(0, 3600, 60, source: 1), b = Self.entry(1800, 5400, 120, source: 2)
        let aFirst = StatisticsEngine.compute([a, b], style: .cumulative, options: [.cumulativeSum, .separateBySource],
                                              borders: [0, 7200])
        #expect(aFirst[0]?.merged.sum == 120)
        // per source, unmerged: 60 + 120 = 180 > 120
        #expect(aFirst[0]?.bySource[1]?.sum == 60)
        #expect(aFirst[0]?.bySource[2]?.sum == 120)
        var a2 = a, b2 = b
        a2.rank = 2
        b2.rank = 1
        let bFirst = StatisticsEngine.compute([a2, b2], style: .cumulative, options: [.cumulativeSum], borders: [0, 7200])
        #expect(bFirst[0]?.merged.sum == 150)
    }

    @Test func samplesOfOneSourceThatOverlapAllCount() {
        // one source's two overlapping samples add up; a lower-ranked source under them does not
        let e = [Self.entry(0, 3600, 50, source: 1), Self.entry(1800, 3600, 30, source: 1), Self.entry(0, 3600, 999, source: 2)]
        let out = StatisticsEngine.compute(e, style: .cumulative, options: [.cumulativeSum], borders: [0, 3600])
        #expect(out[0]?.merged.sum == 80)
    }

    @Test func aZeroLengthSampleUnderABetterSourceDoesNotCount() {
        let e = [Self.entry(0, 3600, 60, source: 1), Self.entry(100, 100, 5, source: 2), Self.entry(3600, 3600, 7, source: 2)]
        let out = StatisticsEngine.compute(e, style: .cumulative, options: [.cumulativeSum], borders: [0, 7200])
        // the instant at 100 s lies under source 1's sample; the one at 3600 s does not (ends are open)
        #expect(out[0]?.merged.sum == 67)
    }

    @Test func mostRecentMinMaxAndDurationMergeOverlaps() throws {
        let e = [Self.entry(0, 600, 80, order: 0), Self.entry(300, 900, 70, order: 1), Self.entry(300, 900, 75, order: 2),
                 Self.entry(2000, 2000, 90, order: 3)]
        let out = StatisticsEngine.compute(e, style: .discrete, options: [.mostRecent, .duration, .discreteMin, .discreteMax],
                                           borders: [0, 1800, 3600])
        #expect(out[0]?.merged.mostRecent == 75)  // equal start and end: the later in the log
        #expect(out[0]?.merged.mostRecentInterval == DateInterval(start: Date(timeIntervalSinceReferenceDate: 300),
                                                                  end: Date(timeIntervalSinceReferenceDate: 900)))
        #expect(out[0]?.merged.duration == 900)
        #expect(out[0]?.merged.minimum == 70)
        #expect(out[1]?.merged.maximum == 90)
        #expect(out[1]?.merged.duration == 0)
    }

    @Test func emptyBucketsHaveNoValue() {
        let out = StatisticsEngine.compute([Self.entry(10, 20, 5)], style: .cumulative, options: [.cumulativeSum],
                                           borders: [0, 100, 200])
        #expect(out[0]?.merged.sum == 5)
        #expect(out[1] == nil)
    }

    @Test func optionsMustSuitTheAggregationStyle() {
        #expect(throws: StatisticsError.optionNotAllowed(option: "discreteAverage", type: "stepCount", style: "cumulative")) {
            try StatisticsOptions.discreteAverage.check(for: .stepCount)
        }
        #expect(throws: StatisticsError.optionNotAllowed(option: "cumulativeSum", type: "heartRate",
                                                         style: "discreteTemporallyWeighted")) {
            try StatisticsOptions([.cumulativeSum, .separateBySource]).check(for: .heartRate)
        }
        #expect(throws: StatisticsError.noOptions) { try StatisticsOptions.separateBySource.check(for: .heartRate) }
        #expect(throws: StatisticsError.invalidInterval("0 days: the count must lie in 1…100000")) {
            try StatisticsInterval(.day, count: 0)
        }
    }

    // MARK: Calendar buckets

    @Test func daysAcrossDSTAreTwentyThreeAndTwentyFiveHours() throws {
        let b = StatisticsBuckets(anchor: ISO8601.date(from: "2025-01-01T00:00:00+01:00")!,
                                  interval: try StatisticsInterval(.day), timeZone: Self.berlin)
        let spring = b.index(containing: Self.t("2025-03-30T12:00:00+02:00"))
        #expect(b.start(spring) == Self.t("2025-03-30T00:00:00+01:00"))
        #expect(b.start(spring + 1) - b.start(spring) == 23 * 3600)
        let autumn = b.index(containing: Self.t("2025-10-26T12:00:00+01:00"))
        #expect(b.start(autumn) == Self.t("2025-10-26T00:00:00+02:00"))
        #expect(b.start(autumn + 1) - b.start(autumn) == 25 * 3600)
        // hourly buckets: 23 on the spring day, 25 on the autumn day
        let hours = StatisticsBuckets(anchor: ISO8601.date(from: "2025-01-01T00:00:00+01:00")!,
                                      interval: try StatisticsInterval(.hour), timeZone: Self.berlin)
        #expect(hours.index(containing: b.start(spring + 1)) - hours.index(containing: b.start(spring)) == 23)
        #expect(hours.index(containing: b.start(autumn + 1)) - hours.index(containing: b.start(autumn)) == 25)
        // a day's steps spread evenly over the autumn day: the day bucket holds them all
        let day = Self.entry(b.start(autumn), b.start(autumn + 1), 2500)
        let out = StatisticsEngine.compute([day], style: .cumulative, options: [.cumulativeSum],
                                           borders: try hours.borders(from: hours.index(containing: b.start(autumn)),
                                                                      through: hours.index(containing: b.start(autumn + 1) - 1)))
        #expect(out.count == 25)
        #expect(out.allSatisfy { $0?.merged.sum == 100 })
    }

    /// Pacific/Apia skipped 2011-12-30 (it crossed the date line).
    /// The calendar gives that day's bucket no length; it does not exist, and a
    /// collection lists the four days around it, each 24 hours, without a gap.
    @Test func aDayTheZoneSkippedIsNoBucket() throws {
        let apia = TimeZone(identifier: "Pacific/Apia")!
        let b = StatisticsBuckets(anchor: ISO8601.date(from: "2000-01-01T00:00:00-11:00")!, interval: try StatisticsInterval(.day),
                                  timeZone: apia)
        let first = b.index(containing: Self.t("2011-12-28T00:00:00-10:00"))
        let last = b.index(containing: Self.t("2012-01-01T12:00:00+14:00"))
        #expect(last - first == 4)  // five calendar days counted from the anchor, one of them skipped
        let kept = (first...last).filter(b.exists)
        #expect(kept.count == 4)
        #expect(kept.map { b.start($0) } == ["2011-12-28T00:00:00-10:00", "2011-12-29T00:00:00-10:00", "2011-12-31T00:00:00+14:00",
                                              "2012-01-01T00:00:00+14:00"].map(Self.t))
        #expect(kept.map { b.start($0 + 1) - b.start($0) } == [86_400, 86_400, 86_400, 86_400])
        let collection = StatisticsCollection(type: .stepCount, options: .cumulativeSum, buckets: b, filled: [:])
        var listed: [(Double, Double)] = []
        try collection.enumerateStatistics(from: Date(timeIntervalSinceReferenceDate: Self.t("2011-12-28T00:00:00-10:00")),
                                           to: Date(timeIntervalSinceReferenceDate: Self.t("2012-01-02T00:00:00+14:00"))) {
            listed.append(($0.startDate.timeIntervalSinceReferenceDate, $0.endDate.timeIntervalSinceReferenceDate))
        }
        #expect(listed.map(\.0) == kept.map { b.start($0) })
        #expect(listed.allSatisfy { $0.1 - $0.0 == 86_400 })
        // fixed-length buckets always exist
        let hours = StatisticsBuckets(anchor: ISO8601.date(from: "2000-01-01T00:00:00-11:00")!, interval: try StatisticsInterval(.hour),
                                      timeZone: apia)
        #expect(hours.exists(hours.index(containing: Self.t("2011-12-30T12:00:00Z"))))
    }

    @Test func weekBucketsAnchoredOnAMonday() throws {
        let b = StatisticsBuckets(anchor: ISO8601.date(from: "2025-01-06T00:00:00+01:00")!,  // a Monday
                                  interval: try StatisticsInterval(.week), timeZone: Self.berlin)
        let sunday = b.index(containing: Self.t("2025-01-12T23:30:00+01:00"))
        let monday = b.index(containing: Self.t("2025-01-13T00:30:00+01:00"))
        #expect(sunday == 0)
        #expect(monday == 1)
        // before the anchor too; the week holding the spring change is 167 hours
        #expect(b.start(-1) == Self.t("2024-12-30T00:00:00+01:00"))
        let dst = b.index(containing: Self.t("2025-03-30T12:00:00+02:00"))
        #expect(b.start(dst) == Self.t("2025-03-24T00:00:00+01:00"))
        #expect(b.start(dst + 1) - b.start(dst) == 167 * 3600)
    }

    @Test func monthBucketsFollowTheCalendar() throws {
        let b = StatisticsBuckets(anchor: ISO8601.date(from: "2025-01-01T00:00:00Z")!, interval: try StatisticsInterval(.month),
                                  timeZone: Self.utc)
        #expect((0..<3).map { (b.start($0 + 1) - b.start($0)) / 86_400 } == [31, 28, 31])
        // anchored on the 31st: each bucket counted from the anchor, so February ends on its last day
        let end = StatisticsBuckets(anchor: ISO8601.date(from: "2025-01-31T00:00:00Z")!, interval: try StatisticsInterval(.month),
                                    timeZone: Self.utc)
        #expect(end.start(1) == Self.t("2025-02-28T00:00:00Z"))
        #expect(end.start(2) == Self.t("2025-03-31T00:00:00Z"))
        let two = StatisticsBuckets(anchor: ISO8601.date(from: "2025-01-01T00:00:00Z")!,
                                    interval: try StatisticsInterval(.month, count: 3), timeZone: Self.utc)
        #expect(two.index(containing: Self.t("2025-07-15T00:00:00Z")) == 2)
        #expect(two.start(2) == Self.t("2025-07-01T00:00:00Z"))
        let years = StatisticsBuckets(anchor: ISO8601.date(from: "2024-01-01T00:00:00Z")!, interval: try StatisticsInterval(.year),
                                      timeZone: Self.utc)
        #expect((years.start(1) - years.start(0)) / 86_400 == 366)
    }

    // MARK: Brute force

    /// A small linear congruential generator (deterministic across platforms).
    struct Seeded {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 33
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    /// The merged sum of one bucket, computed slowly: every elementary stretch between
    /// two boundaries, the best rank among samples covering its middle.
    static func bruteSum(_ e: [StatisticsEntry], _ lo: Double, _ hi: Double) -> Double {
        var points = Set([lo, hi])
        for x in e { for p in [x.start, x.end] where p > lo && p < hi { points.insert(p) } }
        let sorted = points.sorted()
        var sum = 0.0
        for (a, b) in zip(sorted, sorted.dropFirst()) {
            let mid = (a + b) / 2
            let covering = e.filter { $0.end > $0.start && $0.start <= mid && mid < $0.end }
            guard let best = covering.map(\.rank).min() else { continue }
            for x in covering where x.rank == best { sum += x.value * (b - a) / (x.end - x.start) }
        }
        for x in e where x.end == x.start && x.start >= lo && x.start < hi {
            let better = e.contains { $0.end > $0.start && $0.start <= x.start && x.start < $0.end && $0.rank < x.rank }
            if !better { sum += x.value }
        }
        return sum
    }

    @Test(arguments: ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"])
    func collectionsEqualABruteForceComputation(zone: String) throws {
        let tz = try #require(TimeZone(identifier: zone))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = tz
        for seed in 1...6 {
            var g = Seeded(state: UInt64(seed) &* 977 &+ UInt64(zone.utf8.count))
            let origin = Self.t("2025-03-27T00:00:00Z")  // spans the spring change in Europe and elsewhere
            var entries: [StatisticsEntry] = []
            for i in 0..<(40 + g.below(60)) {
                let start = origin + Double(g.below(8 * 86_400 / 60)) * 60
                let length = g.below(4) == 0 ? 0 : Double(g.below(36 * 60)) * 60
                entries.append(StatisticsEntry(start: start, end: start + length, value: Double(1 + g.below(500)),
                                               source: UInt32(1 + g.below(3)), rank: UInt32(g.below(3)), order: UInt32(i)))
            }
            // ranks are per source in the store; keep that shape
            entries = entries.map { var e = $0; e.rank = e.source * 2 + e.rank % 2; return e }
            let anchor = calendar.startOfDay(for: Date(timeIntervalSinceReferenceDate: origin))
            let unit: StatisticsInterval.Unit = seed % 2 == 0 ? .day : .hour
            let buckets = StatisticsBuckets(anchor: anchor, interval: try StatisticsInterval(unit, count: seed % 3 == 0 ? 3 : 1),
                                            timeZone: tz)
            let lo = entries.map(\.start).min()!, hi = entries.map(\.end).max()!
            let first = buckets.index(containing: lo), last = buckets.index(containing: hi)
            let borders = try buckets.borders(from: first, through: last)
            // the borders themselves, from Foundation stepping one interval at a time
            if unit == .day && seed % 3 != 0 {
                for (a, b) in zip(borders, borders.dropFirst()) {
                    let next = calendar.date(byAdding: .day, value: 1, to: Date(timeIntervalSinceReferenceDate: a))!
                    #expect(next.timeIntervalSinceReferenceDate == b)
                    #expect(calendar.startOfDay(for: Date(timeIntervalSinceReferenceDate: a)).timeIntervalSinceReferenceDate == a)
                }
            }
            let shuffled = entries.reversed().map { $0 }
            let out = StatisticsEngine.compute(shuffled, style: .cumulative, options: [.cumulativeSum, .separateBySource, .duration],
                                               borders: borders)
            for k in 0..<(borders.count - 1) {
                let (a, b) = (borders[k], borders[k + 1])
                let inside = entries.filter { ($0.end > $0.start && $0.start < b && $0.end > a) || ($0.end == $0.start && $0.start >= a && $0.start < b) }
                guard !inside.isEmpty else {
                    #expect(out[k] == nil)
                    continue
                }
                let got = try #require(out[k])
                let expected = Self.bruteSum(inside, a, b)
                #expect(abs(got.merged.sum! - expected) <= 1e-9 * max(1, expected), "\(zone) seed \(seed) bucket \(k)")
                for source in Set(inside.map(\.source)) {
                    let mine = inside.filter { $0.source == source }
                    let share = mine.reduce(0.0) { s, x in
                        x.end == x.start ? s + x.value : s + x.value * (min(b, x.end) - max(a, x.start)) / (x.end - x.start)
                    }
                    #expect(abs(got.bySource[source]!.sum! - share) <= 1e-9 * max(1, share))
                }
                // coverage: a point is covered when some sample holds it
                var points = Set([a, b])
                for x in inside { for p in [x.start, x.end] where p > a && p < b { points.insert(p) } }
                let p = points.sorted()
                let covered = zip(p, p.dropFirst()).reduce(0.0) { s, ab in
                    let mid = (ab.0 + ab.1) / 2
                    return inside.contains { $0.start <= mid && mid < $0.end } ? s + ab.1 - ab.0 : s
                }
                #expect(abs(got.merged.duration! - covered) <= 1e-6)
            }
            // the sums over all buckets equal the merged sum over one bucket spanning them
            let whole = StatisticsEngine.compute(entries, style: .cumulative, options: [.cumulativeSum],
                                                 borders: [borders.first!, borders.last!])
            let total = out.compactMap { $0?.merged.sum }.reduce(0, +)
            #expect(abs(whole[0]!.merged.sum! - total) <= 1e-6 * max(1, total))
        }
    }
}

/// Event kind 13 through the rules and the codec.
struct SourcePriorityEventTests {
    @Test func theRulesRefuseWhatTheDecoderWouldRefuse() async throws {
        let ledger = try makeLedger()
        try await ledger.append(.registerApp(appA))
        for (sources, why) in [(["com.example.a", "com.example.a"], "a source is listed twice"),
                               ([""], "a bundle identifier has 1 to 255 bytes"),
                               ([String(repeating: "x", count: 256)], "a bundle identifier has 1 to 255 bytes")] {
            await #expect(throws: RuleViolation.invalidSourcePriority(why)) {
                try await ledger.append(.setSourcePriority(.stepCount, sources))
            }
        }
        await #expect(throws: RuleViolation.appNotRegistered("com.example.b", rule: "E8")) {
            try await ledger.append(.setSourcePriority(.stepCount, ["com.example.a", "com.example.b"]))
        }
        let before = await ledger.state.lastSequence
        try await ledger.append(.setSourcePriority(.stepCount, ["com.example.a"]))
        #expect(await ledger.state.lastSequence == before + 1)
        // the payload: type code 0x0208 · one identifier; a decoder refuses a duplicate list
        let payload = EventCodec.payload(.sourcePrioritySet(type: .stepCount, sources: ["com.example.a"]))
        #expect(payload == [0, 0x08, 0x02, 1, 13] + Array("com.example.a".utf8))
        let twice = EventCodec.payload(.sourcePrioritySet(type: .stepCount, sources: ["a", "a"]))
        #expect(throws: EventDecodingError.self) {
            try twice.withUnsafeBytes { try EventCodec.decode(kind: 13, version: 1, payload: $0) }
        }
        try await ledger.close()
    }
}

/// The statistics projection folds the same from the store's path (decoded samples)
/// and from the log's bytes (replay), for every way a manual entry and a unit can be written.
struct StatisticsProjectionTests {
    @Test func storeFoldAndReplayAgreeOnValuesAndManualEntries() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        try await ledger.grant(appA, share: [.quantity(.bodyMass), .quantity(.stepCount), .category(.sleepAnalysis)])
        func m(_ v: MetadataValue?) -> Metadata {
            var out = Metadata()
            out.append("note", .string("HKWasUserEntered"))  // a value that spells the key is not the key
            out.append("HKWasUserEnteredX", .bool(true))
            if let v { out.append(Metadata.WellKnownKey.wasUserEntered, v) }
            out.append("after", .quantity(try! Quantity(3, unit: "kg")))
            return out
        }
        let samples: [Sample] = [
            try quantitySample(.bodyMass, 154, "lb", at: "2026-01-01T08:00:00Z", metadata: m(.bool(true))),
            try quantitySample(.bodyMass, 70, "kg", at: "2026-01-02T08:00:00Z", metadata: m(.integer(1))),
            try quantitySample(.bodyMass, 71, "kg", at: "2026-01-03T08:00:00Z", metadata: m(.string("1"))),
            try quantitySample(.bodyMass, 72, "kg", at: "2026-01-04T08:00:00Z", metadata: m(.bool(false))),
            try quantitySample(.bodyMass, 73000, "g", at: "2026-01-05T08:00:00Z", metadata: m(nil)),
            try quantitySample(.stepCount, 10, "count", at: "2026-01-05T08:00:00Z"),
            .category(try CategorySample(type: .sleepAnalysis, value: 0, start: date("2026-01-05T00:00:00Z"),
                                         end: date("2026-01-05T06:00:00Z"))),
        ]
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: samples))
        let folded = await ledger.state.statistics
        #expect(folded.userEntered.map { $0 != 0 } == [true, true, true, false, false, false, false])
        #expect(folded.values[0] == 154 * 0.45359237)
        #expect(Array(folded.values[1...5]) == [70, 71, 72, 73, 10])
        #expect(folded.values[6].isNaN)
        try await ledger.close()
        let replayed = try StateLoader.load(fs, reader: try LogReader(fs), useSnapshots: false).state.statistics
        #expect(replayed == folded)
    }
}

extension StatisticsProjectionTests {
    @Test func verifyNamesTheFirstStatisticsDifference() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.stepCount)])
        let sample = try quantitySample(.stepCount, 10, "count", at: "2026-01-05T08:00:00Z")
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [sample]))
        let a = await ledger.state
        var b = a
        b.statistics = StatisticsProjection(values: [11], userEntered: [0], priorities: [:], grantOrder: a.statistics.grantOrder)
        #expect(StateDifference.first(a, b) == StateDifference(projection: "statistics", key: sample.uuid.uuidString))
        b.statistics = StatisticsProjection(values: a.statistics.values, userEntered: [0],
                                            priorities: [ObjectType.quantity(.stepCount).code: ["com.example.a"]],
                                            grantOrder: a.statistics.grantOrder)
        #expect(StateDifference.first(a, b) == StateDifference(projection: "sourcePriorities", key: "HKQuantityTypeIdentifierStepCount"))
        b.statistics = StatisticsProjection(values: a.statistics.values, userEntered: [0], priorities: [:], grantOrder: [])
        #expect(StateDifference.first(a, b) == StateDifference(projection: "statistics", key: "grantOrder"))
        #expect(StateDifference.first(a, a) == nil)
        try await ledger.close()
    }
}
