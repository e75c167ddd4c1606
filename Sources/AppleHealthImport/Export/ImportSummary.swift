import Foundation
import LedgerCore
import LedgerReporting

/// What an import found and did, for people (`lines`) and machines (`json`).
public struct ImportSummary: Sendable {
    public var importId = UUID()
    public var exportDate: String?
    public var locale: String?
    public var exportVersion: String?
    public var xmlName = ""
    public var xmlBytes: UInt64 = 0
    public var contentSHA256: [UInt8] = []
    /// Top-level Records by `type` as written.
    public var recordsByType: [String: Int] = [:]
    public var records = 0
    public var recordsKeptRaw = 0
    /// Why records were kept raw, with counts.
    public var rawReasons: [String: Int] = [:]
    public var exactDuplicateRecords = 0
    public var logicalDuplicateRecords = 0
    public var metadataEntries = 0
    public var beatLists = 0
    public var beats = 0
    public var correlationsByType: [String: Int] = [:]
    public var correlationMembers = 0
    /// Members that were not quantity samples of an admitted type (kept top-level).
    public var correlationMembersUnlinked = 0
    /// Top-level copies of correlation members not stored again (they are the members).
    public var recordsStoredAsMembers = 0
    public var workouts = 0
    public var workoutsKeptRaw = 0
    public var workoutEvents = 0
    public var workoutStatistics = 0
    public var workoutRoutes = 0
    public var routePoints = 0
    public var missingRouteFiles: [String] = []
    public var activitySummaries = 0
    public var duplicateActivitySummaryDays = 0
    public var sources: [String] = []
    public var characteristicsSet = 0
    /// Samples a sync identity already in the ledger (or earlier in the export) kept out.
    public var notSavedSyncVersion = 0
    /// Top-level elements kept as written (ClinicalRecord, Audiogram, …: no model of
    /// their own), by name.
    public var keptElements: [String: Int] = [:]
    /// Elements with no model inside imported ones (a Workout's WorkoutActivity, …),
    /// kept as written under a root naming the sample they were in, by name.
    public var keptChildren: [String: Int] = [:]
    /// Attributes this version does not know, by `Element@attribute`: counted, not
    /// kept (none of the real exports has any).
    public var unknownAttributes: [String: Int] = [:]
    /// Samples appended (top-level: records, correlations, workouts).
    public var samplesSaved = 0
    public var firstSequence: UInt64 = 0
    public var lastSequence: UInt64 = 0
    /// The same export (same XML content) was imported before.
    public var again = false
    /// Nothing was written: the counts are what the import would do.
    public var dryRun = false
    /// New, unchanged and removed per type (`ActivitySummary` for the days).
    public var merge: [String: MergeCount] = [:]
    /// Samples the ledger holds as deleted (by the owner or an earlier merge): skipped,
    /// not restored.
    public var previouslyDeleted = 0
    /// Samples skipped as already present.
    public var unchanged: Int { merge.values.reduce(0) { $0 + $1.unchanged } }
    /// Samples and activity summaries removed as absent from this export.
    public var removed: Int { merge.values.reduce(0) { $0 + $1.removed } }
    /// Wall time of the import (its one pass).
    public var seconds = 0.0

    /// The counts `importFinished` records, in a fixed order.
    package var counts: [ImportCount] {
        [ImportCount("records", UInt64(records)), ImportCount("recordsKeptRaw", UInt64(recordsKeptRaw)),
         ImportCount("exactDuplicateRecords", UInt64(exactDuplicateRecords)),
         ImportCount("logicalDuplicateRecords", UInt64(logicalDuplicateRecords)),
         ImportCount("correlations", UInt64(correlationsByType.values.reduce(0, +))),
         ImportCount("correlationMembers", UInt64(correlationMembers)),
         ImportCount("recordsStoredAsMembers", UInt64(recordsStoredAsMembers)),
         ImportCount("workouts", UInt64(workouts)), ImportCount("workoutsKeptRaw", UInt64(workoutsKeptRaw)),
         ImportCount("workoutEvents", UInt64(workoutEvents)), ImportCount("workoutRoutes", UInt64(workoutRoutes)),
         ImportCount("routePoints", UInt64(routePoints)), ImportCount("activitySummaries", UInt64(activitySummaries)),
         ImportCount("beats", UInt64(beats)), ImportCount("sources", UInt64(sources.count)),
         ImportCount("samplesSaved", UInt64(samplesSaved)), ImportCount("notSavedSyncVersion", UInt64(notSavedSyncVersion)),
         ImportCount("keptElements", UInt64(keptElements.values.reduce(0, +))),
         ImportCount("keptChildren", UInt64(keptChildren.values.reduce(0, +))),
         ImportCount("unchanged", UInt64(unchanged)), ImportCount("removed", UInt64(removed)),
         ImportCount("previouslyDeleted", UInt64(previouslyDeleted))]
    }

