import Foundation
import HealthModel
import LedgerLog

/// Projection: each cumulative quantity type's merged daily sums, as the statistics
/// engine computes them, for the days of UTC and of the owner's time zone — so that a
/// daily `--sum` collection reads one small table instead of every sample.
///
/// Derived from the rest of the state and only from it: `compute(from:)` runs the
/// engine's priority sweep (`StatisticsEngine.mergedSums`) over the type's live
/// samples — the very entries, ranks and borders an unfiltered daily query builds —
/// so a table's sums are that query's sums, bit for bit. It is made when a snapshot
/// is written (section 33, events/FORMAT.md S9) and read back with it; a fold never
/// updates it: it stands for the state at `lastSequence` only, and a state folded
/// past it (a tail replayed after the snapshot, an append) simply does not use it
/// (`tables(for:in:)`). `verify` compares a snapshot's tables with `compute` over a
/// fresh replay.
///
/// Not part of the state's meaning (its digest, `==`): a cache of a function of it.
package struct DailySums: Sendable, Equatable {
    /// One type's days in one zone: buckets `[borders[k], borders[k+1])`, the days
    /// from the one holding the type's earliest start to the one holding its latest
    /// end (as an unfiltered collection spans them).
    package struct Table: Sendable, Equatable {
        /// The quantity type's code.
        package var typeCode: UInt16
        /// The zone's identifier (the days are its calendar days from a midnight).
        package var zone: String
        /// The earliest start and latest end of the type's live samples.
        package var minStart: Double
        package var maxEnd: Double
        /// `sums.count + 1` instants, ascending (equal around a day the zone skipped).
        package var borders: [Double]
        /// The merged sum of each day (`StatisticsEngine.mergedSums`).
        package var sums: [Double]
        /// Per border k: bit 0 `present` (day k holds a sample: one overlapping it for
        /// a positive time, or an instant in it — the engine's non-empty bucket; never
        /// set on the last border), bit 1 `quiet` (no sample starts before border k
        /// and ends after it: a sweep begun at the border is in the state a sweep from
        /// the first sample is in).
        package var flags: [UInt8]

        package static let present: UInt8 = 1, quiet: UInt8 = 2

        /// Equal bit for bit (NaN never equals itself as a number).
        package static func == (a: Table, b: Table) -> Bool {
            a.typeCode == b.typeCode && a.zone == b.zone && a.minStart.bitPattern == b.minStart.bitPattern
                && a.maxEnd.bitPattern == b.maxEnd.bitPattern && a.flags == b.flags
                && a.borders.map(\.bitPattern) == b.borders.map(\.bitPattern) && a.sums.map(\.bitPattern) == b.sums.map(\.bitPattern)
        }
    }

    /// The state's `lastSequence` the tables stand for (nil: no tables).
    package private(set) var lastSequence: UInt64?
    /// By type code, then zone identifier ascending.
    package private(set) var tables: [Table] = []

    package init() {}

    package init(lastSequence: UInt64, tables: [Table]) {
        self.lastSequence = lastSequence
        self.tables = tables
    }

    /// The tables of a type, when they stand for `state` (nothing folded since).
    package func tables(for typeCode: UInt16, in state: LedgerState) -> [Table] {
        guard lastSequence == state.lastSequence else { return [] }
        return tables.filter { $0.typeCode == typeCode }
    }

    /// The zones tables are made for: UTC, and the owner's zone when set and known.
    static func zones(_ state: LedgerState) -> [String] {
        var zones = ["UTC"]
        if let owner = state.ownerTimeZone, owner != "UTC", TimeZone(identifier: owner) != nil { zones.append(owner) }
        return zones.sorted()
    }

    /// The tables of `state`: every cumulative quantity type with a live sample, in
    /// every zone of `zones(_:)` (a span beyond the bucket limit is left out).
    package static func compute(from state: LedgerState) -> DailySums {
        var state = state
        var tables: [Table] = []
        for code in state.samples.typeCodesPresent {
            guard case .quantity(let type)? = ObjectType(code: code), type.aggregationStyle == .cumulative,
                  var entries = try? StatisticsQuery.entries(type: type, predicate: nil, filter: nil, visibility: .everything,
                                                              fs: nil, in: &state),
                  !entries.isEmpty else { continue }
            StatisticsEngine.sortByStart(&entries)
            let minStart = entries.map(\.start).min()!, maxEnd = entries.map(\.end).max()!
            // One plan for every zone (ranks and event order do not depend on the days);
            // the zones' tables at once, each on its share of the cores.
            let zones = zones(state), sorted = entries
            let plan = PrioritySweep.Plan(sorted)
            let cores = max(1, ProcessInfo.processInfo.activeProcessorCount / zones.count)
            let made = Locked<[Table?]>(Array(repeating: nil, count: zones.count))
            DispatchQueue.concurrentPerform(iterations: zones.count) { z in
                let t = table(code: code, zone: zones[z], sorted, plan: plan, minStart: minStart, maxEnd: maxEnd, cores: cores)
                made.withLock { $0[z] = t }
            }
            tables += made.withLock { $0 }.compactMap { $0 }
        }
        return DailySums(lastSequence: state.lastSequence, tables: tables)
    }

    /// Midnight of 2000-01-01 in `zone`: any midnight gives the same days.
    static func anchor(_ zone: TimeZone) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.date(from: DateComponents(year: 2000, month: 1, day: 1))!
    }

    static func table(code: UInt16, zone identifier: String, _ entries: [StatisticsEntry], plan: PrioritySweep.Plan,
                      minStart: Double, maxEnd: Double, cores: Int) -> Table? {
        guard let zone = TimeZone(identifier: identifier), let day = try? StatisticsInterval(.day) else { return nil }
        let buckets = StatisticsBuckets(anchor: anchor(zone), interval: day, timeZone: zone)
        let first = buckets.index(containing: minStart), last = buckets.index(containing: maxEnd)
        guard let borders = try? buckets.borders(from: first, through: last) else { return nil }
        var flags = [UInt8](repeating: 0, count: borders.count)
        // Quiet borders: the latest end of the samples starting before each border.
        var startingBefore = [Int](repeating: 0, count: borders.count)
        var i = 0
        var latestEnd = -Double.infinity
        for (k, border) in borders.enumerated() {
            while i < entries.count && entries[i].start < border {
                latestEnd = max(latestEnd, entries[i].end)
                i += 1
            }
            startingBefore[k] = i
            if latestEnd <= border { flags[k] |= Table.quiet }
        }
        let sums = mergedSums(entries, plan: plan, borders: borders, quiet: flags, startingBefore: startingBefore,
                              cores: cores)
        for b in StatisticsEngine.presentBuckets(entries, borders: borders) { flags[b] |= Table.present }
        return Table(typeCode: code, zone: identifier, minStart: minStart, maxEnd: maxEnd, borders: borders, sums: sums,
                     flags: flags)
    }

    /// Entries from which the days are summed in runs on two cores or more.
    static let parallelMinimum = 1 << 16

    /// `StatisticsEngine.mergedSums(entries, borders: borders)`, bit for bit, with the
    /// days cut into runs summed on their own threads (one per core, each about as
    /// much work): at quiet borders where that balances the runs as well
    /// (`quietCuts`), else at any border (`busyRuns`). `entries` are in start order;
    /// `plan`, their sweep's plan when the caller has it; `startingBefore[k]` is how
    /// many start before border k; `cores`, how many runs at most; `perRun`, the
    /// fewest entries per run worth a thread.
    static func mergedSums(_ entries: [StatisticsEntry], plan: PrioritySweep.Plan? = nil, borders: [Double],
                           quiet flags: [UInt8], startingBefore: [Int],
                           cores: Int = ProcessInfo.processInfo.activeProcessorCount,
                           perRun: Int = parallelMinimum / 2) -> [Double] {
        precondition(perRun > 0, "a run holds entries")
        let n = borders.count - 1
        let parts = min(cores, entries.count / perRun)
        guard parts > 1, n > 1 else {
            var sweep = PrioritySweep(plan ?? PrioritySweep.Plan(entries))
            return sweep.sums(borders: borders)
        }
        if let cuts = quietCuts(entries, borders: borders, quiet: flags, startingBefore: startingBefore, parts: parts),
           largestRun(cuts, startingBefore: startingBefore, count: entries.count, n: n)
               <= Double(entries.count) / busyWeights(parts).reduce(0, +) {
            return inRuns(cuts, n: n) { from, to in
                let run = entryRange(from: from, to: to, n: n, count: entries.count, startingBefore: startingBefore)
                return StatisticsEngine.mergedSums(Array(entries[run]), borders: Array(borders[from...to]))
            }
        }
        return busyRuns(entries, plan: plan, borders: borders, startingBefore: startingBefore, parts: parts)
    }

    /// Cuts at quiet borders, nil when none is inside. At a quiet border no sample
    /// starting before it ends after it (`Table.quiet`): the sweep there has nothing
    /// open, every earlier sample credits only days before it and every later one only
    /// days after, and no day's sum takes terms from both sides — each day adds the
    /// same terms in the same order as one sweep over all, and a run sums only its own
    /// entries. (Ranks compare as before: a run's dense ranks keep their order.)
    static func quietCuts(_ entries: [StatisticsEntry], borders: [Double], quiet flags: [UInt8], startingBefore: [Int],
                          parts: Int) -> [Int]? {
        let n = borders.count - 1
        // For each share of the entries, the quiet border (inside, not an end) whose
        // count of earlier starts is nearest it; none found, fewer runs.
        var cuts = [0]
        for q in 1..<parts {
            if let k = nearestBorder(to: entries.count * q / parts, after: cuts.last!, n: n, startingBefore: startingBefore,
                                     where: { flags[$0] & Table.quiet != 0 }) {
                cuts.append(k)
            }
        }
        cuts.append(n)
        return cuts.count > 2 ? cuts : nil
    }

    /// The most entries any run of `cuts` starts.
    static func largestRun(_ cuts: [Int], startingBefore: [Int], count: Int, n: Int) -> Double {
        var largest = 0
        for r in 0..<(cuts.count - 1) {
            largest = max(largest, entryRange(from: cuts[r], to: cuts[r + 1], n: n, count: count,
                                              startingBefore: startingBefore).count)
        }
        return Double(largest)
    }

    /// The entries (of `count`, in start order) that start in the days `from..<to` of `n`:
    /// `startingBefore[k]` start before border k; the first and last runs take any
    /// before the first border and after the last.
    static func entryRange(from: Int, to: Int, n: Int, count: Int, startingBefore: [Int]) -> Range<Int> {
        (from == 0 ? 0 : startingBefore[from])..<(to == n ? count : startingBefore[to])
    }

    /// The inner border after `after` (not the last, `n`) that `admits` allows and whose
    /// count of earlier starts is nearest `target` (the first such when tied); nil when none.
    static func nearestBorder(to target: Int, after: Int, n: Int, startingBefore: [Int],
                              where admits: (Int) -> Bool = { _ in true }) -> Int? {
        var best: Int?
        var k = max(after + 1, 1)
        while k < n {
            if admits(k), best == nil || abs(startingBefore[k] - target) < abs(startingBefore[best!] - target) { best = k }
            k += 1
        }
        return best
    }

    /// How long passing an entry's start and end without summing (`PrioritySweep.advance`)
    /// takes, as a share of sweeping it: it weighs the runs' shares. About a third: with
    /// it, the two runs of `read_bench`'s million steps (no quiet border) end within
    /// 0.03 s of each other in a 0.2 s sweep (`perf` timeline of `verify`).
    static let advanceShare = 0.35

    /// The days cut at any borders: each run but the first passes the sweep's events
    /// before its first border without summing (`PrioritySweep.advance(before:)`), which
    /// leaves its open lists as the one sweep has them there, then sums its days. The
    /// runs' shares of the entries shrink by `advanceShare` from one to the next, so
    /// that each is about as much work.
    static func busyRuns(_ entries: [StatisticsEntry], plan: PrioritySweep.Plan? = nil, borders: [Double],
                         startingBefore: [Int], parts: Int) -> [Double] {
        let n = borders.count - 1
        let weights = busyWeights(parts)
        let total = weights.reduce(0, +)
        var cuts = [0]
        var share = 0.0
        for r in 0..<(parts - 1) {
            share += weights[r]
            let target = Int(Double(entries.count) * share / total)
            if let k = nearestBorder(to: target, after: cuts.last!, n: n, startingBefore: startingBefore) { cuts.append(k) }
        }
        cuts.append(n)
        let plan = plan ?? PrioritySweep.Plan(entries)
        return inRuns(cuts, n: n) { from, to in
            var sweep = PrioritySweep(plan)
            if from > 0 { sweep.advance(before: borders[from]) }
            return sweep.sums(borders: Array(borders[from...to]))
        }
    }

    /// Each busy run's share of the entries, relative to the first's: each run after
    /// the first passes the entries before it too, at `advanceShare` of the cost.
    static func busyWeights(_ parts: Int) -> [Double] {
        var weights: [Double] = []
        var w = 1.0
        for _ in 0..<parts {
            weights.append(w)
            w *= 1 - advanceShare
        }
        return weights
    }

    /// The sums of the runs of days `cuts[r]..<cuts[r+1]`, each from `run` on a thread
    /// of its own, joined in order.
    private static func inRuns(_ cuts: [Int], n: Int, _ run: @Sendable @escaping (Int, Int) -> [Double]) -> [Double] {
        let runs = cuts.count - 1
        let results = Locked<[[Double]]>(Array(repeating: [], count: runs))
        DispatchQueue.concurrentPerform(iterations: runs) { r in
            let sums = run(cuts[r], cuts[r + 1])
            results.withLock { $0[r] = sums }
        }
        let sums = results.withLock { $0 }.flatMap { $0 }
        assert(sums.count == n, "the runs cover every day once")
        return sums
    }

    /// The first table that differs between `a` and `b` (type code and zone), nil when equal.
    package static func difference(_ a: DailySums, _ b: DailySums) -> String? {
        for i in 0..<max(a.tables.count, b.tables.count) {
            let x = i < a.tables.count ? a.tables[i] : nil, y = i < b.tables.count ? b.tables[i] : nil
            if x != y {
                let t = (x ?? y)!
                return "\(ObjectType(code: t.typeCode)?.identifier ?? String(t.typeCode)) \(t.zone)"
            }
        }
        return nil
    }
}

/// A state's daily sums as a field of `LedgerState` that takes no part in its
/// equality: they are derived, and compared on their own where it matters (`verify`).
package struct DailySumsCache: Sendable, Equatable {
    package var sums = DailySums()

    package init() {}

    /// Any two compare equal (a state's `==` is over its projections).
    package static func == (a: DailySumsCache, b: DailySumsCache) -> Bool { true }
}
