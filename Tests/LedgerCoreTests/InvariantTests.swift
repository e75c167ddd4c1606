import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerLog
import TestSupport

/// Invariants as code: each invariant of the sample index, the UUID
/// table and the state, broken on purpose in an otherwise sound value, is named by
/// `checkInvariants()` — exactly that one, nothing else.
struct InvariantTests {
    static let steps = ObjectType.quantity(.stepCount).code
    static let bodyMass = ObjectType.quantity(.bodyMass).code

    static func header(_ n: Int, _ type: ObjectType, start: Double, memberOf: Int? = nil, sync: Int32 = -1) -> SampleCodec.Header {
        SampleCodec.Header(kind: type == .correlation(.bloodPressure) ? .correlation : .quantity, uuid: fixedUUID(n),
                           typeCode: type.code, start: start, end: start + 60, replaces: nil, syncIndex: sync, syncVersion: 1,
                           memberOf: memberOf)
    }

    /// A sound index of 7 slots: two step counts saved by one record out of date order
    /// (slots 0 and 1), a blood pressure correlation with
    /// its two members (2, 3, 4), a body mass with a sync identifier of app 3 (5), a
    /// heart rate of app 3000, whose ordinal overflows a slot's app field (6); slot 0
    /// deleted at event 9.
    static func soundIndex() -> SampleIndex {
        var index = SampleIndex()
        _ = index.add(header(1, .quantity(.stepCount), start: 1000), syncIdentifier: nil, app: 1, recordOffset: 100, position: 0)
        _ = index.add(header(2, .quantity(.stepCount), start: 500), syncIdentifier: nil, app: 1, recordOffset: 100, position: 1)
        _ = index.add(header(3, .correlation(.bloodPressure), start: 2000), syncIdentifier: nil, app: 1, recordOffset: 200, position: 0)
        _ = index.add(header(4, .quantity(.bloodPressureSystolic), start: 2000, memberOf: 0), syncIdentifier: nil, app: 1,
                      recordOffset: 200, position: 1)
        _ = index.add(header(5, .quantity(.bloodPressureDiastolic), start: 2000, memberOf: 0), syncIdentifier: nil, app: 1,
                      recordOffset: 200, position: 2)
        _ = index.add(header(6, .quantity(.bodyMass), start: 3000, sync: 0), syncIdentifier: "scale-1", app: 3, recordOffset: 300,
                      position: 0)
        _ = index.add(header(7, .quantity(.heartRate), start: 4000), syncIdentifier: nil, app: 3000, recordOffset: 400, position: 0)
        index.delete(0, sequence: 9, actor: .owner)
        return index
    }

    /// The names `checkInvariants()` reports for the sound index with `change` made to its columns.
    static func broken(_ change: (inout SampleIndex.Columns) -> Void) -> [String] {
        var columns = Self.soundIndex().columns
        change(&columns)
        return SampleIndex(columns: columns).checkInvariants().map(\.invariant)
    }

    // MARK: The sample index

    @Test func aSoundIndexBreaksNoInvariant() {
        let index = Self.soundIndex()
        #expect(index.checkInvariants() == [])
        #expect(SampleIndex(columns: index.columns).checkInvariants() == [])
        #expect(SampleIndex().checkInvariants() == [])
        // Deleting slot 0, the latest step count, sorted its timeline.
        #expect(index.timelines[Int(Self.steps)] == SampleIndex.Timeline(slots: [1, 0], sorted: true))
    }

