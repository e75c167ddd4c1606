import Foundation
import Testing
@testable import LedgerCore

/// The priority sweep (`StatisticsEngine.mergedSums`) ranks entries by their rank's
/// position among the distinct ranks present, whatever the ranks are: the largest rank
/// first in the input, and more distinct ranks than the sweep keeps in a short list.
struct PrioritySweepRankTests {
    static func entry(_ from: Double, _ to: Double, _ value: Double, rank: UInt32, order: UInt32) -> StatisticsEntry {
        StatisticsEntry(start: from, end: to, value: value, source: rank, rank: rank, order: order)
    }

    @Test func theWorstRankFirstInTheInputStaysTheWorst() {
        // Both cover [0, 10): only the better (lower) rank counts.
        let entries = [Self.entry(0, 10, 500, rank: UInt32.max, order: 0), Self.entry(0, 10, 7, rank: 3, order: 1)]
        #expect(StatisticsEngine.mergedSums(entries, borders: [0, 10]) == [7])
    }

    @Test func manyInterleavedRanksMergeAsFew() {
        // 40 sources, each with a sample over the same hour, interleaved with one better
        // source over the first half: the better one wins its half, the best of the
        // rest (rank 10) the other.
        var entries: [StatisticsEntry] = []
        for k in 0..<40 { entries.append(Self.entry(0, 3600, Double(1000 + k), rank: UInt32(10 + k), order: UInt32(k))) }
        entries.append(Self.entry(0, 1800, 5, rank: 2, order: 40))
        entries.sort { ($0.start, $0.order) < ($1.start, $1.order) }
        #expect(StatisticsEngine.mergedSums(entries, borders: [0, 1800, 3600]) == [5, 500])
    }
}
