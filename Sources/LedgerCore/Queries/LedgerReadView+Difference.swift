import Foundation
import HealthModel
import LedgerLog

extension LedgerReadView {
    /// What changed between `earlier` — a view of the same ledger at an earlier point —
    /// and this view: the samples live here that were not live there (`added`), and
    /// those live there that are deleted here (`removed`), each in slot order (the
    /// order the log saved them), correlation members within their correlation, of
    /// `types` only when given (type codes; 0 for records kept raw). The owner's.
    ///
    /// Slots are never reused and a deletion is never undone (rules E3, E5): a sample
    /// added since `earlier` has a slot at or past `earlier`'s count, or one `earlier`
    /// had not yet seen committed (an import transaction open there), so the
    /// comparison reads the sample index, slot by slot, and decodes only what differs.
    package mutating func difference(from earlier: inout LedgerReadView, types: Set<UInt16>?) throws -> (added: [Sample], removed: [Sample]) {
        guard case .owner = viewer, case .owner = earlier.viewer else {
            throw RuleViolation.ownerOnly(action: "comparing the ledger at two points")
        }
        precondition(ledgerId == earlier.ledgerId, "both views are of one ledger")
        try state.checkIntact()
        try earlier.state.checkIntact()
        let before = earlier.state.samples, after = state.samples
        var addedSlots: [UInt32] = [], removedSlots: [UInt32] = []
        for slot in 0..<UInt32(after.count) {
            let now = after.entry(slot)
            guard !now.isMember, types.map({ $0.contains(now.typeCode) }) ?? true else { continue }
            let livedBefore = Int(slot) < before.count && !before.entry(slot).isDeleted
            if !now.isDeleted && !livedBefore { addedSlots.append(slot) }
            if now.isDeleted && livedBefore { removedSlots.append(slot) }
        }
        try state.checkIntact()
        try earlier.state.checkIntact()
        var afterFetcher = SampleFetcher(reader: try LogReader(fs))
        var beforeFetcher = SampleFetcher(reader: try LogReader(earlier.fs))
        let added = try addedSlots.map { try afterFetcher.sample($0, in: state) }
        let removed = try removedSlots.map { try beforeFetcher.sample($0, in: earlier.state) }
        return (added, removed)
    }

    /// Where this view stands in the log: the sequence of the last event folded.
    package var lastSequence: UInt64 { state.lastSequence }
}
