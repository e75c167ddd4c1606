import Foundation
import HealthModel
import LedgerLog

/// Projection: every sample ever saved, where it is in the log, and per type a
/// timeline ordered by start date — the sample index and the latest-sample index.
///
/// The log is the store: a slot holds a sample's interval, type and source and the
/// byte offset of the record that saved it (plus its position among that record's
/// samples), never a copy of the sample — not even its UUID, which the log holds at
/// that place: the index keeps the UUIDs of the slots it folded in memory (`uuids`),
/// and reads those of slots restored from a snapshot from the log (`logUUIDs`). Slots
/// are numbered in log order, which makes every output independent of hash-table layout.
///
/// Invariants (`SampleIndex.Invariant`, checked by `checkInvariants()`; the ones a
/// fold could break are also preconditions of `add` and `delete`): a UUID maps to
/// exactly one slot; a slot is deleted at most once, and has exactly one tombstone
/// then; `latest(typeCode:)` is the live slot of that type with the greatest
/// (start, end, slot); a sorted timeline is in (start, end, slot) order, and each
/// timeline holds exactly the slots of its type; a record's slots are consecutive,
/// in log order, marked by `recordStarts`; `appOverflows` holds exactly the slots
/// marked as overflowing; `syncSlots` indexes the live slots of `syncOfSlot`.
package struct SampleIndex: Sendable, Equatable {
    /// One sample's facts: 24 bytes, stored contiguously (one append per sample).
    ///
    /// `word` packs the saving record's byte offset (bits 0–39: a log up to 1 TiB),
    /// the type code (40–50), the state (51–52: 1 deleted, 2 correlation member) and
    /// the saving app (53–63; `appOverflow` marks an ordinal ≥ 2047, held in the index's
    /// `appOverflows`). The sample's position in its record is not stored: the slots
    /// of a record are consecutive, and `recordStarts` marks the first of each.
    struct Slot: Equatable, Sendable, BitwiseCopyable {
        /// Start and end as `timeIntervalSinceReferenceDate`.
        var start: Double
        var end: Double
        var word: UInt64

        static let offsetLimit: UInt64 = 1 << 40
        static let appOverflow: UInt32 = 0x7FF

        init(start: Double, end: Double, recordOffset: UInt64, typeCode: UInt16, state: UInt8, appField: UInt32) {
            precondition(recordOffset < Self.offsetLimit && Int(typeCode) < SampleIndex.typeCodeLimit && state < 4
                         && appField <= Self.appOverflow, "a slot's fields fit its word")
            self.start = start
            self.end = end
            word = recordOffset | UInt64(typeCode) << 40 | UInt64(state) << 51 | UInt64(appField) << 53
        }

        static func == (a: Slot, b: Slot) -> Bool {
            a.start.bitPattern == b.start.bitPattern && a.end.bitPattern == b.end.bitPattern && a.word == b.word
        }

        /// Byte offset of the saving record in the log.
        var recordOffset: UInt64 { word & (Self.offsetLimit - 1) }
        var typeCode: UInt16 { UInt16(truncatingIfNeeded: word >> 40) & 0x7FF }
        var state: UInt8 {
            get { UInt8(truncatingIfNeeded: word >> 51) & 3 }
            set { word = word & ~(3 << 51) | UInt64(newValue & 3) << 51 }
        }
        /// The app, or `appOverflow` (then the index's `appOverflows` holds it).
        var appField: UInt32 { UInt32(truncatingIfNeeded: word >> 53) }
    }

    private(set) var slots: Column<Slot> = []
    /// The UUIDs of slots `uuidBase...`, at `slot − uuidBase`: those this index folded.
    private(set) var uuids: Column<uuid_t> = []
    /// The first slot whose UUID `uuids` holds. The slots before it were restored from a
    /// snapshot, which stores no UUIDs: `logUUIDs` reads theirs from the log.
    private(set) var uuidBase = 0
    /// Reads the UUIDs of restored slots from the log (set by whoever restores a
    /// snapshot, with the log it belongs to). Not part of the index's meaning.
    package var logUUIDs: LogSampleUUIDs?
    /// Bit `i` is set when slot `i` is the first of its record: a slot's position in
    /// its record is its distance from the nearest set bit at or before it.
    private(set) var recordStarts: Column<UInt64> = []
    /// The apps of slots whose ordinal does not fit their word (≥ 2047 apps), by slot.
    private(set) var appOverflows: [UInt32: UInt32] = [:]

    static let deletedBit: UInt8 = 1
    static let memberBit: UInt8 = 2
    private(set) var table = UUIDTable()
    /// Indexed by type code: slots of that type, ordered by (start, end, slot) when
    /// `sorted`. (Arrays indexed by code, not dictionaries: replay touches them for
    /// every sample.)
    private(set) var timelines = [Timeline](repeating: Timeline(), count: SampleIndex.typeCodeFieldLimit)
    /// Indexed by type code: the most recent live slot, or `none`.
    private(set) var latestSlots = [UInt32](repeating: SampleIndex.none, count: SampleIndex.typeCodeFieldLimit)
    /// Tombstones, in the order of the deletions.
    package private(set) var tombstones: [Tombstone] = []
    /// (app, sync identifier) → the live slot holding it.
    private(set) var syncSlots: [SyncKey: UInt32] = [:]
    /// slot → its sync identity, for the slots that have one.
    private(set) var syncOfSlot: [UInt32: SyncValue] = [:]

    /// Type codes are below this (events/FORMAT.md, type codes).
    static let typeCodeLimit = 0x0700
    /// What a slot's 11-bit type field can hold: the per-type tables are this long, so
    /// no slot, however damaged, indexes outside them.
    static let typeCodeFieldLimit = 0x0800
    static let none = UInt32.max

    struct Timeline: Sendable, Equatable {
        var slots: Column<UInt32> = []
        var sorted = true
    }

    struct SyncKey: Hashable, Sendable {
        let app: UInt32
        let identifier: String
    }

    struct SyncValue: Hashable, Sendable {
        let identifier: String
        let version: Int64
    }

    /// What stays of a deleted object; never purged.
    package struct Tombstone: Hashable, Sendable {
        /// The deleted object's slot.
        package let slot: UInt32
        /// The sequence number of the event that deleted it.
        package let sequence: UInt64
        /// Who deleted it (for a replacement: the saving app).
        package let actor: ActorID
        /// The slot of the object that replaced it through a sync identifier, if any.
        package let replacedBy: UInt32?
    }

    package init() {}

    /// Equal by meaning: the same slots, tombstones, sync identities and latest
    /// samples, and timelines holding the same slots. The hash table's layout and
    /// whether a timeline happens to be sorted yet are not part of the meaning.
    package static func == (a: SampleIndex, b: SampleIndex) -> Bool {
        guard a.slots == b.slots, a.recordStarts == b.recordStarts, a.appOverflows == b.appOverflows,
              a.tombstones == b.tombstones, a.latestSlots == b.latestSlots,
              a.syncOfSlot == b.syncOfSlot, a.syncSlots == b.syncSlots, a.table.count == b.table.count else { return false }
        for code in a.timelines.indices where a.timelines[code] != b.timelines[code] {
            if a.timelines[code].slots.array.sorted() != b.timelines[code].slots.array.sorted() { return false }
        }
        return true
    }

    /// Reserves room for about `estimatedSamples` samples (replay knows the log
    /// size). Slot capacity is virtual memory until used, so it is generous; the
    /// table is sized to the estimate (it grows if needed).
    mutating func reserve(estimatedSamples: Int) {
        guard estimatedSamples > slots.count else { return }
        slots.reserveCapacity(estimatedSamples + estimatedSamples / 4)
        recordStarts.reserveCapacity((estimatedSamples + estimatedSamples / 4) / 64 + 1)
        uuids.reserveCapacity(estimatedSamples + estimatedSamples / 4)
        if table.count == 0 { table = UUIDTable(capacity: estimatedSamples) }
    }

    /// Number of samples ever saved (live and deleted).
    package var count: Int { slots.count }
    /// Whether the slots are mapped from a snapshot (rule S8), not held in memory.
    package var isMapped: Bool { slots.isMapped }
    /// Number of samples deleted.
    package var deletedCount: Int { tombstones.count }

    // MARK: Reading

    /// Hints that `uuid` will be looked up soon.
    @inline(__always)
    func prefetch(_ uuid: UUID) { table.prefetch(uuid) }

    /// The slot of a UUID (live or deleted). Throws when a slot whose fingerprint
    /// matches was restored from a snapshot and its UUID cannot be read from the log.
    package func slot(of uuid: UUID) throws(UUIDUnreadable) -> UInt32? {
        // Every UUID in memory (a fold, a replay: every save's duplicate check): the
        // column lent to the probe, nothing else of the index captured (a closure over
        // `self` copied the whole index, a retain and a release of each of its arrays,
        // per lookup).
        if uuidBase == 0 { return table.find(uuid, slotCount: UInt32(slots.count), uuids: uuids) }
        return try table.find(uuid, slotCount: UInt32(slots.count)) { (slot) throws(UUIDUnreadable) -> UUID in try self.uuid(slot) }
    }

    /// The UUID of the sample in a slot: from memory for a slot this index folded, else
    /// from the log (its record, at its position; checked to be the slot's sample).
    package func uuid(_ slot: UInt32) throws(UUIDUnreadable) -> UUID {
        let i = Int(slot)
        if i >= uuidBase { return UUID(uuid: uuids[i - uuidBase]) }
        guard let logUUIDs else { throw UUIDUnreadable(slot: slot, reason: "restored from a snapshot, with no log to read its UUID from") }
        let s = slots[i]
        return try logUUIDs.uuid(slot: slot, recordOffset: s.recordOffset, position: position(slot), typeCode: s.typeCode,
                                 start: s.start, end: s.end)
    }

    /// A slot's UUID could not be read from the log (`uuid(_:)`, rule S11): the log is
    /// damaged or unreadable there (`cause`: the log's own error, which front ends
    /// report as they would for any read of that record), or holds another sample
    /// where the index says.
    package struct UUIDUnreadable: Error, Equatable, Sendable, CustomStringConvertible {
        package let slot: UInt32
        package let reason: String
        package let cause: (any Error & Sendable)?

        init(slot: UInt32, reason: String, cause: (any Error & Sendable)? = nil) {
            self.slot = slot
            self.reason = reason
            self.cause = cause
        }

        package var description: String { "the UUID of sample slot \(slot) cannot be read from the log: \(reason) [S11]" }

        package static func == (a: UUIDUnreadable, b: UUIDUnreadable) -> Bool { a.slot == b.slot && a.reason == b.reason }
    }

    /// Everything the index knows of a slot (its UUID: `uuid(_:)`).
    package func entry(_ slot: UInt32) -> Entry {
        let s = slots[Int(slot)]
        return Entry(slot: slot, recordOffset: s.recordOffset, position: position(slot), start: s.start, end: s.end,
                     typeCode: s.typeCode, app: app(slot), isDeleted: s.state & Self.deletedBit != 0,
                     isMember: s.state & Self.memberBit != 0, sync: syncOfSlot[slot])
    }

    /// The app that saved the sample in a slot.
    @inline(__always)
    package func app(_ slot: UInt32) -> UInt32 {
        app(slot, slots[Int(slot)])
    }

    /// `app(slot)` for a slot already read (`entry` is `slots[slot]`).
    @inline(__always)
    func app(_ slot: UInt32, _ entry: Slot) -> UInt32 {
        let field = entry.appField
        // A slot of a damaged or forged snapshot may say "overflow" without an entry:
        // no app then (UInt32.max names none), never a trap.
        return field == Slot.appOverflow ? appOverflows[slot] ?? UInt32.max : field
    }

    /// The position of a slot's sample among its record's samples (correlation
    /// members follow their correlation): its distance from the record's first slot.
    package func position(_ slot: UInt32) -> UInt32 {
        var word = Int(slot) >> 6
        // Bits at or below the slot's, in its word.
        var bits = recordStarts[word] & (UInt64.max >> (63 - (UInt64(slot) & 63)))
        while bits == 0 {
            word -= 1
            precondition(word >= 0, "slot 0 begins a record")
            bits = recordStarts[word]
        }
        let first = word << 6 | (63 - bits.leadingZeroBitCount)
        return slot - UInt32(first)
    }

    /// The first slot of the record holding `slot`, for a walk in ascending slot order:
    /// `known` is the first slot of the record holding `earlier` (at most `slot`), so only
    /// the record-start words between the two are read, not every word back to the
    /// record's start (a record of 1,000 samples spans 16 words; `position` read them
    /// all for each of its samples, 7 % of a 10M-sample query's reading thread).
    func recordFirst(of slot: UInt32, after earlier: UInt32, whoseFirstIs known: UInt32) -> UInt32 {
        precondition(earlier <= slot && known <= earlier, "an earlier slot of the walk, and its record's first")
        var word = Int(slot) >> 6
        let floor = Int(earlier) >> 6
        // Bits at or below the slot's, in its word.
        var bits = recordStarts[word] & (UInt64.max >> (63 - (UInt64(slot) & 63)))
        while true {
            // In the earlier slot's word, only bits above it start a record it is not in.
            if word == floor { bits &= ~(UInt64.max >> (63 - (UInt64(earlier) & 63))) }
            if bits != 0 { return UInt32(word << 6 | (63 - bits.leadingZeroBitCount)) }
            if word == floor { return known }
            word -= 1
            bits = recordStarts[word]
        }
    }

    /// A slot's facts.
    package struct Entry: Hashable, Sendable {
        package let slot: UInt32
        /// Byte offset of the saving record in the log.
        package let recordOffset: UInt64
        /// Position among the record's samples (correlation members follow their correlation).
        package let position: UInt32
        /// Start and end as `timeIntervalSinceReferenceDate`.
        package let start: Double
        package let end: Double
        package let typeCode: UInt16
        package let app: UInt32
        package let isDeleted: Bool
        package let isMember: Bool
        let sync: SyncValue?
        package var startDate: Date { Date(timeIntervalSinceReferenceDate: start) }
        /// The same facts with another record offset (comparisons that ignore log positions).
        func withRecordOffset(_ offset: UInt64) -> Entry {
            Entry(slot: slot, recordOffset: offset, position: position, start: start, end: end, typeCode: typeCode,
                  app: app, isDeleted: isDeleted, isMember: isMember, sync: sync)
        }
        package var endDate: Date { Date(timeIntervalSinceReferenceDate: end) }
        package var syncIdentifier: String? { sync?.identifier }
        package var syncVersion: Int64? { sync?.version }
    }

    package func isLive(_ slot: UInt32) -> Bool { slots[Int(slot)].state & Self.deletedBit == 0 }

    /// Whether the sample `uuid` is stored and not deleted.
    package func isLive(uuid: UUID) throws(UUIDUnreadable) -> Bool { try slot(of: uuid).map(isLive) ?? false }

    /// The most recent live sample of a type: greatest start, then end, then sequence.
    package func latest(typeCode: UInt16) -> UInt32? {
        guard Int(typeCode) < Self.typeCodeLimit, latestSlots[Int(typeCode)] != Self.none else { return nil }
        return latestSlots[Int(typeCode)]
    }

    /// "Latest" as HealthLedger defines it everywhere (DESIGN.md, "Latest"): the live
    /// sample of a type with the greatest (start, end, slot) among those whose end is at
    /// or before `end` (`timeIntervalSinceReferenceDate`) — the tutorial's query with
    /// `strictEndDate` up to now. A sample dated in the future is not the latest.
    package func latest(typeCode: UInt16, endingBy end: Double) -> UInt32? {
        guard let newest = latest(typeCode: typeCode) else { return nil }
        if slots[Int(newest)].end <= end { return newest }
        var best = Self.none
        slots.withUnsafeBufferPointer { s in
            for candidate in timelines[Int(typeCode)].slots
            where s[Int(candidate)].state & Self.deletedBit == 0 && s[Int(candidate)].end <= end {
                if best == Self.none || Self.before(best, candidate, s) { best = candidate }
            }
        }
        return best == Self.none ? nil : best
    }

    /// Type codes that have any samples, ascending.
    package var typeCodesPresent: [UInt16] {
        timelines.indices.filter { !timelines[$0].slots.isEmpty }.map { UInt16($0) }
    }

    /// Live samples of a type.
    package func liveCount(typeCode: UInt16) -> Int {
        guard Int(typeCode) < Self.typeCodeLimit else { return 0 }
        return timelines[Int(typeCode)].slots.reduce(0) { $0 + (isLive($1) ? 1 : 0) }
    }

    /// The type's slots ordered by (start, end, slot), deleted ones included.
    package mutating func orderedSlots(typeCode: UInt16) -> Column<UInt32> {
        guard Int(typeCode) < Self.typeCodeLimit else { return [] }
        sortTimeline(typeCode)
        return timelines[Int(typeCode)].slots
    }

    /// The type's slots in arrival order (no sorting needed for counting).
    package func orderedSlotsIfNeeded(_ typeCode: UInt16) -> Column<UInt32> {
        Int(typeCode) < Self.typeCodeLimit ? timelines[Int(typeCode)].slots : []
    }

    /// Sorts every timeline that samples arrived out of order in.
    package mutating func prepareForQueries() {
        for code in timelines.indices where !timelines[code].sorted { sortTimeline(UInt16(code)) }
    }

    /// Whether slot `a` comes before slot `b` in a timeline: (start, end, slot) order.
    @inline(__always)
    static func before(_ a: UInt32, _ b: UInt32, _ s: UnsafeBufferPointer<Slot>) -> Bool {
        before(s[Int(a)], a, s[Int(b)], b)
    }

    /// `before(a, b, s)` for slots already read: `x` is slot `a`'s, `y` slot `b`'s.
    @inline(__always)
    static func before(_ x: Slot, _ a: UInt32, _ y: Slot, _ b: UInt32) -> Bool {
        if x.start != y.start { return x.start < y.start }
        if x.end != y.end { return x.end < y.end }
        return a < b
    }

    private mutating func sortTimeline(_ code: UInt16) {
        let c = Int(code)
        guard !timelines[c].sorted else { return }
        var t = timelines[c]
        timelines[c] = Timeline()  // keep the slots array uniquely referenced while sorting
        slots.withUnsafeBufferPointer { s in t.slots.withUnsafeMutableBufferPointer { Self.sort($0, by: s) } }
        t.sorted = true
        timelines[c] = t
    }

    /// A timeline this long or longer is sorted in two halves on two threads, then
    /// merged (a first import's heart rate: three quarters of its samples, sorted when
    /// the closing snapshot is written).
    static let parallelSortMinimum = 1 << 16

    /// A timeline entry with the fields it sorts by, copied out of its slot.
    struct SortKey {
        var start: Double
        var end: Double
        var slot: UInt32

        /// `before(_:_:_:)` on the copied fields: the same comparisons in the same order.
        @inline(__always)
        static func before(_ x: SortKey, _ y: SortKey) -> Bool {
            if x.start != y.start { return x.start < y.start }
            if x.end != y.end { return x.end < y.end }
            return x.slot < y.slot
        }
    }

    /// Sorts `timeline` in (start, end, slot) order. A total order (slots are
    /// distinct), so the result is the same however it is reached.
    ///
    /// The entries' dates are first copied next to them (`SortKey`, one pass that reads
    /// the slots in timeline order: arrival order, so mostly ascending), and the keys
    /// sorted: comparing through the slot numbers fetched two slots per comparison from
    /// all over the slot column, a cache miss each once the column outgrows the cache
    /// (a million-slot sort: 0.3 s of CPU, against 0.1 s for the keys).
    static func sort(_ timeline: UnsafeMutableBufferPointer<UInt32>, by s: UnsafeBufferPointer<Slot>) {
        let n = timeline.count
        guard n > 1 else { return }
        let keys = UnsafeMutableBufferPointer<SortKey>.allocate(capacity: n)
        defer { keys.deallocate() }
        for i in 0..<n {
            let slot = timeline[i]
            keys.initializeElement(at: i, to: SortKey(start: s[Int(slot)].start, end: s[Int(slot)].end, slot: slot))
        }
        guard n >= parallelSortMinimum, ProcessInfo.processInfo.activeProcessorCount > 1 else {
            var whole = keys
            whole.sort { SortKey.before($0, $1) }
            for i in 0..<n { timeline[i] = keys[i].slot }
            return
        }
        let half = n / 2
        let shared = SortHalves(keys: keys)
        DispatchQueue.concurrentPerform(iterations: 2) { i in
            var part = UnsafeMutableBufferPointer(rebasing: shared.keys[i == 0 ? 0..<half : half..<n])
            part.sort { SortKey.before($0, $1) }
        }
        var i = 0, j = half, k = 0
        while i < half && j < n {
            if SortKey.before(keys[j], keys[i]) {
                timeline[k] = keys[j].slot
                j += 1
            } else {
                timeline[k] = keys[i].slot
                i += 1
            }
            k += 1
        }
        while i < half { timeline[k] = keys[i].slot; i += 1; k += 1 }
        while j < n { timeline[k] = keys[j].slot; j += 1; k += 1 }
        assert(k == n, "the merge takes every element once")
    }

    // MARK: Folding

    /// Adds a saved sample; returns its slot. Preconditions: the UUID is new (the rules;
    /// `UUIDTable.insert` checks it on its probe); the record's samples come in order,
    /// in consecutive slots, and records in log order.
    mutating func add(_ h: SampleCodec.Header, syncIdentifier: String?, app: AppOrdinal, recordOffset: UInt64,
                      position: UInt32) -> UInt32 {
        precondition(slots.count < Int(UInt32.max), "a slot number fits 32 bits")
        let slot = UInt32(slots.count)
        let code = Int(h.typeCode)
        precondition(code < Self.typeCodeLimit, "type codes are below the limit (decoder)")
        if let previous = slots.last?.recordOffset {
            precondition(position == 0 ? recordOffset > previous : recordOffset == previous,
                         "a record's samples take consecutive slots, records in log order (SampleIndex.recordsConsecutive)")
        } else {
            precondition(position == 0, "a record's samples take consecutive slots (SampleIndex.recordStartsShape)")
        }
        let appField = min(app, Slot.appOverflow)
        if appField == Slot.appOverflow { appOverflows[slot] = app }
        let added = Slot(start: h.start, end: h.end, recordOffset: recordOffset, typeCode: h.typeCode,
                         state: h.memberOf == nil ? 0 : Self.memberBit, appField: appField)
        slots.append(added)
        uuids.append(h.uuid.uuid)
        if Int(slot) >> 6 >= recordStarts.count { recordStarts.append(0) }
        if position == 0 { recordStarts[Int(slot) >> 6] |= 1 << (UInt64(slot) & 63) }
        // The slots are read element by element and passed to the table in place (no
        // closure over a buffer of them, no copy of a timeline): replay adds every
        // sample here, and each of those retained and released a column.
        table.insert(h.uuid, slot: slot, uuids: uuids, base: uuidBase)
        let length = timelines[code].slots.count
        if timelines[code].sorted, length > 0 {
            let last = timelines[code].slots[length - 1]
            if !Self.before(slots[Int(last)], last, added, slot) { timelines[code].sorted = false }
        }
        let current = latestSlots[code]
        if current == Self.none || Self.before(slots[Int(current)], current, added, slot) { latestSlots[code] = slot }
        timelines[code].slots.append(slot)
        if let id = syncIdentifier, h.memberOf == nil {
            let value = SyncValue(identifier: id, version: h.syncVersion)
            syncOfSlot[slot] = value
            syncSlots[SyncKey(app: app, identifier: id)] = slot
        }
        return slot
    }

    /// Deletes a live slot (and, for a correlation, its members): marks it, leaves a
    /// tombstone, and reveals the previous latest sample of its type.
    mutating func delete(_ slot: UInt32, sequence: UInt64, actor: ActorID, replacedBy: UInt32? = nil) {
        precondition(isLive(slot), "rules admit deleting live objects only")
        markDeleted(slot, sequence: sequence, actor: actor, replacedBy: replacedBy)
        for member in memberSlots(of: slot) where isLive(member) {
            markDeleted(member, sequence: sequence, actor: actor, replacedBy: nil)
        }
    }

    private mutating func markDeleted(_ slot: UInt32, sequence: UInt64, actor: ActorID, replacedBy: UInt32?) {
        precondition(isLive(slot), "a slot is deleted at most once (SampleIndex.tombstonesNameDeletedSlots)")
        slots[Int(slot)].state |= Self.deletedBit
        tombstones.append(Tombstone(slot: slot, sequence: sequence, actor: actor, replacedBy: replacedBy))
        if let sync = syncOfSlot[slot] {
            let key = SyncKey(app: app(slot), identifier: sync.identifier)
            if syncSlots[key] == slot { syncSlots[key] = nil }
        }
        let code = slots[Int(slot)].typeCode
        if latestSlots[Int(code)] == slot {
            sortTimeline(code)
            var found = Self.none
            for candidate in timelines[Int(code)].slots.reversed() where isLive(candidate) {
                found = candidate
                break
            }
            latestSlots[Int(code)] = found
        }
    }

    /// The members of a correlation's slot (they follow it, saved by the same record).
    func memberSlots(of slot: UInt32) -> [UInt32] {
        var out: [UInt32] = []
        var member = Int(slot) + 1
        while member < slots.count, slots[member].state & Self.memberBit != 0,
              slots[member].recordOffset == slots[Int(slot)].recordOffset {
            out.append(UInt32(member))
            member += 1
        }
        return out
    }

    /// The live slot holding an app's sync identifier.
    func syncSlot(app: AppOrdinal, identifier: String) -> UInt32? {
        syncSlots[SyncKey(app: app, identifier: identifier)]
    }

    func syncValue(_ slot: UInt32) -> SyncValue? { syncOfSlot[slot] }

    /// The sync version of the live sample holding an app's sync identifier, if any.
    package func liveSyncVersion(app: AppOrdinal, identifier: String) -> Int64? {
        syncSlot(app: app, identifier: identifier).flatMap { syncOfSlot[$0]?.version }
    }

    // MARK: Digest

    /// Feeds the projection into a digest in slot order (deterministic).
    func feed(_ d: inout DigestWriter) {
        d.section("samples", count: slots.count)
        // Each slot as `entry(_:)` reads it, in one pass: the position from the last
        // record start passed, the sync identities walked in slot order (a lookup per
        // slot cost a hash), the slots and starts as buffers (a mapped column's blocks
        // all checked first: the same values its subscript gives).
        let syncs = syncOfSlot.sorted { $0.key < $1.key }
        var nextSync = 0
        var recordStart = -1
        recordStarts.withUnsafeBufferPointer { starts in
            slots.withUnsafeBufferPointer { all in
                for (i, s) in all.enumerated() {
                    precondition(i >> 6 < starts.count, "a record-start bit per slot")
                    if starts[i >> 6] & (1 << (UInt64(i) & 63)) != 0 { recordStart = i }
                    d.u64(s.recordOffset)
                    // No start at or before the slot: `position` stops the process, as before.
                    d.u32(recordStart >= 0 ? UInt32(i - recordStart) : position(UInt32(i)))
                    d.f64(s.start)
                    d.f64(s.end)
                    d.u16(s.typeCode)
                    let field = s.appField
                    d.u32(field == Slot.appOverflow ? appOverflows[UInt32(i)] ?? UInt32.max : field)
                    d.u8(s.state)
                    while nextSync < syncs.count, syncs[nextSync].key < UInt32(i) { nextSync += 1 }
                    if nextSync < syncs.count, syncs[nextSync].key == UInt32(i) {
                        let sync = syncs[nextSync].value
                        d.u8(1)
                        d.string(sync.identifier)
                        d.i64(sync.version)
                    } else {
                        d.u8(0)
                    }
                }
            }
        }
        d.section("tombstones", count: tombstones.count)
        for t in tombstones {
            d.u32(t.slot)
            d.u64(t.sequence)
            d.u64(t.actor.encoded)
            d.u32(t.replacedBy.map { $0 + 1 } ?? 0)
        }
        let codes = latestSlots.indices.filter { latestSlots[$0] != Self.none }
        d.section("latest", count: codes.count)
        for code in codes {
            d.u16(UInt16(code))
            d.u32(latestSlots[code])
        }
    }
}

