import Foundation
import LedgerLog

// The state's invariants as code, and the debug builds' check after folds
// (DESIGN.md, "Invariants as code").

extension LedgerState {
    /// The state's invariants beyond its sample index's and UUID table's, named as
    /// `checkInvariants()` reports them.
    package enum Invariant: String, CaseIterable, Sendable {
        /// The statistics columns have one entry per slot: `values.count ==
        /// userEntered.count == samples.count`.
        case statisticsPerSlot = "LedgerState.statisticsPerSlot"
        /// `grantOrder` names each app once.
        case grantOrderUnique = "LedgerState.grantOrderUnique"
        /// Imports are in the order they started, each once: `startedAt` strictly
        /// increases, import ids are distinct, and each `finishedAt` is after its
        /// `startedAt`; both are events folded so far (≤ `lastSequence`).
        case importsOrdered = "LedgerState.importsOrdered"
        /// At most one import transaction is open (rule E11: none starts inside another).
        case oneOpenTransaction = "LedgerState.oneOpenTransaction"
        /// Every event folded so far is counted once: applied ones by kind in
        /// `eventCounts`, passed-over ones (an aborted import's, rule E11) in
        /// `eventsNotApplied` — their sum is `lastSequence`.
        case eventsAccounted = "LedgerState.eventsAccounted"
        /// Each activity summary is filed under its own day (`dayKey(summary.day)`).
        case activitySummariesByDay = "LedgerState.activitySummariesByDay"
        /// `workoutActivityUUIDs` is exactly the UUIDs of `workoutActivities`' activities.
        case workoutActivityUUIDsDerived = "LedgerState.workoutActivityUUIDsDerived"
        /// Each characteristic is filed under its own type.
        case characteristicsByType = "LedgerState.characteristicsByType"
    }

    /// Every invariant the state breaks (empty: none): its own, the sample index's and
    /// the UUID table's. Reads every column; with `readingMappedColumns` false, the
    /// sample index of a state read from a mapped snapshot (`hasMappedColumns`) is
    /// left unchecked, so that checking reads (and so checks, rule S8) no block a reader
    /// has not read. Tests only: O(slots + buckets + type codes).
    package func checkInvariants(readingMappedColumns: Bool = true) -> [InvariantViolation] {
        checkInvariants(sampleIndex: readingMappedColumns || !samples.hasMappedColumns)
    }

    private func checkInvariants(sampleIndex: Bool) -> [InvariantViolation] {
        var found = InvariantFindings<Invariant>()
        if statistics.values.count != samples.count || statistics.userEntered.count != samples.count {
            found.note(.statisticsPerSlot, "\(statistics.values.count) values and \(statistics.userEntered.count) flags for "
                       + "\(samples.count) slots")
        }
        if Set(statistics.grantOrder).count != statistics.grantOrder.count {
            found.note(.grantOrderUnique, "grant order \(statistics.grantOrder)")
        }
        var ids = Set<UUID>()
        var openTransactions: [UUID] = []
        for (i, entry) in imports.enumerated() {
            let previous = i > 0 ? imports[i - 1].startedAt : 0
            if entry.startedAt <= previous || entry.startedAt > lastSequence || !ids.insert(entry.start.importId).inserted
                || entry.finishedAt.map({ $0 <= entry.startedAt || $0 > lastSequence }) ?? false {
                found.note(.importsOrdered, "import \(i) (\(entry.start.importId.uuidString)) started at \(entry.startedAt), "
                           + "finished at \(entry.finishedAt.map { "\($0)" } ?? "—"), after one started at \(previous), "
                           + "with \(lastSequence) events")
            }
            if entry.start.isTransaction && entry.finishedAt == nil { openTransactions.append(entry.start.importId) }
        }
        if openTransactions.count > 1 {
            found.note(.oneOpenTransaction, "\(openTransactions.count) open transactions: "
                       + openTransactions.map(\.uuidString).joined(separator: ", "))
        }
        var applied: UInt64 = 0
        for count in eventCounts.values { applied &+= count }
        if applied &+ eventsNotApplied != lastSequence {
            found.note(.eventsAccounted, "\(applied) events applied and \(eventsNotApplied) not, of \(lastSequence)")
        }
        for (key, summary) in activitySummaries where Self.dayKey(summary.day) != key {
            found.note(.activitySummariesByDay, "the summary of \(summary.day) is filed under \(key)")
        }
        var activities = 0
        for list in workoutActivities.values {
            activities += list.count
            for a in list where !workoutActivityUUIDs.contains(a.uuid) {
                found.note(.workoutActivityUUIDsDerived, "activity \(a.uuid) is not among the activity UUIDs")
            }
        }
        // Activities' UUIDs are distinct (rule E10), so the set has one per activity.
        if workoutActivityUUIDs.count != activities {
            found.note(.workoutActivityUUIDsDerived, "\(workoutActivityUUIDs.count) UUIDs for \(activities) activities")
        }
        for (type, value) in characteristics where value.type != type {
            found.note(.characteristicsByType, "a \(value.type) filed under \(type)")
        }
        return found.violations + (sampleIndex ? samples.checkInvariants() : [])
    }

