import Foundation
import Testing
@testable import LedgerCore

/// A priority sweep split at any border — its events before the border passed without
/// summing, then summed from it — gives every day from the border on the one sweep's
/// sum bit for bit; the daily sums summed in such runs on several threads are the one
/// sweep's (`DailySums.busyRuns`). The entries are built so that most borders are busy
/// (samples open across midnight), where summing only the entries that reach a border
/// would not give the same bits (`DailySumsTests.aQuietStartMakesTheRangedSweepTheWholeSweep`).
struct PrioritySweepResumeTests {
    /// 14 days with day 5 skipped (a border repeated), as a zone's days can be.
    static let borders = (0...14).map { (k: Int) -> Double in Double(k < 6 ? k : k - 1) * 86_400 }

    static func busyEntries(seed: Int) -> [StatisticsEntry] {
        var g = DailySumsTests.Seeded(state: UInt64(seed) &* 977 &+ 3)
        // Long samples (one in three up to 40 hours) keep most midnights busy.
        return DailySumsTests.entries(count: 80 + g.below(300), days: 13, long: (3, 40), short: 6, &g)
    }

    static func bits(_ sums: some Collection<Double>) -> [UInt64] { sums.map(\.bitPattern) }

    @Test func aSweepResumedAtAnyBorderIsTheOneSweep() {
        var busyBorders = 0
        for seed in 1...80 {
            let entries = Self.busyEntries(seed: seed)
            let plan = PrioritySweep.Plan(entries)
            var one = PrioritySweep(plan)
            let whole = one.sums(borders: Self.borders)
            #expect(whole == StatisticsEngine.mergedSums(entries, borders: Self.borders))
            for k in 1..<(Self.borders.count - 1) {
                let border = Self.borders[k]
                if entries.contains(where: { $0.start < border && $0.end > border }) { busyBorders += 1 }
                var head = PrioritySweep(plan)
                #expect(Self.bits(head.sums(borders: Array(Self.borders[...k]))) == Self.bits(whole[..<k]),
                        "seed \(seed): the days before border \(k)")
                var tail = PrioritySweep(plan)
                tail.advance(before: border)
                #expect(Self.bits(tail.sums(borders: Array(Self.borders[k...]))) == Self.bits(whole[k...]),
                        "seed \(seed): the days from border \(k)")
            }
        }
        // Most of the 80 × 13 inner borders had a sample open across them.
        #expect(busyBorders > 600)
    }

    /// Passing every event (no border ahead) leaves nothing to sum; a border before every
    /// entry passes nothing.
    @Test func advancingToTheEndsLeavesTheSweepConsistent() {
        let entries = Self.busyEntries(seed: 5)
        let plan = PrioritySweep.Plan(entries)
        var whole = PrioritySweep(plan)
        let sums = whole.sums(borders: Self.borders)
        var early = PrioritySweep(plan)
        early.advance(before: -1)
        #expect(Self.bits(early.sums(borders: Self.borders)) == Self.bits(sums))
        var late = PrioritySweep(plan)
        late.advance(before: .infinity)
        #expect(late.sums(borders: [20 * 86_400, 21 * 86_400]) == [0])
    }

    @Test func runsCutAtBusyBordersSumAsOneSweep() {
        for seed in 1...60 {
            let entries = Self.busyEntries(seed: seed)
            let borders = Self.borders
            let startingBefore = borders.map { border in entries.filter { $0.start < border }.count }
            let whole = StatisticsEngine.mergedSums(entries, borders: borders)
            for parts in 2...5 {
                // No border said quiet: every run but the first resumes a sweep.
                let sums = DailySums.busyRuns(entries, borders: borders, startingBefore: startingBefore, parts: parts)
                #expect(Self.bits(sums) == Self.bits(whole), "seed \(seed), \(parts) runs")
            }
            // Through the entry point, with no quiet border: the same.
            let noQuiet = [UInt8](repeating: 0, count: borders.count)
            let sums = DailySums.mergedSums(entries, borders: borders, quiet: noQuiet, startingBefore: startingBefore,
                                            cores: 3, perRun: 10)
            #expect(Self.bits(sums) == Self.bits(whole), "seed \(seed)")
        }
    }
}
