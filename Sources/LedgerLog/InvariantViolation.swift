/// A broken invariant, as a `checkInvariants()` reports it: which invariant, by name,
/// and what was found.
///
/// Each type that keeps invariants declares them as a `String` enum whose raw values
/// are the names reported here — `<Type>.<invariant>`, e.g.
/// `SampleIndex.tombstonesNameDeletedSlots` — with the invariant stated in each case's
/// documentation (`LogWriterInvariants.Invariant`, `SampleIndex.Invariant`,
/// `UUIDTable.Invariant`, `LedgerState.Invariant`). A check returns every violation it
/// finds; the debug builds' check after each fold traps with their names
/// (`InvariantViolation.trap`), so a broken invariant stops the test that broke it.
package struct InvariantViolation: Error, Hashable, Sendable, CustomStringConvertible {
    /// The invariant's name: `<Type>.<invariant>`.
    package let invariant: String
    /// What the check found, for people (a slot, a count, two values that disagree).
    package let found: String

    package init<Name: RawRepresentable<String>>(_ invariant: Name, _ found: String) {
        self.invariant = invariant.rawValue
        self.found = found
    }

    package var description: String { "\(invariant): \(found)" }

    /// Stops the process when `violations` is not empty, naming each broken invariant and
    /// where it was found (`context`, e.g. "after folding event 12").
    package static func trap(ifAny violations: [InvariantViolation], _ context: @autoclosure () -> String) {
        guard !violations.isEmpty else { return }
        preconditionFailure("broken invariants \(context()): " + violations.map(\.description).joined(separator: "; "))
    }
}

/// The first problem found of each invariant, while a check runs: each broken
/// invariant is reported once, in the order its enum declares them.
package struct InvariantFindings<Name: RawRepresentable<String> & CaseIterable & Hashable> {
    private var first: [Name: String] = [:]

    package init() {}

    /// Notes a problem of `invariant` unless one was noted already.
    package mutating func note(_ invariant: Name, _ found: @autoclosure () -> String) {
        if first[invariant] == nil { first[invariant] = found() }
    }

    /// Whether a problem of `invariant` was noted.
    package func broke(_ invariant: Name) -> Bool { first[invariant] != nil }

    package var violations: [InvariantViolation] {
        Name.allCases.compactMap { name in first[name].map { InvariantViolation(name, $0) } }
    }
}
