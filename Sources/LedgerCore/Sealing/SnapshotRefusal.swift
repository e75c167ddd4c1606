/// Why no snapshot was written.
package enum SnapshotRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// A sealed ledger (issue 32): a snapshot would hold its values and dates in the
    /// clear, beyond the reach of erasure; its projections are rebuilt from the log.
    case sealedLedger(path: String)

    package var description: String {
        switch self {
        case .sealedLedger(let path):
            "snapshotRefused: the ledger at \(path) is encrypted, and snapshots of encrypted ledgers are not written yet (their projections are replayed from the log)"
        }
    }
}
