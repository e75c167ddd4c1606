import Foundation
import Testing

extension Tag {
    /// The exhaustive sweeps, seeded soaks and tests at scale of the default run
    /// (every byte flipped, ten thousand power losses, hundreds of crash trials,
    /// mutated-event fuzzing, the shared real exports imported whole, 100k-row
    /// loops, paging under a concurrent writer): the slowest tests, each seconds to a
    /// minute alone. Every `swift test` runs them; CI runs them in its plain build and
    /// leaves them out of the sanitizer builds, whose smaller tests reach the same
    /// code. Their long versions live in `tools/` (`ledger-torture`, `healthledger-bench
    /// fuzz`).
    @Tag package static var sweep: Self
}

/// Leaving the sweeps out: `HEALTHLEDGER_SKIP_SWEEPS=1 swift test` reports each as
/// skipped, with the reason (Swift 6.3's `swift test` cannot skip by tag: `--skip
/// tag:sweep` is read as a name). A quick loop while working; CI's sanitizer runs.
package enum Sweeps {
    package static let leftOut = ProcessInfo.processInfo.environment["HEALTHLEDGER_SKIP_SWEEPS"] == "1"
    package static let reason: Comment = "HEALTHLEDGER_SKIP_SWEEPS=1 leaves the sweeps out (CI sets it for its sanitizer builds only)"
}