    public var json: String {
        var o = JSONObject()
        o.set("importId", importId.uuidString)
        o.set("exportDate", exportDate)
        o.set("locale", locale)
        o.set("exportVersion", exportVersion)
        o.set("xml", xmlName)
        o.set("xmlBytes", xmlBytes)
        o.set("contentSHA256", contentSHA256.map { String(format: "%02x", $0) }.joined())
        o.set("again", again)
        o.set("dryRun", dryRun)
        o.set("firstSequence", firstSequence)
        o.set("lastSequence", lastSequence)
        for c in counts { o.set(c.name, c.value) }
        o.set("metadataEntries", metadataEntries)
        o.set("beatLists", beatLists)
        o.set("correlationMembersUnlinked", correlationMembersUnlinked)
        o.set("workoutStatistics", workoutStatistics)
        o.set("duplicateActivitySummaryDays", duplicateActivitySummaryDays)
        o.set("characteristicsSet", characteristicsSet)
        o.set("seconds", seconds)
        o.set("recordsByType", Self.object(recordsByType))
        o.set("correlationsByType", Self.object(correlationsByType))
        o.set("rawReasons", Self.object(rawReasons))
        o.set("keptElements", Self.object(keptElements))
        o.set("keptChildren", Self.object(keptChildren))
        o.set("unknownAttributes", Self.object(unknownAttributes))
        var merged = JSONObject()
        for type in merge.keys.sorted() {
            let c = merge[type]!
            var m = JSONObject()
            m.set("new", c.new)
            m.set("unchanged", c.unchanged)
            m.set("removed", c.removed)
            merged.setRaw(type, m.string)
        }
        o.setRaw("merge", merged.string)
        o.setRaw("sourceNames", JSONObject.array(sources.map(JSONObject.quote)))
        o.setRaw("missingRouteFiles", JSONObject.array(missingRouteFiles.map(JSONObject.quote)))
        return o.string
    }

    private static func object(_ d: [String: Int]) -> JSONObject {
        var o = JSONObject()
        for k in d.keys.sorted() { o.set(k, d[k]!) }
        return o
    }

    /// A readable report.
    public var lines: [String] {
        var out: [String] = []
        out.append("\(dryRun ? "would import (dry run, nothing written)" : "imported") \(xmlName) (\(xmlBytes) bytes, exported \(exportDate ?? "?"), export version \(exportVersion ?? "?"))\(again ? " again" : "")")
        if !dryRun { out.append("  events #\(firstSequence)–#\(lastSequence); import \(importId.uuidString)") }
        out.append("  records:            \(records) in \(recordsByType.count) types (\(recordsKeptRaw) kept raw)")
        for (reason, n) in rawReasons.sorted(by: { $0.value > $1.value }).prefix(8) { out.append("    kept raw: \(n) × \(reason)") }
        out.append("  exact duplicates:   \(exactDuplicateRecords) (imported as they are); same type/source/time/value: \(logicalDuplicateRecords)")
        out.append("  correlations:       \(correlationsByType.values.reduce(0, +)) with \(correlationMembers) members (their \(recordsStoredAsMembers) top-level copies stored once, as members)")
        out.append("  workouts:           \(workouts) (\(workoutEvents) events, \(workoutStatistics) statistics, \(workoutRoutes) routes, \(routePoints) route points)")
        out.append("  activity summaries: \(activitySummaries)")
        out.append("  HRV beats:          \(beats) in \(beatLists) lists")
        out.append("  sources:            \(sources.count); characteristics set: \(characteristicsSet)")
        out.append("  samples \(dryRun ? "to save" : "saved"):      \(samplesSaved) new; \(unchanged) unchanged; \(removed) \(dryRun ? "to remove" : "removed") (absent from this export)")
        if previouslyDeleted > 0 { out.append("  deleted in the ledger, not restored: \(previouslyDeleted)") }
        if !merge.isEmpty {
            let width = max(4, merge.keys.map(\.count).max() ?? 4)
            out.append("  " + "type".padding(toLength: width, withPad: " ", startingAt: 0) + "        new  unchanged    removed")
            for type in merge.keys.sorted() {
                let c = merge[type]!
                out.append("  " + type.padding(toLength: width, withPad: " ", startingAt: 0)
                           + String(format: " %10d %10d %10d", c.new, c.unchanged, c.removed))
            }
        }
        out.append(String(format: "  time:               %.2f s", seconds))
        if notSavedSyncVersion > 0 { out.append("  not saved (sync identity already stored at that version): \(notSavedSyncVersion)") }
        if !keptChildren.isEmpty {
            out.append("  kept inside:        " + keptChildren.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", "))
        }
        if !keptElements.isEmpty {
            out.append("  kept as written:    " + keptElements.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", "))
        }
        if !missingRouteFiles.isEmpty { out.append("  route files missing from the export: \(missingRouteFiles.count)") }
        return out
    }
}
