import Foundation

/// Why an anchor was refused (CLI exit 5).
public enum ChangeFeedError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not an anchor this version wrote.
    case malformedAnchor(String)
    /// The anchor belongs to another ledger.
    case otherLedger(anchor: UUID, ledger: UUID)
    /// The ledger has fewer samples or deletions than the anchor covers: its history was rolled back.
    case rolledBack(anchorSlots: UInt64, ledgerSlots: UInt64, anchorDeletions: UInt64, ledgerDeletions: UInt64)
    /// The history the anchor covers is not the history of this ledger (rewritten, or cut and re-appended).
    case historyRewritten(slots: UInt64, deletions: UInt64)
    /// The log at the ledger's path belongs to another ledger than the one whose state
    /// the feed holds: the folder was replaced (say, by another ledger's copy) since it
    /// was opened. Nothing is read from it.
    case ledgerReplaced(path: String, found: UUID, expected: UUID)
    /// The anchor was issued before an erasure written as `erased` version 1 (issue 32),
    /// which does not say what the feed had given of the samples it took: they were
    /// never folded since, so the history the anchor covers is gone. Fetch again
    /// without an anchor. (An erasure since version 2 is answered instead: its erased
    /// samples as deletions, then everything current.)
    case erasedSince(erasure: UInt64)

    public var description: String {
        switch self {
        case .malformedAnchor(let t): "malformedAnchor: \(t.prefix(80)) is not an anchor"
        case .otherLedger(let a, let l): "anchorFromOtherLedger: the anchor belongs to ledger \(a), this is \(l)"
        case .rolledBack(let a, let l, let ad, let ld):
            "anchorRolledBack: the anchor covers \(a) samples and \(ad) deletions, the ledger holds \(l) and \(ld): its history was rolled back"
        case .historyRewritten(let s, let d):
            "anchorHistoryRewritten: the ledger's history up to the anchor (\(s) samples, \(d) deletions) is not the one the anchor was issued for"
        case .ledgerReplaced(let path, let found, let expected):
            "ledgerReplaced: the ledger at \(path) is another one (ledger \(found)); this feed was reading ledger \(expected)"
        case .erasedSince(let sequence):
            "anchorBeforeErasure: the erasure at event \(sequence) took samples this anchor counts (or the history was rolled back); fetch again without --anchor (the erased samples are gone)"
        }
    }
}
