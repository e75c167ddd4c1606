import Foundation
import Testing

extension Tag {
    /// The exhaustive sweeps and seeded soaks of the default run (every byte flipped,
    /// ten thousand power losses, hundreds of crash trials, mutated-event fuzzing):
    /// the slowest tests, each a few seconds to half a minute alone. They run in every
    /// `swift test` and in CI. Their long versions live in `tools/` (`ledger-torture`,
    /// `healthledger-bench fuzz`).
    @Tag static var sweep: Self
}

/// Leaving the sweeps out of a quick loop: `HEALTHLEDGER_SKIP_SWEEPS=1 swift test`
/// reports each as skipped, with the reason (Swift 6.3's `swift test` cannot skip by
/// tag: `--skip tag:sweep` is read as a name).
enum Sweeps {
    static let leftOut = ProcessInfo.processInfo.environment["HEALTHLEDGER_SKIP_SWEEPS"] == "1"
    static let reason: Comment = "HEALTHLEDGER_SKIP_SWEEPS=1 leaves the sweeps out (CI never sets it)"
}
