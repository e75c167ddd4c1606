import Testing
@testable import LedgerCore

/// A replay from nothing sizes its columns and UUID table once, from the first chunk's
/// samples per log byte (`Replayer.estimatedSamples`): a log of large saves (~53 bytes
/// a sample) no longer outgrows a table sized for single-sample saves (~86).
struct ReplayReservationTests {
    @Test func theFirstChunkSetsTheEstimate() {
        // 1,000-sample saves: a full first chunk of 65,536 samples at 53 bytes each.
        #expect(Replayer.estimatedSamples(logBytes: 53_000_000, chunkSamples: 65_536, chunkBytes: 65_536 * 53) == 1_000_000)
        // Single-sample saves: 4,096 events at 86 bytes.
        #expect(Replayer.estimatedSamples(logBytes: 86_000_000, chunkSamples: 4_096, chunkBytes: 4_096 * 86) == 1_000_000)
        // 256 KiB read with fewer samples (other events first): their density counts.
        #expect(Replayer.estimatedSamples(logBytes: 10_000_000, chunkSamples: 5_000, chunkBytes: 1 << 18) == 190_734)
    }

    @Test func aChunkTooSmallToTellLeavesTheSingleSampleEstimate() {
        #expect(Replayer.estimatedSamples(logBytes: 86_000, chunkSamples: 0, chunkBytes: 0) == 1_000)
        #expect(Replayer.estimatedSamples(logBytes: 8_600_000, chunkSamples: 100, chunkBytes: 5_300) == 100_000)
    }

    @Test func theEstimateStaysWithinOnePer86AndOnePer40Bytes() {
        // Sparser than a single-sample save (long metadata): never below one per 86 bytes.
        #expect(Replayer.estimatedSamples(logBytes: 8_600_000, chunkSamples: 4_096, chunkBytes: 4_096 * 200) == 100_000)
        // A first chunk denser than any sample record can be: at most one per 40 bytes.
        #expect(Replayer.estimatedSamples(logBytes: 4_000_000, chunkSamples: 65_536, chunkBytes: 65_536 * 20) == 100_000)
        // Sizes whose product overflows: the ceiling, no trap.
        #expect(Replayer.estimatedSamples(logBytes: UInt64.max / 2, chunkSamples: 65_536, chunkBytes: 1 << 20)
                == Int(UInt64.max / 2 / 40))
        #expect(Replayer.estimatedSamples(logBytes: 0, chunkSamples: 65_536, chunkBytes: 1 << 20) == 0)
    }
}