    @Test func aTypeCodeOutsideTheTableIsNamed() {
        // Slot 6's type field says 0x7FF: it is then also missing from that type's
        // (ignored) timeline and latest, which are past the table.
        #expect(Self.broken { $0.slots[6].word |= 0x7FF << 40 }
                == ["SampleIndex.typeCodesInTable", "SampleIndex.timelinesHoldTheirSlots", "SampleIndex.latestIsGreatestLive"])
    }

    @Test func aUUIDOfTwoSlotsIsNamed() {
        #expect(Self.broken { $0.uuids[4] = $0.uuids[3] } == ["SampleIndex.uuidFindsItsSlot"])
    }

    @Test func recordStartsOfTheWrongShapeAreNamed() {
        #expect(Self.broken { $0.recordStarts = [] } == ["SampleIndex.recordStartsShape"])
        #expect(Self.broken { $0.recordStarts[0] &= ~1 } == ["SampleIndex.recordStartsShape"])
        #expect(Self.broken { $0.recordStarts[0] |= 1 << 7 } == ["SampleIndex.recordStartsShape"])  // past slot 6
    }

    @Test func recordsThatAreNotConsecutiveAreNamed() {
        #expect(Self.broken { $0.recordStarts[0] |= 1 << 1 } == ["SampleIndex.recordsConsecutive"])  // slot 1 begins a record at 0's offset
        #expect(Self.broken { $0.recordStarts[0] &= ~(1 << 2) } == ["SampleIndex.recordsConsecutive"])  // slot 2 continues 1's record
    }

    @Test func aMemberThatBeginsItsRecordIsNamed() {
        #expect(Self.broken { $0.slots[6].state |= SampleIndex.memberBit } == ["SampleIndex.membersFollowTheirCorrelation"])
    }

    @Test func appOverflowsThatDisagreeWithTheMarkersAreNamed() {
        #expect(Self.broken { $0.appOverflows = [:] } == ["SampleIndex.appOverflowsMatchMarkers"])
        #expect(Self.broken { $0.appOverflows[1] = 4000 } == ["SampleIndex.appOverflowsMatchMarkers"])
        #expect(Self.broken { $0.appOverflows[6] = 12 } == ["SampleIndex.appOverflowsMatchMarkers"])  // fits the field
    }

    @Test func tombstonesThatDisagreeWithTheDeletedBitsAreNamed() {
        let t = Self.soundIndex().tombstones[0]
        #expect(Self.broken { $0.tombstones = [] } == ["SampleIndex.tombstonesNameDeletedSlots"])
        #expect(Self.broken { $0.tombstones.append(t) } == ["SampleIndex.tombstonesNameDeletedSlots"])
        #expect(Self.broken { $0.tombstones.append(.init(slot: 6, sequence: 10, actor: .owner, replacedBy: nil)) }
                == ["SampleIndex.tombstonesNameDeletedSlots"])
        #expect(Self.broken { $0.tombstones = [.init(slot: 0, sequence: 9, actor: .owner, replacedBy: 7)] }
                == ["SampleIndex.tombstonesNameDeletedSlots"])
        // Out of deletion order: slot 1 deleted at 8, after slot 0's deletion at 9.
        #expect(Self.broken {
            $0.slots[1].state |= SampleIndex.deletedBit
            $0.latest[Self.steps] = nil
            $0.tombstones.append(.init(slot: 1, sequence: 8, actor: .owner, replacedBy: nil))
        } == ["SampleIndex.tombstonesNameDeletedSlots"])
    }

    @Test func timelinesThatDoNotHoldTheirSlotsAreNamed() {
        #expect(Self.broken { $0.timelines[Self.steps]!.slots.append(1) } == ["SampleIndex.timelinesHoldTheirSlots"])
        #expect(Self.broken { $0.timelines[Self.steps]!.slots = [0] } == ["SampleIndex.timelinesHoldTheirSlots"])
        #expect(Self.broken { $0.timelines[Self.bodyMass]!.slots.append(1) } == ["SampleIndex.timelinesHoldTheirSlots"])
    }

    @Test func aSortedTimelineOutOfOrderIsNamed() {
        #expect(Self.broken { $0.timelines[Self.steps]!.slots = [0, 1] } == ["SampleIndex.sortedTimelinesInOrder"])
        #expect(Self.broken { $0.timelines[Self.steps] = SampleIndex.Timeline(slots: [0, 1], sorted: false) } == [])
    }

    @Test func aLatestThatIsNotTheGreatestLiveIsNamed() {
        #expect(Self.broken { $0.latest[Self.steps] = 0 } == ["SampleIndex.latestIsGreatestLive"])  // deleted
        #expect(Self.broken { $0.latest[Self.steps] = nil } == ["SampleIndex.latestIsGreatestLive"])
        #expect(Self.broken { $0.latest[ObjectType.quantity(.height).code] = 5 } == ["SampleIndex.latestIsGreatestLive"])
    }

    @Test func syncIdentitiesThatDisagreeAreNamed() {
        // A member with a sync identity; two live slots of one app with one identifier.
        #expect(Self.broken { $0.syncOfSlot[3] = .init(identifier: "cuff-1", version: 1) } == ["SampleIndex.syncSlotsMatchSyncOfSlot"])
        // A deleted slot keeps its sync identity (its tombstone tells it), unindexed.
        #expect(Self.broken { $0.syncOfSlot[0] = .init(identifier: "pedometer-1", version: 1) } == [])
    }

    @Test func twoLiveSlotsHoldingOneSyncIdentityAreNamed() {
        var index = SampleIndex()
        _ = index.add(Self.header(1, .quantity(.bodyMass), start: 1000, sync: 0), syncIdentifier: "scale-1", app: 3,
                      recordOffset: 100, position: 0)
        _ = index.add(Self.header(2, .quantity(.bodyMass), start: 2000, sync: 0), syncIdentifier: "scale-1", app: 3,
                      recordOffset: 200, position: 0)
        // `add` indexes the newer; the older stays live with the same identity (the rules
        // delete it first: `replaces`).
        #expect(index.checkInvariants().map(\.invariant) == ["SampleIndex.syncSlotsMatchSyncOfSlot"])
    }

    // MARK: The UUID table

    /// An entry for `slot` whose fingerprint makes bucket `home` its home.
    static func entry(slot: UInt32, home: Int) -> UInt64 { UInt64(home) << 32 | UInt64(slot) + 1 }

    @Test func theTablesInvariantsAreNamed() {
        func names(_ buckets: [UInt64], count: Int, slots: Int) -> [String] {
            UUIDTable(buckets: Column(buckets), count: count).checkInvariants(slotCount: slots).map(\.invariant)
        }
        let empty = [UInt64](repeating: 0, count: 16)
        var two = empty
        two[3] = Self.entry(slot: 0, home: 3)
        two[9] = Self.entry(slot: 1, home: 9)
        #expect(names(two, count: 2, slots: 2) == [])
        #expect(names(two, count: 3, slots: 3) == ["UUIDTable.countIsNonemptyBuckets"])
        #expect(names(two, count: 2, slots: 1) == ["UUIDTable.entriesNameSlots"])  // slot 1 of 1
        var noSlot = two
        noSlot[3] = UInt64(3) << 32  // slot + 1 = 0: names no slot
        #expect(names(noSlot, count: 2, slots: 2) == ["UUIDTable.entriesNameSlots"])
        var stranded = two
        stranded[9] = Self.entry(slot: 1, home: 7)  // bucket 8, between its home and it, is empty
        #expect(names(stranded, count: 2, slots: 2) == ["UUIDTable.entriesReachableFromHome"])
        var wrapped = two
        wrapped[0] = Self.entry(slot: 1, home: 15)  // its home is full, and so the run wraps to bucket 0
        wrapped[15] = Self.entry(slot: 2, home: 15)
        wrapped[9] = 0
        #expect(names(wrapped, count: 3, slots: 3) == [])
        // The compact form of a sound table is sound, and holds the same entries.
        let packed = UUIDTable(buckets: Column(two), count: 2).compactForm
        #expect(UUIDTable(compact: packed).checkInvariants(slotCount: 2) == [])
        #expect(packed.bucketWords() == two)
        var full = empty
        for i in 0..<13 { full[i] = Self.entry(slot: UInt32(i), home: i) }
        #expect(names(full, count: 13, slots: 13) == ["UUIDTable.loadAtMost80Percent"])
        // The index reports its table's invariants, and then looks nothing up in it.
        #expect(Self.broken { $0.table = UUIDTable(buckets: $0.table.buckets, count: 8) } == ["UUIDTable.countIsNonemptyBuckets"])
    }

    /// The preconditions that stand where there were comments: they stop the
    /// process, naming what broke.
    @Test func preconditionsStopTheProcess() async {
        await #expect(processExitsWith: .failure) {
            _ = UUIDTable(buckets: Column([0, 0, 0]), count: 0)  // bucketsPowerOfTwo
        }
        await #expect(processExitsWith: .failure) {
            var table = UUIDTable()
            table.insert(UUID(), slot: UInt32.max) { _ in UUID() }  // slot + 1 would not fit
        }
        await #expect(processExitsWith: .failure) {
            var index = SampleIndex()
            _ = index.add(InvariantTests.header(1, .quantity(.stepCount), start: 0), syncIdentifier: nil, app: 1,
                          recordOffset: 100, position: 0)
            _ = index.add(InvariantTests.header(1, .quantity(.stepCount), start: 0), syncIdentifier: nil, app: 1,
                          recordOffset: 200, position: 0)  // the same UUID again
        }
        await #expect(processExitsWith: .failure) {
            var index = SampleIndex()
            _ = index.add(InvariantTests.header(1, .quantity(.stepCount), start: 0), syncIdentifier: nil, app: 1,
                          recordOffset: 200, position: 0)
            _ = index.add(InvariantTests.header(2, .quantity(.stepCount), start: 0), syncIdentifier: nil, app: 1,
                          recordOffset: 100, position: 0)  // a record before the last
        }
    }

    // MARK: The state

    /// A sound state around the sound index: 7 events folded, 7 statistics entries.
    static func soundState() -> LedgerState {
        var state = LedgerState()
        state.restore(events: [], permissions: [], lastSequence: 9, lastRecordedAt: 0, eventCounts: [1: 2, 3: 5, 5: 2])
        state.samples = Self.soundIndex()
        state.statistics = StatisticsProjection(values: Column([Double](repeating: 1, count: 7)), userEntered: Column([UInt8](repeating: 0, count: 7)),
                                                priorities: [:], grantOrder: [1, 3])
        return state
    }

    static func brokenState(_ change: (inout LedgerState) throws -> Void) rethrows -> [String] {
        var state = soundState()
        try change(&state)
        return state.checkInvariants().map(\.invariant)
    }

    static func start(_ n: Int, transaction: Bool = true) -> ExportImportStart {
        transaction
            ? ExportImportStart(importId: fixedUUID(n), exportDate: nil, locale: nil, exportVersion: nil, sourcePath: "export.zip", me: [])
            : ExportImportStart(importId: fixedUUID(n), contentSHA256: [UInt8](repeating: 7, count: 32), exportDate: nil, locale: nil,
                                exportVersion: nil, sourcePath: "export.zip", again: false, me: [])
    }

    /// Restores `imports` into the sound state (its counts as they were).
    static func withImports(_ imports: [ImportEntry]) -> [String] {
        brokenState { state in
            state.restore(events: [], permissions: [], lastSequence: 9, lastRecordedAt: 0, eventCounts: state.eventCounts,
                          imports: imports)
        }
    }

    @Test func aSoundStateBreaksNoInvariant() {
        #expect(Self.soundState().checkInvariants() == [])
        #expect(LedgerState().checkInvariants() == [])
        #expect(Self.withImports([ImportEntry(start: Self.start(1), startedAt: 2, finishedAt: 5),
                                  ImportEntry(start: Self.start(2, transaction: false), startedAt: 6),
                                  ImportEntry(start: Self.start(3), startedAt: 7)]) == [])
    }

    @Test func statisticsNotOnePerSlotAreNamed() {
        #expect(Self.brokenState { $0.statistics = StatisticsProjection() } == ["LedgerState.statisticsPerSlot"])
        #expect(Self.brokenState {
            $0.statistics = StatisticsProjection(values: Column([Double](repeating: 1, count: 7)), userEntered: [0], priorities: [:], grantOrder: [])
        } == ["LedgerState.statisticsPerSlot"])
    }

    @Test func anAppGrantedTwiceInTheGrantOrderIsNamed() {
        #expect(Self.brokenState {
            $0.statistics = StatisticsProjection(values: $0.statistics.values, userEntered: $0.statistics.userEntered, priorities: [:],
                                                 grantOrder: [1, 3, 1])
        } == ["LedgerState.grantOrderUnique"])
    }

    @Test func importsOutOfOrderAreNamed() {
        #expect(Self.withImports([ImportEntry(start: Self.start(1), startedAt: 5, finishedAt: 6),
                                  ImportEntry(start: Self.start(2), startedAt: 3, finishedAt: 4)]) == ["LedgerState.importsOrdered"])
        #expect(Self.withImports([ImportEntry(start: Self.start(1), startedAt: 5, finishedAt: 5)]) == ["LedgerState.importsOrdered"])
        #expect(Self.withImports([ImportEntry(start: Self.start(1), startedAt: 5, finishedAt: 10)]) == ["LedgerState.importsOrdered"])
        #expect(Self.withImports([ImportEntry(start: Self.start(1, transaction: false), startedAt: 10)]) == ["LedgerState.importsOrdered"])
        #expect(Self.withImports([ImportEntry(start: Self.start(1), startedAt: 2, finishedAt: 3),
                                  ImportEntry(start: Self.start(1), startedAt: 4, finishedAt: 5)]) == ["LedgerState.importsOrdered"])
    }

    @Test func twoOpenTransactionsAreNamed() {
        #expect(Self.withImports([ImportEntry(start: Self.start(1), startedAt: 2), ImportEntry(start: Self.start(2, transaction: false), startedAt: 3),
                                  ImportEntry(start: Self.start(3), startedAt: 4)]) == ["LedgerState.oneOpenTransaction"])
    }

    @Test func eventsNotAccountedForAreNamed() {
        #expect(Self.brokenState { state in
            state.restore(events: [], permissions: [], lastSequence: 9, lastRecordedAt: 0, eventCounts: [1: 2, 3: 5], eventsNotApplied: 1)
        } == ["LedgerState.eventsAccounted"])
        #expect(Self.brokenState { state in
            state.restore(events: [], permissions: [], lastSequence: 9, lastRecordedAt: 0, eventCounts: [1: 2, 3: 5], eventsNotApplied: 2)
        } == [])
    }

    @Test func aSummaryFiledUnderAnotherDayIsNamed() throws {
        let summary = try ActivitySummary(day: try DateOfBirth(year: 2026, month: 3, day: 1), activeEnergyBurned: 400)
        #expect(Self.brokenState { $0.activitySummaries[20_260_301] = summary } == [])
        #expect(Self.brokenState { $0.activitySummaries[20_260_302] = summary } == ["LedgerState.activitySummariesByDay"])
    }

    @Test func activityUUIDsThatAreNotDerivedAreNamed() throws {
        let activity = try WorkoutActivity(activityType: .swimming, start: date("2026-03-01T10:00:00Z"), end: date("2026-03-01T10:20:00Z"))
        #expect(Self.brokenState { state in
            state.restore(events: [.workoutActivitiesAdded(actor: .owner, workout: fixedUUID(6), activities: [activity])], permissions: [],
                          lastSequence: 9, lastRecordedAt: 0, eventCounts: state.eventCounts)
        } == [])
        #expect(Self.brokenState { $0.workoutActivityUUIDs.insert(fixedUUID(99)) } == ["LedgerState.workoutActivityUUIDsDerived"])
    }

    @Test func theStateReportsItsIndexsInvariants() {
        #expect(Self.brokenState { $0.samples = SampleIndex() } == ["LedgerState.statisticsPerSlot"])
        #expect(Self.brokenState { state in
            var columns = state.samples.columns
            columns.tombstones = []
            state.samples = SampleIndex(columns: columns)
        } == ["SampleIndex.tombstonesNameDeletedSlots"])
    }

    // MARK: After folds

    /// Debug builds check after folds: a fold onto a broken state stops the process,
    /// naming the invariant.
    @Test(.enabled(if: InvariantChecks.afterFolds, "folds are checked in debug builds, unless HEALTHLEDGER_INVARIANT_CHECKS=0"))
    func aFoldOntoABrokenStateStopsTheProcessNamingTheInvariant() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var state = InvariantTests.soundState()
            state.activitySummaries[20_260_302] = try ActivitySummary(day: try DateOfBirth(year: 2026, month: 3, day: 1))
            state.apply(.appRegistered(app: 1, appA), sequence: 10, recordedAt: 0, offset: 500)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("broken invariants after folding event 10: LedgerState.activitySummariesByDay: the summary of 2026-03-01 "
                                + "is filed under 20260302"))
    }

    /// A real ledger's states — written, replayed, loaded from a snapshot read whole
    /// and mapped — break no invariant, nor does its writer.
    @Test func aLedgersStatesBreakNoInvariant() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        try await ledger.grant(appA, share: [.quantity(.bodyMass), .quantity(.stepCount)])
        for i in 0..<40 {
            var sync = Metadata()
            if i % 4 == 0 {
                sync.append(Metadata.WellKnownKey.syncIdentifier, .string("scale-\(i % 8)"))
                sync.append(Metadata.WellKnownKey.syncVersion, .integer(Int64(i)))
            }
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [
                try quantitySample(.bodyMass, 70, "kg", at: "2026-02-1\(i % 9)T08:00:00Z", uuid: fixedUUID(100 + i), metadata: sync),
                try quantitySample(.stepCount, 10, "count", at: "2026-02-01T08:00:00Z", uuid: fixedUUID(200 + i)),
            ]))
            if i % 3 == 0 { try await ledger.append(.delete(bundleIdentifier: nil, uuids: [fixedUUID(200 + i)], reason: nil)) }
        }
        let written = await ledger.state
        #expect(written.samples.deletedCount == 14 + 8)  // 14 deleted, 8 replaced through their sync identifiers (two, five versions each)
        #expect(written.checkInvariants() == [])
        #expect(await ledger.writer.checkInvariants() == [])
        try await ledger.snapshot()
        try await ledger.close()
        #expect(await ledger.writer.checkInvariants() == [])
        #expect(try StateLoader.load(fs, reader: try LogReader(fs), useSnapshots: false).state.checkInvariants() == [])
        #expect(try StateLoader.load(fs, reader: try LogReader(fs)).state.checkInvariants() == [])

        let dir = TemporaryDirectory()
        _ = try await MappedSnapshotTests.ledgerWithSnapshot(dir)
        for mapped in [false, true] {
            let loaded = try MappedSnapshotTests.load(dir, mapped: mapped)
            #expect(loaded.samples.hasMappedColumns == mapped)
            #expect(loaded.checkInvariants() == [])
            #expect(loaded.checkInvariants(readingMappedColumns: false) == [])
        }
    }
}