// Snapshot access to the raw tables.
extension SampleIndex {
    struct Columns {
        var slots: Column<Slot>, recordStarts: Column<UInt64>, appOverflows: [UInt32: UInt32], table: UUIDTable
        var timelines: [UInt16: Timeline], latest: [UInt16: UInt32], tombstones: [Tombstone]
        var syncOfSlot: [UInt32: SyncValue]
        /// The UUIDs held in memory, of slots `uuidBase...` (never in a snapshot: a
        /// restored index holds none, `uuidBase` is its slot count).
        var uuids: Column<uuid_t> = [], uuidBase: Int? = nil
    }

    var columns: Columns {
        var timelineMap: [UInt16: Timeline] = [:]
        var latestMap: [UInt16: UInt32] = [:]
        for code in timelines.indices where !timelines[code].slots.isEmpty { timelineMap[UInt16(code)] = timelines[code] }
        for code in latestSlots.indices where latestSlots[code] != Self.none { latestMap[UInt16(code)] = latestSlots[code] }
        return Columns(slots: slots, recordStarts: recordStarts, appOverflows: appOverflows, table: table, timelines: timelineMap,
                       latest: latestMap, tombstones: tombstones, syncOfSlot: syncOfSlot, uuids: uuids, uuidBase: uuidBase)
    }

    init(columns c: Columns) {
        slots = c.slots
        recordStarts = c.recordStarts
        appOverflows = c.appOverflows
        table = c.table
        uuids = c.uuidBase == nil ? [] : c.uuids
        uuidBase = c.uuidBase ?? c.slots.count
        for (code, t) in c.timelines where Int(code) < Self.typeCodeLimit { timelines[Int(code)] = t }
        for (code, slot) in c.latest where Int(code) < Self.typeCodeLimit { latestSlots[Int(code)] = slot }
        tombstones = c.tombstones
        syncOfSlot = c.syncOfSlot
        for (slot, value) in c.syncOfSlot where slots[Int(slot)].state & Self.deletedBit == 0 {
            syncSlots[SyncKey(app: app(slot), identifier: value.identifier)] = slot
        }
    }
}

/// The sort keys of a timeline being sorted on two threads (each sorts its own half).
private struct SortHalves: @unchecked Sendable {
    let keys: UnsafeMutableBufferPointer<SampleIndex.SortKey>
}
