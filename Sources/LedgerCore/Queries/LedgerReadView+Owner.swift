import Foundation
import HealthModel
import LedgerLog

/// Where a source's rank in a priority order comes from.
package enum PriorityBasis: String, Sendable {
    /// The owner listed the source (`setSourcePriority`).
    case owner
    /// The default order (Apple Watch, then iPhone, then other sources by grant order).
    case `default`
}

extension LedgerReadView {
    /// The owner's view of the source order in force for `type`: the sources the
    /// owner listed and those that saved samples of the type, best first, each with
    /// where its rank comes from. Throws `ownerOnly` for an app (another app's
    /// presence is not an app's to know) and S8 damage of a mapped snapshot.
    package func sourcePriority(of type: QuantityType) throws -> [(source: String, basis: PriorityBasis)] {
        guard case .owner = viewer else { throw RuleViolation.ownerOnly(action: "reading the source priority") }
        let code = ObjectType.quantity(type).code
        let listed = Set(state.statistics.priority(code))
        var present = listed
        for slot in state.samples.orderedSlotsIfNeeded(code) {
            present.insert(state.registry.label(state.samples.entry(slot).app))
        }
        try state.checkIntact()  // nothing answered from a damaged mapped snapshot (S8)
        return SourcePriority(type: type, state: state).ordered(state).filter(present.contains)
            .map { ($0, listed.contains($0) ? .owner : .default) }
    }

    /// The owner's view of where the sample `uuid` is stored: its record's offset in
    /// the log (what an inclusion proof starts from) and the sample; nil when no live
    /// sample has that UUID. Throws `ownerOnly` for an app, and S8 damage rather than
    /// "not found" when the sample index comes from a damaged mapped snapshot.
    public func storedSample(_ uuid: UUID) throws -> (recordOffset: UInt64, sample: Sample)? {
        guard case .owner = viewer else { throw RuleViolation.ownerOnly(action: "locating a sample's record") }
        let found = try state.lookUp(uuid)
        guard let slot = found else { return nil }
        var fetcher = SampleFetcher(reader: try LogReader(fs))
        return (state.samples.entry(slot).recordOffset, try fetcher.sample(slot, in: state))
    }
}
