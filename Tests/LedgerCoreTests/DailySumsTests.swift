import Foundation
import HealthModel
import Testing
@testable import LedgerCore
import LedgerChecksums
import LedgerLog
import TestSupport

/// The daily sums (`DailySums`): a daily `--sum` collection answered from them is the
/// engine's answer bit for bit — over randomized ledgers with two apps, manual entries,
/// a priority list or none, overlaps, samples over midnight and across DST changes,
/// instants, deletions, every zone, anchor and date range — and they travel through
/// snapshots as section 33, damaged bytes refused, never a trap.
struct DailySumsTests {
    typealias Seeded = StatisticsEngineTests.Seeded

    /// A ledger of `stepCount` samples from apps A and B around Europe's spring change.
    static func randomLedger(seed: Int, fs: SimulatedFileSystem = SimulatedFileSystem(), sparse: Bool = false) async throws -> Ledger {
        var g = Seeded(state: UInt64(seed) &* 7919 &+ 17)
        let ledger = try makeLedger(fs)
        try await ledger.grant(appA, share: [.quantity(.stepCount)])
        try await ledger.grant(appB, share: [.quantity(.stepCount)])
        if seed % 3 == 0 { try await ledger.append(.setSourcePriority(.stepCount, [appB.bundleIdentifier, appA.bundleIdentifier])) }
        if seed % 2 == 1 { try await ledger.append(.setOwnerTimeZone("Europe/Berlin")) }
        let origin = date("2025-03-27T00:00:00Z").timeIntervalSinceReferenceDate
        var uuids: [UUID] = []
        for batch in 0..<3 {
            var a: [Sample] = [], b: [Sample] = []
            for i in 0..<(30 + g.below(40)) {
                // Sparse: samples of a few minutes, far apart (days without overlaps).
                let start = origin + Double(sparse ? g.below(8) * 86_400 + g.below(20) * 3600 : g.below(8 * 1440) * 60)
                let length: Double = g.below(6) == 0 ? 0 : Double(sparse ? 60 * (1 + g.below(30))
                                                                    : g.below(5) == 0 ? g.below(40 * 60) * 60 : g.below(90) * 60)
                let value = g.below(3) == 0 ? Double(g.below(100_000)) / 7 : Double(g.below(2000))
                var metadata = Metadata()
                if g.below(4) == 0 { metadata.append(Metadata.WellKnownKey.wasUserEntered, .bool(true)) }
                let uuid = fixedUUID(1 + batch * 1000 + i)
                uuids.append(uuid)
                let sample = Sample.quantity(try QuantitySample(type: .stepCount, quantity: try Quantity(value, unit: "count"),
                                                                start: Date(timeIntervalSinceReferenceDate: start),
                                                                end: Date(timeIntervalSinceReferenceDate: start + length),
                                                                uuid: uuid, metadata: metadata))
                if g.below(2) == 0 { a.append(sample) } else { b.append(sample) }
            }
            if !a.isEmpty { try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: a)) }
            if !b.isEmpty { try await ledger.append(.save(bundleIdentifier: appB.bundleIdentifier, samples: b)) }
        }
        let gone = (0..<(uuids.count / 10)).map { _ in uuids[g.below(uuids.count)] }
        try await ledger.append(.delete(bundleIdentifier: nil, uuids: Array(Set(gone)).sorted { $0.uuidString < $1.uuidString },
                                        reason: nil))
        return ledger
    }

    /// Each bucket's start, end, emptiness and sum bits.
    static func shape(_ c: StatisticsCollection) -> [String] {
        c.statistics().map { s in
            "\(s.startDate.timeIntervalSinceReferenceDate) \(s.endDate.timeIntervalSinceReferenceDate) \(s.isEmpty) "
                + "\(s.values.sum.map { String($0.bitPattern, radix: 16) } ?? "-")"
        }
    }

    static func midnight(_ text: String, _ zone: TimeZone) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.startOfDay(for: date(text))
    }

    @Test(arguments: 1...8)
    func dailySumsAnswerAsTheEngineDoes(seed: Int) async throws {
        let ledger = try await Self.randomLedger(seed: seed, sparse: seed >= 7)
        let exact = await ledger.state
        try await ledger.close()
        var fast = exact
        fast.dailySums.sums = DailySums.compute(from: exact)
        #expect(!fast.dailySums.sums.tables.isEmpty)
        var answered = 0, answeredWithRange = 0
        for zoneName in ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kathmandu", "GMT"] {
            let zone = try #require(TimeZone(identifier: zoneName))
            let predicates: [DatePredicate?] = [
                nil,
                DatePredicate(start: Self.midnight("2025-03-29T12:00:00Z", zone), end: Self.midnight("2025-04-02T12:00:00Z", zone)),
                DatePredicate(start: Self.midnight("2025-03-30T12:00:00Z", zone), end: nil),
                DatePredicate(start: nil, end: Self.midnight("2025-03-31T12:00:00Z", zone)),
                DatePredicate(start: date("2025-03-29T10:30:00Z"), end: date("2025-04-01T18:00:00Z")),
                DatePredicate(start: Self.midnight("2025-03-29T12:00:00Z", zone), end: Self.midnight("2025-03-29T12:00:00Z", zone)),
                DatePredicate(start: Self.midnight("2025-01-01T12:00:00Z", zone), end: Self.midnight("2025-06-01T12:00:00Z", zone)),
                DatePredicate(start: Self.midnight("2025-04-10T12:00:00Z", zone), end: nil),
                DatePredicate(start: Self.midnight("2025-03-29T12:00:00Z", zone), end: Self.midnight("2025-04-01T12:00:00Z", zone),
                              strictStartDate: true),
            ]
            let anchors = [Self.midnight("2000-01-01T12:00:00Z", zone), Self.midnight("2025-03-30T12:00:00Z", zone),
                           date("2025-03-01T06:00:00Z")]
            for predicate in predicates {
                for anchor in anchors {
                    for interval in [try StatisticsInterval(.day), try StatisticsInterval(.day, count: 2), try StatisticsInterval(.hour)] {
                        var e = exact, f = fast
                        let want = try StatisticsQuery.collection(type: .stepCount, predicate: predicate, options: .cumulativeSum,
                                                                  anchor: anchor, interval: interval, timeZone: zone,
                                                                  visibility: .everything, fs: nil, in: &e)
                        let got = try StatisticsQuery.collection(type: .stepCount, predicate: predicate, options: .cumulativeSum,
                                                                 anchor: anchor, interval: interval, timeZone: zone,
                                                                 visibility: .everything, fs: nil, in: &f)
                        #expect(Self.shape(got) == Self.shape(want), "seed \(seed) \(zoneName) \(String(describing: predicate)) \(anchor) \(interval)")
                        let buckets = StatisticsBuckets(anchor: anchor, interval: interval, timeZone: zone)
                        if try StatisticsQuery.collectionFromDailySums(type: .stepCount, predicate: predicate, filter: nil,
                                                                        options: .cumulativeSum, buckets: buckets,
                                                                        visibility: .everything, in: &f) != nil {
                            answered += 1
                            if predicate != nil { answeredWithRange += 1 }
                        }
                    }
                }
            }
        }
        // The tables answered the unfiltered daily queries of UTC (GMT's days are UTC's)
        // and, with the owner's zone set, of Berlin, from both midnights.
        #expect(answered >= (seed % 2 == 1 ? 8 : 4))
        // Sparse samples leave quiet midnights: whole-day ranges are answered too.
        if seed >= 7 { #expect(answeredWithRange > 0) }
    }

    /// The argument for a date range: the engine's sweep over the samples overlapping
    /// [from, …) gives each day from `from` on the sums of the sweep over all samples
    /// when `from` is a quiet border — and not always when it is not (the order in
    /// which open samples are added differs), which is why the tables answer only then.
    /// `count` entries of two ranks over `days` days, in start order: one in eight an
    /// instant, one in `long.0` of the rest up to `long.1` hours long, the others up to
    /// `short` hours.
    static func entries(count: Int, days: Int, long: (Int, Int), short: Int, _ g: inout Seeded) -> [StatisticsEntry] {
        var entries: [StatisticsEntry] = []
        for i in 0..<count {
            let start = Double(g.below(days * 24)) * 3600 + Double(g.below(3600))
            let length = g.below(8) == 0 ? 0 : Double(g.below(g.below(long.0) == 0 ? long.1 * 3600 : short * 3600))
            entries.append(StatisticsEntry(start: start, end: start + length, value: Double(g.below(100_000)) / 7,
                                           source: 1, rank: UInt32(g.below(2)), order: UInt32(i)))
        }
        StatisticsEngine.sortByStart(&entries)
        return entries
    }

    /// The days summed in runs cut at quiet borders, on threads of their own, are the
    /// one sweep's sums bit for bit: for 2 to 5 runs, over entries with overlaps,
    /// instants, two ranks, samples over midnight, and days the zone skips (equal
    /// borders).
    @Test func runsCutAtQuietBordersSumAsOneSweep() {
        var split = 0
        for seed in 1...60 {
            var g = Seeded(state: UInt64(seed) &* 613 &+ 11)
            let entries = Self.entries(count: 60 + g.below(200), days: 12, long: (4, 30), short: 2, &g)
            // 14 days, day 5 skipped (a border repeated).
            let borders = (0...14).map { (k: Int) -> Double in Double(k < 6 ? k : k - 1) * 86_400 }
            var flags = [UInt8](repeating: 0, count: borders.count)
            let startingBefore = borders.map { border in entries.filter { $0.start < border }.count }
            for (k, border) in borders.enumerated() where !entries.contains(where: { $0.start < border && $0.end > border }) {
                flags[k] |= DailySums.Table.quiet
            }
            let whole = StatisticsEngine.mergedSums(entries, borders: borders)
            for cores in 2...5 {
                let sums = DailySums.mergedSums(entries, borders: borders, quiet: flags, startingBefore: startingBefore,
                                                cores: cores, perRun: 10)
                #expect(sums.map(\.bitPattern) == whole.map(\.bitPattern), "seed \(seed), \(cores) runs")
            }
            if flags[1..<(borders.count - 1)].contains(where: { $0 & DailySums.Table.quiet != 0 }) { split += 1 }
        }
        #expect(split > 20)  // most seeds had a border to cut at
    }

    @Test func aQuietStartMakesTheRangedSweepTheWholeSweep() {
        var differedAtBusyBorders = 0, quietBordersTried = 0
        for seed in 1...400 {
            var g = Seeded(state: UInt64(seed) &* 31 &+ 5)
            let entries = Self.entries(count: 20 + g.below(40), days: 6, long: (3, 40), short: 3, &g)
            let borders = (0...8).map { Double($0) * 86_400 }
            let whole = StatisticsEngine.mergedSums(entries, borders: borders)
            for k in 1..<7 {
                let from = borders[k]
                let ranged = entries.filter { $0.end >= from }
                let sums = StatisticsEngine.mergedSums(ranged, borders: Array(borders[k...]))
                let same = sums.indices.allSatisfy { sums[$0].bitPattern == whole[k + $0].bitPattern }
                let quiet = !entries.contains { $0.start < from && $0.end > from }
                if quiet {
                    quietBordersTried += 1
                    #expect(same, "seed \(seed) border \(k)")
                } else if !same {
                    differedAtBusyBorders += 1
                }
            }
        }
        #expect(quietBordersTried > 100)
        #expect(differedAtBusyBorders > 0)
    }

    @Test func otherQueriesAreNotAnsweredFromTheTables() async throws {
        let ledger = try await Self.randomLedger(seed: 2)
        var state = await ledger.state
        try await ledger.close()
        state.dailySums.sums = DailySums.compute(from: state)
        let zone = TimeZone(identifier: "UTC")!
        let buckets = StatisticsBuckets(anchor: Self.midnight("2000-01-01T12:00:00Z", zone), interval: try StatisticsInterval(.day),
                                        timeZone: zone)
        func answers(_ options: StatisticsOptions, _ visibility: QueryVisibility = .everything) throws -> Bool {
            try StatisticsQuery.collectionFromDailySums(type: .stepCount, predicate: nil, filter: nil, options: options,
                                                       buckets: buckets, visibility: visibility, in: &state) != nil
        }
        #expect(try answers(.cumulativeSum))
        #expect(try !answers([.cumulativeSum, .separateBySource]))
        #expect(try !answers([.cumulativeSum, .duration]))
        #expect(try !answers(.cumulativeSum, .ownSamplesOnly(1)))
        // A state folded past the tables does not use them.
        var later = await ledger.state
        later.dailySums.sums = DailySums(lastSequence: state.lastSequence - 1, tables: state.dailySums.sums.tables)
        #expect(later.dailySums.sums.tables(for: ObjectType.quantity(.stepCount).code, in: later).isEmpty)
    }

    @Test func aSnapshotCarriesTheTablesAndAFoldLeavesThem() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try await Self.randomLedger(seed: 5, fs: fs)
        _ = try await ledger.snapshot()
        let live = await ledger.state
        try await ledger.close()
        let loaded = try StateLoader.load(fs, reader: try LogReader(fs)).state
        #expect(loaded.dailySums.sums == DailySums.compute(from: live))
        #expect(loaded.dailySums.sums.lastSequence == live.lastSequence)
        #expect(loaded.dailySums.sums.tables.map(\.zone) == ["Europe/Berlin", "UTC"])
        #expect(!loaded.dailySums.sums.tables(for: ObjectType.quantity(.stepCount).code, in: loaded).isEmpty)
        // Appended to, the ledger's state has moved past them.
        let reopened = try Ledger.open(fs)
        try await reopened.append(.setSourcePriority(.stepCount, [appA.bundleIdentifier]))
        let moved = await reopened.state
        try await reopened.close()
        #expect(moved.dailySums.sums.tables(for: ObjectType.quantity(.stepCount).code, in: moved).isEmpty)
        // Verify finds the snapshot's tables equal to a replay's.
        let report = try LedgerVerifier.verify(fs)
        #expect(report.isIntact, "\(report)")
    }

    /// S9: a section 33 whose checksum holds but whose table breaks a load check (a
    /// discrete type's code) makes the snapshot unreadable: skipped with a warning, the
    /// state rebuilt from the log, and statistics then from the engine.
    @Test func s9AForgedTableSkipsTheSnapshot() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try await Self.randomLedger(seed: 4, fs: fs)
        let name = try await ledger.snapshot()
        try await ledger.close()
        var bytes = fs.currentBytes(name)
        let section = try #require(SnapshotFormatRuleTests.sections(bytes).first { $0.id == 33 })
        let payload = section.at + 24
        // varint table count (1 byte: 1 table) · u16 type code
        #expect(bytes[payload] == 1)
        let code = ObjectType.quantity(.bodyMass).code
        bytes[payload + 1] = UInt8(code & 0xFF)
        bytes[payload + 2] = UInt8(code >> 8)
        let crc = CRC32C.checksum(Array(bytes[payload..<(payload + section.length)]))
        withUnsafeBytes(of: crc.littleEndian) { for (i, b) in $0.enumerated() { bytes[section.at + 16 + i] = b } }
        fs.setBytes(name, bytes)
        let loaded = try StateLoader.load(fs, reader: try LogReader(fs))
        #expect(loaded.snapshot == nil)
        #expect(loaded.warnings.contains { $0.contains("daily sums") && $0.contains("[S2]") }, "\(loaded.warnings)")
        #expect(loaded.state.dailySums.sums.lastSequence == nil)
    }

    /// A table that passes every load check but holds a wrong sum is answered from by
    /// readers — and named by `verify`, which compares it with a fresh replay's.
    @Test func verifyNamesATableThatDiffersFromAReplay() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try await Self.randomLedger(seed: 2, fs: fs)
        let name = try await ledger.snapshot()
        try await ledger.close()
        var bytes = fs.currentBytes(name)
        let section = try #require(SnapshotFormatRuleTests.sections(bytes).first { $0.id == 33 })
        let payload = section.at + 24
        var tables = try Array(bytes[payload..<(payload + section.length)]).withUnsafeBytes { raw in
            var r = ByteReader(raw)
            return try SnapshotFile.readDailySums(&r)
        }
        let day = try #require(tables[0].flags.firstIndex { $0 & DailySums.Table.present != 0 })
        tables[0].sums[day] = tables[0].sums[day].nextUp
        var w = ByteWriter(capacity: 256)
        SnapshotFile.writeDailySums(tables, &w)
        #expect(w.bytes.count == section.length)
        bytes.replaceSubrange(payload..<(payload + section.length), with: w.bytes)
        let crc = CRC32C.checksum(w.bytes)
        withUnsafeBytes(of: crc.littleEndian) { for (i, b) in $0.enumerated() { bytes[section.at + 16 + i] = b } }
        fs.setBytes(name, bytes)
        let report = try LedgerVerifier.verify(fs)
        #expect(!report.isIntact)
        #expect(report.snapshots.first?.difference == StateDifference(projection: "dailySums", key: "HKQuantityTypeIdentifierStepCount UTC"),
                "\(report.snapshots)")
    }

    @Test func damagedTableBytesAreRefusedNeverATrap() async throws {
        let ledger = try await Self.randomLedger(seed: 1)
        let state = await ledger.state
        try await ledger.close()
        let source = SnapshotSource(state: state, columns: state.samples.columns, timelineCodes: [])
        var w = ByteWriter(capacity: 256)
        #expect(SnapshotFile.dailySumsSection.encode(source, &w))
        let good = w.bytes
        let decoded = try good.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            defer { #expect(r.isAtEnd) }
            return try SnapshotFile.readDailySums(&r)
        }
        #expect(decoded == DailySums.compute(from: state).tables)
        var g = Seeded(state: 99)
        var refused = 0
        for round in 0..<3000 {
            var bytes = good
            if round % 3 == 0 {
                bytes = Array(bytes[0..<g.below(bytes.count)])
            } else {
                for _ in 0...g.below(3) { bytes[g.below(bytes.count)] ^= UInt8(1 + g.below(255)) }
            }
            let ok: Bool = bytes.withUnsafeBytes { raw in
                var r = ByteReader(raw)
                guard let tables = try? SnapshotFile.readDailySums(&r), (try? r.finish()) != nil else { return false }
                // What passes holds the invariants the query relies on.
                return tables.allSatisfy { t in
                    t.borders.count == t.sums.count + 1 && t.flags.count == t.borders.count
                        && zip(t.borders, t.borders.dropFirst()).allSatisfy { $0 <= $1 }
                }
            }
            if !ok { refused += 1 }
        }
        #expect(refused > 1000)
    }
}
