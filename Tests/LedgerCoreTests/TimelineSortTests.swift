import Foundation
import Testing
@testable import LedgerCore
import TestSupport

/// The timeline sort: long timelines are sorted in two halves on two threads and
/// merged; the result must be exactly the order a plain sort gives.
struct TimelineSortTests {
    /// Slots with many equal starts and ends (ties fall to the slot number), listed
    /// in a shuffled order.
    static func slots(_ n: Int, seed: UInt64) -> ([SampleIndex.Slot], [UInt32]) {
        var random = SeededRandom(seed: seed)
        let slots = (0..<n).map { i -> SampleIndex.Slot in
            let start = Double(Int.random(in: 0..<(n / 8), using: &random))
            let end = start + Double(Int.random(in: 0..<3, using: &random))
            return SampleIndex.Slot(start: start, end: end, recordOffset: UInt64(i), typeCode: 1, state: 0, appField: 1)
        }
        return (slots, (0..<UInt32(n)).shuffled(using: &random))
    }

    @Test(.tags(.sweep), .disabled(if: Sweeps.leftOut, Sweeps.reason), arguments: [10, SampleIndex.parallelSortMinimum - 1, SampleIndex.parallelSortMinimum, 200_001])
    func aLongTimelineSortsAsAPlainSortDoes(count: Int) {
        let (slots, shuffled) = Self.slots(count, seed: UInt64(count))
        let expected = slots.withUnsafeBufferPointer { s in shuffled.sorted { SampleIndex.before($0, $1, s) } }
        var timeline = shuffled
        slots.withUnsafeBufferPointer { s in timeline.withUnsafeMutableBufferPointer { SampleIndex.sort($0, by: s) } }
        #expect(timeline == expected)
        // Sorted input, and input sorted backwards, come out the same too.
        var again = expected
        slots.withUnsafeBufferPointer { s in again.withUnsafeMutableBufferPointer { SampleIndex.sort($0, by: s) } }
        #expect(again == expected)
        var backwards = Array(expected.reversed())
        slots.withUnsafeBufferPointer { s in backwards.withUnsafeMutableBufferPointer { SampleIndex.sort($0, by: s) } }
        #expect(backwards == expected)
    }

    /// The sort compares copies of the slots' dates (`SortKey`): they must compare as
    /// the slots do, −0 equal to +0 (a tie, decided by end, then slot), at both sizes.
    @Test(arguments: [9, SampleIndex.parallelSortMinimum + 3])
    func signedZerosTieAsInTheSlots(count: Int) {
        let slots = (0..<count).map { i -> SampleIndex.Slot in
            let start: Double = i % 3 == 0 ? -0.0 : (i % 3 == 1 ? 0.0 : -1.5)
            return SampleIndex.Slot(start: start, end: i % 2 == 0 ? 0.0 : -0.0 + Double(i % 5),
                                    recordOffset: UInt64(i), typeCode: 1, state: 0, appField: 1)
        }
        let shuffled = (0..<UInt32(count)).reversed().map { $0 }
        let expected = slots.withUnsafeBufferPointer { s in shuffled.sorted { SampleIndex.before($0, $1, s) } }
        var timeline = shuffled
        slots.withUnsafeBufferPointer { s in timeline.withUnsafeMutableBufferPointer { SampleIndex.sort($0, by: s) } }
        #expect(timeline == expected)
        #expect(timeline.prefix(3).map { slots[Int($0)].start } == [-1.5, -1.5, -1.5])
    }
}
