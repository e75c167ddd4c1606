import Testing
import TestSupport

/// Ledger-level crash trials (saves, deletes, snapshot writes, closes; power lost at
/// a file or folder sync, and sometimes again during recovery). The soak runs
/// ≥ 10,000: `swift run -c release ledger-torture crash-trials 10000`.
struct LedgerCrashTrialTests {
    @Test(.tags(.sweep), .disabled(if: Sweeps.leftOut, Sweeps.reason))
    func threeHundredSeededLedgerCrashTrials() async throws {
        let totals = await LedgerCrashTrials.run(1..<301)
        print(totals)
        #expect(totals.failures.isEmpty, "\(totals.failures.prefix(5))")
        // The trials really crash, also during recovery, and recovery cuts torn tails.
        #expect(totals.crashed > 100)
        #expect(totals.recoveryCrashed > 10)
        #expect(totals.tailsCut > 10)
    }
}
