import Foundation
import HealthModel
@testable import LedgerCore
import LedgerLog
import TestSupport
import Testing

/// When close writes a snapshot: replay work counts samples, not only events.
struct SnapshotPolicyTests {
    /// Three saves of 400 samples each are 3 events but 1,203 units of replay work (with
    /// the grant's events): a threshold of 1,000 must write a snapshot at close, and the
    /// reopen must start from it. Counting events alone (the old rule) wrote none.
    @Test func largeSavesCountTheirSamplesTowardsTheNextSnapshot() async throws {
        let fs = SimulatedFileSystem()
        let clock = SteppingClock(start: 1_772_366_400_000_000_000, step: 1_000_000_000)
        let options = LedgerOptions(log: LogWriterOptions(clock: clock.function, allocationChunk: smallChunk), snapshotEvery: 1_000)
        let ledger = try Ledger.create(fs, ledgerId: fixedLedgerId, options: options)
        try await ledger.grant(appA, share: [.quantity(.stepCount)])
        let base = date("2026-01-01T00:00:00Z")
        for batch in 0..<3 {
            var samples: [Sample] = []
            for i in 0..<400 {
                let at = base.addingTimeInterval(Double(batch * 400 + 399 - i) * 60)   // out of order
                samples.append(.quantity(try QuantitySample(type: .stepCount, quantity: try Quantity(10, unit: "count"),
                                                            start: at, end: at)))
            }
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: samples))
        }
        #expect(await ledger.state.lastSequence < 1_000)   // events alone would not reach the threshold
        try await ledger.close()
        #expect(SnapshotFile.list(fs).count == 1)
        let reopened = try Ledger.open(fs, options: options)
        #expect(reopened.openReport.snapshot != nil)
        #expect(reopened.openReport.replayed == 0)
        #expect(await reopened.state.samples.count == 1_200)
        // Stored sorted, so no open pays for sorting (the timeline arrived out of order).
        let code = ObjectType.quantity(.stepCount).code
        let timeline = await reopened.state.samples.columns.timelines[code]
        #expect(timeline?.sorted == true)
        #expect(timeline?.slots.count == 1_200)
        try await reopened.close()
    }
}
