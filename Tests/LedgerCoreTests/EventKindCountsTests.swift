import Testing
@testable import LedgerCore

/// Events by kind, counted in an array for the kinds this release writes and in a
/// dictionary above them: the same counts, and equal however they were reached.
struct EventKindCountsTests {
    @Test func countsBelowAndAboveTheDirectKindsComeBackAsOneDictionary() {
        var counts = EventKindCounts()
        #expect(counts.dictionary.isEmpty)
        counts.add(EventKind.samplesSaved.rawValue)
        counts.add(EventKind.samplesSaved.rawValue)
        counts.add(63)
        counts.add(64)
        counts.add(UInt16.max, 5)
        #expect(counts.dictionary == [6: 2, 63: 1, 64: 1, 65535: 5])
    }

    @Test func equalCountsAreEqualWhicheverWayTheyCame() {
        var folded = EventKindCounts()
        for kind: UInt16 in [1, 6, 6, 200, 3] { folded.add(kind) }
        let restored = EventKindCounts([3: 1, 200: 1, 6: 2, 1: 1])
        #expect(folded == restored)
        // A zero read from a snapshot counts nothing, as no event does.
        #expect(EventKindCounts([6: 0, 300: 0]) == EventKindCounts())
        var other = restored
        other.add(300)
        #expect(other != restored)
    }

    @Test func aStateCountsTheEventsItFolds() throws {
        var state = LedgerState()
        state.apply(.characteristicCleared(.bloodType), sequence: 1, recordedAt: 10, offset: 64)
        state.apply(.characteristicCleared(.bloodType), sequence: 2, recordedAt: 11, offset: 100)
        #expect(state.eventCounts == [EventKind.characteristicCleared.rawValue: 2])
    }
}
