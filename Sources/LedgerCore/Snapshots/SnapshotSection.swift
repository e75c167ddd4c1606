import Foundation
import HealthModel
import LedgerLog

/// One small section of a snapshot: its id, how it is written from the state, and
/// how it is read back into `SnapshotContents`. Each section's pair lives in its own
/// file (`SnapshotFile+Registry.swift`, …), encode beside decode; a new projection
/// adds its section there and one line to `SnapshotFile.smallSections`.
struct SnapshotSectionCodec: Sendable {
    let section: SnapshotFile.Section
    /// Writes the section, or returns false to leave it out (an optional section
    /// whose projection is empty: older snapshots stay byte for byte the same).
    let encode: @Sendable (SnapshotSource, inout ByteWriter) -> Bool
    /// Reads the section's bytes (the whole payload; the reader must end at its end).
    let decode: @Sendable (inout ByteReader, inout SnapshotContents) throws -> Void
    /// A snapshot without it is damaged (else the projection is simply empty).
    let required: Bool
}

/// What the section encoders read: the state (timelines sorted) and the sample
/// index's columns.
struct SnapshotSource: Sendable {
    let state: LedgerState
    let columns: SampleIndex.Columns
    /// Type codes with a timeline, ascending (the order of `timelineSlots`).
    let timelineCodes: [UInt16]
}

/// What the section decoders build, before it becomes a `LedgerState`.
struct SnapshotContents {
    /// Events whose fold rebuilds the small projections (registrations,
    /// characteristics, the owner's time zone, activity summaries).
    var events: [Event] = []
    var permissions: [(AppOrdinal, UInt16, TypePermission)] = []
    var lastSequence: UInt64 = 0
    var lastRecordedAt: Int64 = 0
    var eventCounts: [UInt16: UInt64] = [:]
    var imports: [ImportEntry] = []
    var eventsNotApplied: UInt64 = 0
    var credentials: [CredentialRegistry.Entry] = []
    /// The UUID table's entries and buckets (section 20), for its columns.
    var tableCount = 0, tableBuckets = 0
    var columns = SampleIndex.Columns(slots: [], recordStarts: [], appOverflows: [:], table: UUIDTable(), timelines: [:], latest: [:],
                                      tombstones: [], syncOfSlot: [:])
    /// The `timelineSlots` column, cut into timelines by the `timelines` section.
    var timelineSlots: Column<UInt32> = []
    /// The daily sums' tables (section 33), when the snapshot has them.
    var dailySums: [DailySums.Table]?

    /// A length-prefixed event payload of `kind` (in `version`: the current one unless
    /// the section says), as sections embed them.
    static func event(_ r: inout ByteReader, _ kind: EventKind, version: UInt16? = nil) throws -> Event {
        let sub = try r.lengthPrefixed()
        return try EventCodec.decode(kind: kind.rawValue, version: version ?? kind.currentVersion, payload: sub.bytes)
    }
}

extension SnapshotFile {
    /// The small sections, in the order they are written and read.
    static let smallSections: [SnapshotSectionCodec] = [
        registrySection, authorizationSection, characteristicsSection, countsSection, ownerTimeZoneSection,
        preferredUnitsSection, associationsSection, workoutActivitiesSection,
        importsSection, legacyImportsSection, notAppliedSection, activitySummariesSection, timelinesSection, latestSection, tombstonesSection, syncSection,
        appOverflowsSection, credentialsSection,
    ]

    /// Small sections made on a thread of their own while the columns are written (a
    /// pass over samples), and written after them; read as the others are.
    static let computedSections: [SnapshotSectionCodec] = [dailySumsSection]
}