    #if DEBUG
    /// Debug builds, after each fold (`apply`, `skip`): the invariants, when the
    /// schedule says (`InvariantChecks`); a broken one stops the process naming it.
    /// `slotsBefore`, `deletionsBefore`: the index's counts before the fold (a fold
    /// that changes neither leaves the index as it was).
    func checkInvariantsAfterFold(sequence: UInt64, slotsBefore: Int, deletionsBefore: Int) {
        guard InvariantChecks.afterFolds else { return }
        let indexChanged = samples.count != slotsBefore || samples.deletedCount != deletionsBefore
        let checks = InvariantChecks.due(sequence: sequence, slotsBefore: slotsBefore, slotsAfter: samples.count,
                                         indexChanged: indexChanged)
        guard checks != .none else { return }
        InvariantViolation.trap(ifAny: checkInvariants(sampleIndex: checks == .all && !samples.hasMappedColumns),
                                "after folding event \(sequence)")
    }
    #endif
}

/// When debug builds check the invariants after a fold: after every fold while the
/// state is small, then at each power of two of the sequence number and each time
/// the slot count passes one — so the checks cost O(1) per event amortized, a few
/// percent of a test run, and a test that folds a million samples checks ~20 times.
/// Release builds never check (`afterFolds` is false, and the hook is not compiled).
package enum InvariantChecks {
    #if DEBUG
    /// On in debug builds — every `swift test`, and the debug `healthledger` and
    /// `ledger-torture` the tests run — unless `HEALTHLEDGER_INVARIANT_CHECKS=0`.
    package static let afterFolds = ProcessInfo.processInfo.environment["HEALTHLEDGER_INVARIANT_CHECKS"] != "0"
    #else
    package static let afterFolds = false
    #endif

    /// A state of at most this many slots and events is checked after every fold.
    static let smallSlots = 256
    static let smallEvents: UInt64 = 4096

    /// What a check after a fold covers.
    enum Checks {
        case none
        /// The state's own invariants (the fold left the sample index as it was).
        case state
        /// Every invariant.
        case all
    }

    /// What is checked after the fold of event `sequence`, which took the slot count
    /// from `slotsBefore` to `slotsAfter` and changed the sample index or not: while the
    /// state is small, everything the fold could break; then everything at each power of
    /// two of the sequence number and each time the slot count passes one.
    static func due(sequence: UInt64, slotsBefore: Int, slotsAfter: Int, indexChanged: Bool) -> Checks {
        if slotsAfter <= smallSlots && sequence <= smallEvents { return indexChanged ? .all : .state }
        if sequence & (sequence &- 1) == 0
            || slotsBefore.bitWidth - slotsBefore.leadingZeroBitCount != slotsAfter.bitWidth - slotsAfter.leadingZeroBitCount {
            return .all
        }
        return .none
    }

    /// Whether the writer is checked after enqueueing a batch of these events: while
    /// the log is small, then when the batch holds a power of two.
    static func due(batch sequences: ClosedRange<UInt64>) -> Bool {
        let before = sequences.lowerBound &- 1, last = sequences.upperBound
        return last <= smallEvents || before.leadingZeroBitCount != last.leadingZeroBitCount
    }
}
