import Foundation
import HealthModel

/// What a ledger holds, counted (the owner's `stats`): events by kind, live samples
/// by type and source, records kept raw by identifier and source, deletions, apps.
/// Counts of what the log holds, not values (for those: statistics).
package struct LedgerCounts: Sendable, Equatable {
    /// Events of each kind (kinds with none are left out).
    package var eventsByKind: [EventKind: UInt64]
    /// Events in all (the last sequence number).
    package var events: UInt64
    /// Live samples by type identifier ("unrecognized" for none known), then source.
    package var liveSamples: [String: [String: Int]]
    /// Records kept raw, by the identifier as written, then source.
    package var rawRecords: [String: [String: Int]]
    /// Samples saved, live or deleted.
    package var samplesSaved: Int
    /// Samples deleted.
    package var samplesDeleted: Int
    /// The registered apps' bundle identifiers, in registration order.
    package var apps: [String]
}

extension LedgerReadView {
    /// The owner's counts of what the ledger holds (`LedgerCounts`). Throws `ownerOnly`
    /// for an app (other apps' samples are not an app's to count) and S8 damage.
    package mutating func counts() throws -> LedgerCounts {
        guard case .owner = viewer else { throw RuleViolation.ownerOnly(action: "counting the ledger's contents") }
        var live: [String: [String: Int]] = [:]
        for code in state.samples.typeCodesPresent where code != 0 {
            let type = ObjectType(code: code)?.identifier ?? "unrecognized"
            for slot in state.samples.orderedSlotsIfNeeded(code) where !state.samples.entry(slot).isDeleted {
                live[type, default: [:]][state.registry.label(state.samples.entry(slot).app), default: 0] += 1
            }
        }
        var raw: [String: [String: Int]] = [:]
        try forEachRaw(matching: { _ in true }, SampleQuery(type: .workout)) { sample in
            guard case .unrecognized(let u) = sample else { return }
            raw[u.typeIdentifier, default: [:]][u.common.source?.bundleIdentifier ?? "?", default: 0] += 1
        }
        try state.checkIntact()  // nothing answered from a damaged mapped snapshot (S8)
        return LedgerCounts(eventsByKind: Dictionary(uniqueKeysWithValues: state.eventCounts.compactMap { code, n in EventKind(rawValue: code).map { ($0, n) } }),
                            events: state.lastSequence, liveSamples: live, rawRecords: raw,
                            samplesSaved: state.samples.count, samplesDeleted: state.samples.deletedCount,
                            apps: state.registry.apps.map(\.bundleIdentifier))
    }

    /// The unit the owner chose for `type` (`preferred-unit set`), nil when none was
    /// chosen (then the locale's formatting applies).
    public func ownerChosenUnit(for type: QuantityType) -> HealthUnit? {
        state.preferredUnits[type]
    }
}
