import Foundation
import HealthModel

/// New, unchanged and removed, per type: what a merge did (or, dry, would do).
public struct MergeCount: Sendable, Equatable {
    /// Not in the ledger: appended.
    public var new = 0
    /// Already in the ledger (same content, so the same UUID): skipped.
    public var unchanged = 0
    /// Brought by an earlier import, absent from this export: removed.
    public var removed = 0

    public init(new: Int = 0, unchanged: Int = 0, removed: Int = 0) {
        self.new = new
        self.unchanged = unchanged
        self.removed = removed
    }
}

/// Merging an export into a ledger that may hold earlier exports of the same person.
///
/// A sample's UUID comes from its content (`RecordIdentity`), so a record the ledger
/// already holds is recognised by its UUID alone: it is skipped and counted, and its
/// slot is marked as seen. What is not in the ledger is appended. After the last
/// batch, every live top-level sample of an imported source that was in the ledger
/// before this import and was not seen is absent from this export: one
/// `absentFromExport` event removes them all (members go with their correlation),
/// with the activity-summary days the export no longer has.
package final class ImportMerge: @unchecked Sendable {
    // @unchecked: used by one task at a time, in turn by the importer and (inside
    // `MergeReader`'s reads) the ledger's actor, never concurrently — and never re-entrantly,
    // so the state touched per sample is `@exclusivity(unchecked)` (no dynamic
    // exclusivity check per access, a few per sample).

    /// Slots that existed when the import started.
    package let priorSlots: Int
    @exclusivity(unchecked) private var seen: [UInt64]
    /// Per type identifier (`HKQuantityTypeIdentifierStepCount`, raw identifiers as
    /// written, `ActivitySummary`).
    package var counts: [String: MergeCount] {
        var all = namedCounts
        for (code, count) in countsByCode.enumerated() where count != MergeCount() {
            let name = ObjectType(code: UInt16(code))?.identifier ?? "type \(code)"
            let earlier = all[name] ?? MergeCount()
            all[name] = MergeCount(new: earlier.new + count.new, unchanged: earlier.unchanged + count.unchanged,
                                   removed: earlier.removed + count.removed)
        }
        return all
    }
    private var namedCounts: [String: MergeCount] = [:]
    /// Samples skipped because the ledger holds their deletion (the owner deleted them,
    /// or an earlier merge removed them): never restored by a re-import.
    package private(set) var previouslyDeleted = 0
    /// Samples skipped because the ledger holds their sync identifier at the same or a
    /// newer version.
    package private(set) var syncVersionKept = 0
    /// Days of activity summaries the export holds.
    private var exportDays = Set<Int>()
    /// Records of the export the ledger held before it, live: a sample by its UUID
    /// (its content) or by its sync identity (at any version), an activity summary
    /// equal to the ledger's. None, while the ledger holds what earlier imports
    /// brought, means another person's export (the importer refuses it).
    package private(set) var inCommon = 0

    package init(priorSlots: Int) {
        self.priorSlots = priorSlots
        seen = [UInt64](repeating: 0, count: (priorSlots + 63) / 64)
    }

    package static func typeName(_ sample: Sample) -> String {
        switch sample {
        case .quantity(let q): q.type.identifier
        case .category(let c): c.type.identifier
        case .correlation(let c): c.type.identifier
        case .workout: ObjectType.workoutIdentifier
        case .unrecognized(let u): u.typeIdentifier
        }
    }

    /// Counts of the samples with a type code, by code (the common case: no string
    /// per sample); `namedCounts` has the rest (raw records, under the identifier they
    /// were written with; activity summaries). `counts` is both, by name.
    @exclusivity(unchecked) private var countsByCode: [MergeCount] = []

    /// Adds one to `field` of the count top-level sample `i` of `samples` goes to.
    /// Which count a sample goes to (not a key path: one is fetched from the runtime,
    /// and reference counted, on every use, and this runs per sample).
    private enum Tally { case new, unchanged }

    private func tally(_ samples: EncodedSamples, _ i: Int, _ field: Tally) {
        let code = Int(samples.typeCode(ofSample: i))
        if code != 0 {
            if countsByCode.isEmpty { countsByCode = [MergeCount](repeating: MergeCount(), count: 1 << 16) }
            switch field {
            case .new: countsByCode[code].new += 1
            case .unchanged: countsByCode[code].unchanged += 1
            }
        } else {
            switch field {
            case .new: namedCounts[samples.typeIdentifier(ofSample: i), default: MergeCount()].new += 1
            case .unchanged: namedCounts[samples.typeIdentifier(ofSample: i), default: MergeCount()].unchanged += 1
            }
        }
    }

    private func mark(_ slot: UInt32) {
        guard Int(slot) < priorSlots else { return }
        inCommon += 1
        seen[Int(slot) >> 6] |= 1 << (UInt64(slot) & 63)
    }

    private func wasSeen(_ slot: Int) -> Bool { seen[slot >> 6] & (1 << (UInt64(slot) & 63)) != 0 }

    /// The commands of a batch without what the ledger already holds. Runs on the
    /// ledger's actor (`Ledger.read`): the state does not change meanwhile.
    func filter(_ commands: [LedgerCommand], in state: LedgerState) throws(SampleIndex.UUIDUnreadable) -> [LedgerCommand] {
        // Into a ledger that held no sample, nothing can be there already (an export's
        // UUIDs are distinct, and its sync identities were sorted out as it was read):
        // count, keep the batch as it is, and look nothing up.
        if priorSlots == 0 { return try counted(commands, in: state) }
        return try lookingUp(commands, in: state)
    }

    /// `filter`, every sample looked up in the ledger.
    private func lookingUp(_ commands: [LedgerCommand], in state: LedgerState) throws(SampleIndex.UUIDUnreadable) -> [LedgerCommand] {
        var out: [LedgerCommand] = []
        out.reserveCapacity(commands.count)
        for command in commands {
            switch command {
            case .save(let bundle, let samples):
                let app = state.registry.ordinal(of: bundle)
                var kept: [Sample] = []
                kept.reserveCapacity(samples.count)
                for sample in samples {
                    let type = Self.typeName(sample)
                    if let slot = try state.samples.slot(of: sample.uuid) {
                        if !state.samples.isLive(slot) {
                            previouslyDeleted += 1
                        } else {
                            mark(slot)
                            namedCounts[type, default: MergeCount()].unchanged += 1
                        }
                        continue
                    }
                    if let app, let sync = (try? sample.common.metadata.syncIdentity()) ?? nil,
                       let stored = state.samples.liveSyncVersion(app: app, identifier: sync.identifier) {
                        inCommon += 1
                        if stored >= sync.version {
                            syncVersionKept += 1
                            continue
                        }
                    }
                    namedCounts[type, default: MergeCount()].new += 1
                    kept.append(sample)
                }
                if !kept.isEmpty { out.append(.save(bundleIdentifier: bundle, samples: kept)) }
            case .saveEncoded(let bundle, let samples):
                let app = state.registry.ordinal(of: bundle)
                var keep = [Bool](repeating: false, count: samples.count)
                var kept = 0
                for i in 0..<samples.count {
                    if let slot = try state.samples.slot(of: samples.uuid(ofSample: i)) {
                        if !state.samples.isLive(slot) {
                            previouslyDeleted += 1
                        } else {
                            mark(slot)
                            tally(samples, i, .unchanged)
                        }
                        continue
                    }
                    if let app, let sync = samples.syncIdentity(ofSample: i),
                       let stored = state.samples.liveSyncVersion(app: app, identifier: sync.identifier) {
                        inCommon += 1
                        if stored >= sync.version {
                            syncVersionKept += 1
                            continue
                        }
                    }
                    tally(samples, i, .new)
                    keep[i] = true
                    kept += 1
                }
                if kept == samples.count {
                    out.append(command)
                } else if kept > 0 {
                    out.append(.saveEncoded(bundleIdentifier: bundle, samples: samples.filtered { keep[$0] }))
                }
            case .recordActivitySummaries(let summaries):
                var kept: [ActivitySummary] = []
                for a in summaries {
                    let key = LedgerState.dayKey(a.day)
                    exportDays.insert(key)
                    if state.activitySummaries[key] == a {
                        inCommon += 1
                        namedCounts["ActivitySummary", default: MergeCount()].unchanged += 1
                    } else {
                        namedCounts["ActivitySummary", default: MergeCount()].new += 1
                        kept.append(a)
                    }
                }
                if !kept.isEmpty { out.append(.recordActivitySummaries(kept)) }
            default:
                out.append(command)
            }
        }
        return out
    }

    /// `filter` for a ledger that had no sample: every sample is new; an activity summary
    /// is new unless the ledger holds the same one.
    private func counted(_ commands: [LedgerCommand], in state: LedgerState) throws(SampleIndex.UUIDUnreadable) -> [LedgerCommand] {
        var out = commands
        for (i, command) in commands.enumerated() {
            switch command {
            case .save(_, let samples):
                for sample in samples { namedCounts[Self.typeName(sample), default: MergeCount()].new += 1 }
            case .saveEncoded(_, let samples):
                for i in 0..<samples.count { tally(samples, i, .new) }
            case .recordActivitySummaries:
                out[i] = try lookingUp([command], in: state).first ?? .recordActivitySummaries([])
            default:
                break
            }
        }
        return out.filter { if case .recordActivitySummaries(let a) = $0 { return !a.isEmpty } else { return true } }
    }

    /// Whether the ledger holds anything a merge could remove as absent: a live
    /// top-level sample of an imported source, or an activity summary.
    static func holdsLiveImports(in state: LedgerState) -> Bool {
        if !state.activitySummaries.isEmpty { return true }
        var imported = [Bool](repeating: false, count: state.registry.apps.count + 1)
        for (i, app) in state.registry.apps.enumerated() { imported[i + 1] = app.imported }
        guard imported.contains(true) else { return false }
        for slot in 0..<state.samples.count {
            let e = state.samples.entry(UInt32(slot))
            if !e.isDeleted, !e.isMember, Int(e.app) < imported.count, imported[Int(e.app)] { return true }
        }
        return false
    }

    /// What the export no longer holds: live top-level samples of imported sources,
    /// older than this import and not seen, and activity-summary days it lacks.
    /// Counts them per type.
    func absences(in state: LedgerState) throws(SampleIndex.UUIDUnreadable) -> (objects: [DeletedObject], days: [DateOfBirth]) {
        var objects: [DeletedObject] = []
        var imported = [Bool](repeating: false, count: state.registry.apps.count + 1)
        for (i, app) in state.registry.apps.enumerated() { imported[i + 1] = app.imported }
        for slot in 0..<priorSlots where !wasSeen(slot) {
            let e = state.samples.entry(UInt32(slot))
            guard !e.isDeleted, !e.isMember, Int(e.app) < imported.count, imported[Int(e.app)] else { continue }
            objects.append(DeletedObject(uuid: try state.samples.uuid(UInt32(slot)), syncIdentifier: e.syncIdentifier, syncVersion: e.syncVersion))
            let type = e.typeCode == 0 ? "(raw record)" : (ObjectType(code: e.typeCode)?.identifier ?? "type \(e.typeCode)")
            namedCounts[type, default: MergeCount()].removed += 1
        }
        var days: [DateOfBirth] = []
        for (key, summary) in state.activitySummaries.sorted(by: { $0.key < $1.key }) where !exportDays.contains(key) {
            days.append(summary.day)
            namedCounts["ActivitySummary", default: MergeCount()].removed += 1
        }
        return (objects, days)
    }
}
