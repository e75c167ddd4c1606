import Foundation
import HealthModel
import LedgerLog

/// The order of a query's results: total, so every order is deterministic and
/// descending is exactly ascending reversed.
///
/// Keys, compared in turn: the sort descriptors; then whichever of start and end
/// date they did not name (start before end); then the **slot number** — log
/// order: the saving record's place in the log, then the sample's position in its
/// record. The added keys take the direction of the last descriptor (ascending
/// when there is none). So `[start ↓]` is (start ↓, end ↓, slot ↓), `[end ↑]` is
/// (end ↑, start ↑, slot ↑) and `[duration ↓]` is (duration ↓, start ↓, end ↓,
/// slot ↓); three samples with equal start and end come in the order they were
/// saved, or its reverse. A workout key's missing value is smallest
/// (`SampleSortKey`).
package struct ResultOrder: Sendable, Hashable {
    struct Key: Sendable, Hashable {
        let field: SampleSortKey
        let ascending: Bool
        var byEnd: Bool { field == .endDate }
    }
    let keys: [Key]
    let slotAscending: Bool

    package init(_ sort: [SampleSortDescriptor]) {
        var keys: [Key] = []
        for d in sort where !keys.contains(where: { $0.field == d.key }) {
            keys.append(Key(field: d.key, ascending: d.ascending))
        }
        let direction = keys.last?.ascending ?? true
        if !keys.contains(where: { $0.field == .startDate }) { keys.append(Key(field: .startDate, ascending: direction)) }
        if !keys.contains(where: { $0.field == .endDate }) { keys.append(Key(field: .endDate, ascending: direction)) }
        self.keys = keys
        slotAscending = direction
    }

    /// The workout keys, in order (empty: the index alone orders the answer).
    var workoutKeys: [SampleSortKey] { keys.map(\.field).filter(\.isWorkoutField) }

    /// When the order is the timeline's (start, end, slot) in one direction: that direction.
    var timelineDirection: Bool? {
        guard workoutKeys.isEmpty else { return nil }
        let d = keys[0].ascending
        return !keys[0].byEnd && keys[1].ascending == d ? d : nil
    }

    /// Whether slot `a` comes before slot `b`. `values(slot)` gives a slot's workout
    /// values in `workoutKeys` order; without it the workout keys are skipped.
    @inline(__always)
    func before<Slots: SlotSource>(_ a: UInt32, _ b: UInt32, _ s: Slots, values: ((UInt32) -> [Double?])? = nil) -> Bool {
        let x = s.slot(a), y = s.slot(b)
        var w = 0
        var va: [Double?] = [], vb: [Double?] = []
        for k in keys {
            switch k.field {
            case .startDate, .endDate:
                let (p, q) = k.byEnd ? (x.end, y.end) : (x.start, y.start)
                if p != q { return k.ascending ? p < q : p > q }
            default:
                guard let values else { continue }
                if w == 0 { va = values(a); vb = values(b) }
                let p = va[w], q = vb[w]
                w += 1
                if p == q { continue }
                let less: Bool  // nil is smallest
                switch (p, q) {
                case (nil, _): less = true
                case (_, nil): less = false
                case (let p?, let q?): less = p < q
                }
                return k.ascending ? less : !less
            }
        }
        return slotAscending ? a < b : a > b
    }
}

extension SampleIndex {
    /// Whether a slot is visible under a visibility (deleted or not).
    func visible(_ slot: UInt32, to visibility: QueryVisibility) -> Bool {
        switch visibility {
        case .everything: return true
        default: return visible(slot, app: app(slot), to: visibility)
        }
    }

    /// `visible(slot, to:)` for a slot whose app (`app(slot)`) is already read.
    @inline(__always)
    func visible(_ slot: UInt32, app slotApp: UInt32, to visibility: QueryVisibility) -> Bool {
        switch visibility {
        case .everything: return true
        case .ownSamplesOnly(let app): return slotApp == app
        case .correlationMembers(let app, let readable):
            if slotApp == app { return true }
            return memberSlots(of: slot).contains { readable.contains(slots[Int($0)].typeCode) }
        }
    }
}

/// One page of a paged read: the samples and, when more match, the cursor to
/// resume after (the UUID of the page's last sample).
public struct SamplePage: Sendable, Hashable {
    public let samples: [Sample]
    /// Pass as `after` to read the next page; `nil` on the last page.
    public let next: UUID?

    public init(samples: [Sample], next: UUID?) {
        self.samples = samples
        self.next = next
    }
}

/// The streaming read engine: every sample read (`query`, `latest`, the stores,
/// the profile) goes through it.
///
/// 1. **Select** from the sample index only: the type's timeline (slots in
///    (start, end, slot) order) walked forwards or backwards, bounded by binary
///    search on the date predicate's start and end, skipping deleted, invisible
///    and other-source slots. An order other than the timeline's (an end-date sort)
///    sorts the matching slots first (4 bytes each).
/// 2. **Fetch** the next `chunkSize` selected slots, grouped by record, each record
///    decoded once and only at the positions wanted (`RecordReads`).
/// 3. **Emit** them in order to the caller as they are decoded: memory is bounded
///    by the chunk, not by the answer.
///
/// A walk over a whole quantity type for a writer of lines (`plain`, start-date order,
/// no limit) goes in windows instead (`walkInWindows` in `run`): a window's slots read
/// in slot order, its samples gathered in log order, then handed out in the query's
/// order; its memory is a window's (`defaultWindowBytes`), with no record payload held
/// and no block of a mapped slot column kept.
///
/// Paging: `after` names the last sample of the previous page (any sample of the
/// type the caller may see, even one deleted since); the read resumes strictly after
/// it in the order. Slots are never reused and a sample's dates never change, so a
/// page sequence sees every sample that existed when it started exactly once, even
/// while a writer appends; samples added meanwhile show up iff they sort after the
/// cursor.
package struct SampleReader {
    let reads: RecordReads
    /// Slots fetched per step.
    package let chunkSize: Int
    /// The memory a walk in windows may use for one window (0: no windows).
    let windowBytes: Int
    /// The places of a window over slots that lie close together (`localWindow`).
    let localPlaces: Int

    /// What a walk in windows uses by default: 128 MiB a window (about 900,000 step
    /// samples).
    static let defaultWindowBytes = 128 << 20
    /// The bytes of a sample the first window is sized for (later windows, from the
    /// bytes per sample the previous one took): a step sample takes about 52.
    static let firstWindowSampleBytes = 64
    /// The most windows a walk takes: each reads the slot column and the records it
    /// needs again, so a larger answer takes larger windows, not more of them (at 10M
    /// step samples, 8 windows of 1.25M; at 100M, of 12.5M).
    static let windowsMost = 8
    /// What the walk in chunks holds at most per slot of the ledger: its slot's 40
    /// bytes, kept from a mapped snapshot, and about 50 of its record's payload.
    static let chunkWalkBytesPerSlot = 90
    /// The places of a window over slots that lie close together (samples saved in
    /// about the query's order): it reads nothing twice, so it need not be larger.
    static let localWindow = 1 << 16
    /// Bytes a window uses per place besides the sample's own bytes: its sort key and
    /// the sort's working space (kept from window to window: fresh pages cost more than
    /// the memory saved), its fetch, identity and span.
    static let windowEntryBytes = 8 + 8 + MemoryLayout<RecordReads.Window.Fetch>.stride
        + MemoryLayout<RecordReads.Window.Identity>.stride + MemoryLayout<RecordReads.Window.Span>.stride

    /// A reader of the ledger in `fs` (opens the log read-only).
    package init(_ fs: any LogFileSystem, chunkSize: Int = 4096) throws {
        try self.init(fs, chunkSize: chunkSize, tableBudget: 16 << 20)
    }

    /// `tableBudget`: cap on the sample-table entries kept, `payloadBudget` on the bytes
    /// of record payloads held (`RecordReads`), `windowBytes` on a window's memory (0:
    /// never walk in windows), `localPlaces` the places of a window over close slots;
    /// tests make them tiny.
    init(_ fs: any LogFileSystem, chunkSize: Int, tableBudget: Int, payloadBudget: Int = RecordReads.defaultPayloadBudget,
         windowBytes: Int = SampleReader.defaultWindowBytes, localPlaces: Int = SampleReader.localWindow) throws {
        reads = try RecordReads(fs: fs, tableBudget: tableBudget, payloadBudget: payloadBudget)
        self.chunkSize = max(1, chunkSize)
        self.windowBytes = max(0, windowBytes)
        self.localPlaces = max(1, localPlaces)
    }

    /// Streams the samples of `query` as `visibility` allows, in the query's order
    /// (`ResultOrder`), to `body`, starting after the sample `after`. Returns the
    /// cursor of the next page when the query's limit cut the answer short, else nil.
    ///
    /// `plain`, when given, takes the samples of the common shape (`PlainQuantityBytes`)
    /// in place of `body`, in the same order — for writers that print them straight
    /// from their bytes. A filter (`--where`) is decided on those bytes where they
    /// decide it (`SamplePredicate.matches(_: PlainQuantityBytes)`), else on the
    /// decoded sample.
    @discardableResult
    package func forEach(_ query: SampleQuery, visibility: QueryVisibility, after: UUID? = nil, in state: inout LedgerState,
                        plain: ((consuming PlainQuantityBytes) throws -> Void)? = nil,
                        _ body: (Sample) throws -> Void) throws -> UUID? {
        let sourceOrdinals: Set<UInt32>? = query.sources.map { Set($0.compactMap { state.registry.ordinal(of: $0) }) }
        // A filter only user-entered quantity samples can match: the statistics flags
        // rule out the others from the index, before their samples are read.
        var userEnteredOnly = false
        if case .quantity = query.type, query.filter?.impliesUserEntered == true { userEnteredOnly = true }
        return try run(typeCode: query.type.code, predicate: query.predicate, order: ResultOrder(query.sort),
                       limit: query.limit, after: after, visibility: visibility, sources: sourceOrdinals,
                       filter: query.filter.map { p in { p.matches($0) } }, userEnteredOnly: userEnteredOnly, in: &state,
                       plain: plain.map { ($0, query.filter.map { p in { p.matches($0) } } ?? { _ in true }) }, body)
    }

    /// HKCorrelationQuery: streams the correlations of `query` as `visibility` allows
    /// (an app: through the member types it may read, holding only those members), in
    /// the query's order, keeping those whose member predicates match
    /// (`CorrelationQuery.matches`). Returns the next page's cursor as `forEach` does.
    @discardableResult
    package func forEach(_ query: CorrelationQuery, visibility: QueryVisibility, after: UUID? = nil,
                        in state: inout LedgerState, _ body: (Sample) throws -> Void) throws -> UUID? {
        let base = query.sampleQuery
        let sourceOrdinals: Set<UInt32>? = base.sources.map { Set($0.compactMap { state.registry.ordinal(of: $0) }) }
        return try run(typeCode: base.type.code, predicate: base.predicate, order: ResultOrder(base.sort), limit: base.limit,
                       after: after, visibility: visibility, sources: sourceOrdinals, filter: { query.matches($0) },
                       in: &state, body)
    }

    /// One page of a correlation query.
    package func page(_ query: CorrelationQuery, visibility: QueryVisibility, after: UUID? = nil,
                     in state: inout LedgerState) throws -> SamplePage {
        var out: [Sample] = []
        let next = try forEach(query, visibility: visibility, after: after, in: &state) { out.append($0) }
        return SamplePage(samples: out, next: next)
    }

    /// One page: at most `query.limit` samples (0: all) after `after`.
    package func page(_ query: SampleQuery, visibility: QueryVisibility, after: UUID? = nil,
                     in state: inout LedgerState) throws -> SamplePage {
        var out: [Sample] = []
        let next = try forEach(query, visibility: visibility, after: after, in: &state) { out.append($0) }
        return SamplePage(samples: out, next: next)
    }

    /// Records kept raw (`UnrecognizedSample`: a type this version does not know, or a
    /// record HealthKit would refuse, with the reason), for the owner only: those
    /// `matching` admits (by identifier as written, say), ordered and limited as
    /// `query` says (its type is ignored).
    @discardableResult
    package func forEachRaw(matching: @escaping (UnrecognizedSample) -> Bool, _ query: SampleQuery, after: UUID? = nil,
                           in state: inout LedgerState, _ body: (Sample) throws -> Void) throws -> UUID? {
        try run(typeCode: 0, predicate: query.predicate, order: ResultOrder(query.sort), limit: query.limit, after: after,
                visibility: .everything, sources: nil, filter: { sample in
                    guard case .unrecognized(let u) = sample else { return false }
                    return matching(u)
                }, in: &state, body)
    }

    /// `userEnteredOnly`: `filter` matches only samples whose statistics flag is set
    /// (`SamplePredicate.impliesUserEntered`, on a quantity type).
    private func run(typeCode: UInt16, predicate: DatePredicate?, order: ResultOrder, limit rawLimit: Int, after: UUID?,
                     visibility: QueryVisibility, sources: Set<UInt32>?, filter: ((Sample) -> Bool)?,
                     userEnteredOnly: Bool = false, in state: inout LedgerState,
                     plain: (write: (consuming PlainQuantityBytes) throws -> Void, admit: (PlainQuantityBytes) -> Bool?)? = nil,
                     _ body: (Sample) throws -> Void) throws -> UUID? {
        let timeline = state.samples.orderedSlots(typeCode: typeCode)
        let index = state.samples
        let registry = state.registry
        var cursorSlot: UInt32?
        if let after {
            // S8: a lookup in a damaged block of a mapped snapshot read zeros — its "no
            // such sample" (or a slot of zeros) is no answer.
            let found = try state.lookUp(after)
            guard let slot = found else { throw QueryError.invalidCursor(after.uuidString) }
            let e = index.slots[Int(slot)]
            if e.typeCode != typeCode { throw QueryError.invalidCursor(after.uuidString) }
            if !index.visible(slot, to: visibility) { throw QueryError.invalidCursor(after.uuidString) }
            cursorSlot = slot
        }
        let limit = rawLimit > 0 ? rawLimit : Int.max
        let sourceList = (0...registry.apps.count).map { registry.source(AppOrdinal($0)) }
        let activities = typeCode == ObjectType.workout.code ? state.workoutActivities : [:]
        // One flag per slot (invariant); a slot past the column's end is not ruled out.
        let userEntered: Column<UInt8>? = userEnteredOnly ? state.statistics.userEntered : nil
        // The selection, over the slots as a buffer (owned) or element by element (mapped:
        // only the blocks of the slots it reads are copied and checked, S8).
        func select<Slots: SlotSource>(_ s: Slots) throws -> UUID? {
            /// `position`: the slot's in its record, when the caller knows it.
            func want(_ slot: UInt32, _ e: SampleIndex.Slot, _ app: UInt32, position: UInt32? = nil) -> RecordReads.Want {
                RecordReads.Want(slot: slot, recordOffset: e.recordOffset, position: position ?? index.position(slot), start: e.start,
                                 end: e.end, app: app)
            }
            func wanted(_ slot: UInt32) -> RecordReads.Want {
                let e = s.slot(slot)
                return want(slot, e, index.app(slot, e))
            }
            /// `wanted(slot)` when `admits(slot)`, else nil: the slot read once.
            func wantedIfAdmitted(_ slot: UInt32) -> RecordReads.Want? {
                // The one-byte flag first: most slots a flag filter reads are ruled out
                // without reading their (much larger) index entry.
                if let userEntered, Int(slot) < userEntered.count, userEntered[Int(slot)] == 0 { return nil }
                let e = s.slot(slot)
                let app = index.app(slot, e)
                return admits(slot, e, app) ? want(slot, e, app) : nil
            }
            func sourceOf(_ app: AppOrdinal) -> Source? { app < UInt32(sourceList.count) ? sourceList[Int(app)] : nil }
            func fetch(_ wants: [RecordReads.Want]) throws -> [Sample] {
                try state.checkIntact()  // S8: never read the log at offsets a damaged block gave
                return try reads.samples(wants, source: sourceOf)
            }
            /// The sample as the caller may see it: others' correlations show exactly the
            /// members the app may read; a workout comes with its activities.
            func present(_ w: RecordReads.Want, _ found: Sample) throws -> Sample {
                if case .workout(let workout) = found, let segments = activities[workout.uuid] {
                    return .workout(workout.withActivities(segments))
                }
                if case .correlationMembers(let app, let readable) = visibility, w.app != app, case .correlation(let c) = found {
                    return .correlation(try Correlation(type: c.type, objects: c.objects.filter {
                        readable.contains(ObjectType.quantity($0.type).code)
                    }, common: c.common))
                }
                return found
            }
            func admits(_ slot: UInt32) -> Bool {
                if let userEntered, Int(slot) < userEntered.count, userEntered[Int(slot)] == 0 { return false }
                let e = s.slot(slot)
                return admits(slot, e, index.app(slot, e))
            }
            @inline(__always)
            func admits(_ slot: UInt32, _ e: SampleIndex.Slot, _ app: UInt32) -> Bool {
                if e.state & SampleIndex.deletedBit != 0 { return false }
                if !index.visible(slot, app: app, to: visibility) { return false }
                if let sources, !sources.contains(app) { return false }
                if let userEntered, Int(slot) < userEntered.count, userEntered[Int(slot)] == 0 { return false }
                return predicate?.matches(start: e.start, end: e.end) ?? true
            }
            // Timeline positions whose start can match: start < predicate end; with a strict
            // start date also start ≥ predicate start.
            func lowerBound(_ below: (UInt32) -> Bool) -> Int {
                var low = 0, high = timeline.count
                while low < high {
                    let mid = (low + high) / 2
                    if below(timeline[mid]) { low = mid + 1 } else { high = mid }
                }
                return low
            }
            var lo = 0, hi = timeline.count
            if let end = predicate?.end?.timeIntervalSinceReferenceDate { hi = lowerBound { s.slot($0).start < end } }
            if predicate?.strictStartDate == true, let start = predicate?.start?.timeIntervalSinceReferenceDate {
                lo = min(hi, lowerBound { s.slot($0).start < start })
            }
            var list: Column<UInt32>
            var i: Int, stop: Int, step: Int
            if let ascending = order.timelineDirection {
                list = timeline
                let timelineOrder = ResultOrder([])
                if ascending {
                    i = lo
                    if let c = cursorSlot { i = max(lo, lowerBound { !timelineOrder.before(c, $0, s) }) }
                    stop = max(i, hi)
                    step = 1
                } else {
                    i = hi - 1
                    if let c = cursorSlot { i = min(hi, lowerBound { timelineOrder.before($0, c, s) }) - 1 }
                    stop = min(i, lo - 1)
                    step = -1
                }
            } else {
                list = Column(timeline[lo..<hi].filter(admits))
                var values: [UInt32: [Double?]] = [:]
                let workoutKeys = order.workoutKeys
                if !workoutKeys.isEmpty {
                    // Workout keys are not in the index: read the selected samples once, in
                    // chunks, keeping only the ones the filter admits and their sort values.
                    var kept: [UInt32] = []
                    var from = 0
                    while from < list.count {
                        let chunk = list[from..<min(list.count, from + chunkSize)].map { wanted($0) }
                        from += chunk.count
                        for (w, found) in zip(chunk, try fetch(chunk)) {
                            let sample = try present(w, found)
                            if let filter, !filter(sample) { continue }
                            kept.append(w.slot)
                            values[w.slot] = workoutKeys.map { $0.workoutValue(sample) }
                        }
                    }
                    list = Column(kept)
                    if let c = cursorSlot, values[c] == nil {
                        let w = wanted(c)
                        values[c] = workoutKeys.map { k in (try? fetch([w]).first.map { k.workoutValue($0) }) ?? nil }
                    }
                }
                let valuesOf: ((UInt32) -> [Double?])? = workoutKeys.isEmpty ? nil : { values[$0] ?? [] }
                list.withUnsafeMutableBufferPointer { $0.sort { order.before($0, $1, s, values: valuesOf) } }
                i = 0
                if let c = cursorSlot {
                    var low = 0, high = list.count
                    while low < high {
                        let mid = (low + high) / 2
                        if !order.before(c, list[mid], s, values: valuesOf) { low = mid + 1 } else { high = mid }
                    }
                    i = low
                }
                stop = list.count
                step = 1
            }
            /// A walk over a whole timeline for a writer of lines, in windows: the next
            /// timeline entries; their slots read in slot order, each block of a mapped
            /// slot column once a window with no shared copy kept (`ColumnBlockReader`);
            /// their samples gathered from the log in log order (`RecordReads.gather`);
            /// then handed out in the timeline's order. Memory is a window's, whatever
            /// the answer's size and the order the samples were saved in: no record
            /// payload held, no slot block kept. (The walk in chunks below holds every
            /// record it has started and keeps the slot blocks it reads: for paging and
            /// for other orders.)
            ///
            /// False, having read only timeline entries, when one window would take the
            /// whole walk over slots far apart and hold at least what the walk in chunks
            /// holds at most (`chunkWalkBytesPerSlot`): the walk in chunks is then faster
            /// (no sort, no copy into an arena: 1M samples saved shuffled, 0.73 s and 131
            /// MB against 0.81 s and 176 MB). A filtered walk's window holds its matches
            /// alone (`--where` of a tenth of 1M: 0.16–0.17 s and 65 MB in a window,
            /// 0.22–0.23 s and 132 MB in chunks).
            func walkInWindows(_ plain: (write: (consuming PlainQuantityBytes) throws -> Void, admit: (PlainQuantityBytes) -> Bool?)) throws -> Bool {
                let timelineReader = ColumnBlockReader(list)
                let slotReader = ColumnBlockReader(index.slots)
                var keys: [UInt64] = [], spare: [UInt64] = []
                var window = RecordReads.Window()
                var bytesPerPlace = Self.windowEntryBytes + Self.firstWindowSampleBytes
                let candidates = abs(stop - i), start = i
                var first = true
                while i != stop {
                    // The window's places: the next timeline entries, keyed (slot, place); the
                    // rest in this window when they would make a window of less than half.
                    var size = max(windowBytes / bytesPerPlace, (candidates + Self.windowsMost - 1) / Self.windowsMost, 1)
                    if abs(stop - i) < size + size / 2 { size = abs(stop - i) }
                    func take(upTo size: Int) {
                        while keys.count < size && i != stop {
                            let slot = timelineReader[i]
                            i += step
                            // The one-byte flag first, as in the walk in chunks.
                            if let userEntered, Int(slot) < userEntered.count, userEntered[Int(slot)] == 0 { continue }
                            keys.append(UInt64(slot) << 32 | UInt64(keys.count))
                        }
                    }
                    // A small window first: samples saved in about the query's order (an
                    // import, a day's saves) lie in a run of slots a few times the window's
                    // length, and then a small window reads nothing twice. Only when its
                    // slots lie farther apart (or over half of all slots) does it grow to
                    // the budget's size.
                    keys.removeAll(keepingCapacity: true)
                    let small = min(size, localPlaces)
                    keys.reserveCapacity(small)
                    take(upTo: small)
                    RadixSort.sortByUpperHalf(&keys, scratch: &spare)
                    let spread = Int((keys.last ?? 0) >> 32) - Int((keys.first ?? 0) >> 32)
                    let scattered = spread >= 4 * small || spread >= index.slots.count / 2
                    if keys.count == small && size > small && scattered {
                        keys.reserveCapacity(size)
                        take(upTo: size)
                        RadixSort.sortByUpperHalf(&keys, scratch: &spare)
                    }
                    if first && scattered && i == stop && keys.count * bytesPerPlace >= index.slots.count * Self.chunkWalkBytesPerSlot {
                        i = start
                        return false
                    }
                    first = false
                    try state.checkIntact()  // S8: slot numbers from a damaged timeline block are zeros
                    window.reset(places: keys.count)
                    // In slot order: each sample's position from the record start found for
                    // the slot before it (`recordFirst`), not searched back from each slot.
                    var previous: (slot: UInt32, first: UInt32)?
                    for key in keys {
                        let slot = UInt32(truncatingIfNeeded: key >> 32)
                        let e = slotReader[Int(slot)]
                        let app = index.app(slot, e)
                        guard admits(slot, e, app) else { continue }
                        let first = previous.map { index.recordFirst(of: slot, after: $0.slot, whoseFirstIs: $0.first) }
                            ?? slot - index.position(slot)
                        previous = (slot, first)
                        window.want(want(slot, e, app, position: slot - first), at: Int(truncatingIfNeeded: key & 0xFFFF_FFFF))
                    }
                    try state.checkIntact()  // S8: never read the log at offsets a damaged block gave
                    // Sample tables are kept for later windows where slots lie far apart:
                    // close ones' records are not met again (but at a window's edge, read
                    // whole once more), and their tables were 4 bytes a sample for nothing.
                    try reads.gather(&window, keepTables: scattered)
                    let gathered = window.fetches.count
                    try reads.visit(window: window, typeCode: typeCode, source: sourceOf, admit: plain.admit, plain: { bytes in
                        try plain.write(consume bytes)
                        return true
                    }, decoded: { w, found in
                        let sample = try present(w, found)
                        if let filter, !filter(sample) { return true }
                        try body(sample)
                        return true
                    })
                    // The next window: as many places as the budget holds at this one's
                    // bytes per sample.
                    if gathered > 0 {
                        bytesPerPlace = Self.windowEntryBytes + (window.arenaBytes + gathered - 1) / gathered
                    }
                }
                try state.checkIntact()
                return true
            }
            // Windows for the common shape of a quantity type's samples: a sample of
            // another kind may be far larger (an electrocardiogram's voltages), and a
            // window is sized before its samples are read.
            if let plain, case .quantity? = ObjectType(code: typeCode), order.timelineDirection != nil, limit == Int.max,
               windowBytes > 0 {
                if try walkInWindows(plain) { return nil }
            }
            var emitted = 0
            var last: UInt32?
            var wants: [RecordReads.Want] = []
            while true {
                let remaining = limit - emitted
                if remaining == 0 && filter == nil {
                    // Is there one more? Then the limit cut the answer: hand out a cursor.
                    while i != stop {
                        defer { i += step }
                        if admits(list[i]) { return try last.map { try index.uuid($0) } }
                    }
                    return nil
                }
                wants.removeAll(keepingCapacity: true)
                let want = filter == nil ? min(chunkSize, remaining) : chunkSize
                while wants.count < want && i != stop {
                    let slot = list[i]
                    // The slots 16 ahead in the walk: a timeline visits them out of log
                    // order, each a cache miss in a column of millions otherwise.
                    let ahead = i + 16 * step
                    if step > 0 ? ahead < stop : ahead > stop { s.prefetch(list[ahead]) }
                    i += step
                    if let w = wantedIfAdmitted(slot) { wants.append(w) }
                }
                if wants.isEmpty {
                    try state.checkIntact()  // S8: "nothing more" read from a damaged block is no answer
                    return nil
                }
                // A mapped snapshot's damaged block selects from zeros: nothing is read or
                // emitted from it (S8).
                try state.checkIntact()
                if let plain {
                    // As the loop below, with the samples of the common shape read in place.
                    var cut = false
                    try reads.visit(wants, typeCode: typeCode, source: sourceOf, admit: plain.admit, plain: { i, bytes in
                        if emitted == limit { cut = true; return false }
                        try plain.write(consume bytes)
                        emitted += 1
                        last = wants[i].slot
                        return true
                    }, decoded: { i, found in
                        let sample = try present(wants[i], found)
                        if let filter, !filter(sample) { return true }
                        if emitted == limit { cut = true; return false }
                        try body(sample)
                        emitted += 1
                        last = wants[i].slot
                        return true
                    })
                    if cut { return try last.map { try index.uuid($0) } }
                    continue
                }
                for (w, found) in zip(wants, try fetch(wants)) {
                    let sample = try present(w, found)
                    if let filter, !filter(sample) { continue }
                    if emitted == limit { return try last.map { try index.uuid($0) } }
                    try body(sample)
                    emitted += 1
                    last = w.slot
                }
            }
        }
        if index.slots.isMapped { return try select(index.slots) }
        return try index.slots.withUnsafeBufferPointer { try select($0) }
    }
}
