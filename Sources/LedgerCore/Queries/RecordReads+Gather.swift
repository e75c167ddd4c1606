import CLedgerAccel
import Foundation
import HealthModel
import LedgerLog

/// A query's window (`SampleReader`): the samples it hands out are gathered from the
/// log in log order, record by record, into one arena, and handed out from there in
/// the query's order. Nothing is held beyond the window: a query over samples saved
/// in another order than its own (a type's samples by start date, saved shuffled)
/// reads each record once per window instead of holding every record it has started.
extension RecordReads {
    /// A window's samples: what to fetch, in log order, and what was fetched, by place
    /// in the query's order (`gather`, `visit(window:)`).
    struct Window {
        /// One sample to fetch: its record, its position there, its place in the window.
        struct Fetch {
            var recordOffset: UInt64
            var position: UInt32
            var place: UInt32
        }

        /// Who a sample of the window is, by place: what the index says of it.
        struct Identity {
            var start: Double
            var end: Double
            var slot: UInt32
            var app: UInt32
        }

        /// Where one sample's bytes are in the arena.
        struct Span {
            /// The top-level sample's bytes are `arena[chunk][from..<from + length]`; a
            /// length of 0: no sample at this place (the index ruled it out).
            var chunk: UInt32
            var from: UInt32
            var length: UInt32
            /// Where they start in their record's payload (error offsets).
            var payloadOffset: UInt32
            /// The saving record's `samplesSaved` version.
            var version: UInt16
            /// The correlation member wanted, or −1: the top-level sample itself.
            var member: Int32

            var range: Range<Int> { Int(from)..<Int(from) + Int(length) }
            static let none = Span(chunk: 0, from: 0, length: 0, payloadOffset: 0, version: 0, member: -1)
        }

        /// The samples to fetch, in log order (ascending record offset, then position).
        var fetches: [Fetch] = []
        /// By place: the sample's identity (meaningful where its span is not `none`).
        var identities: [Identity] = []
        /// By place: where its bytes are, once gathered.
        var spans: [Span] = []
        /// The gathered top-level samples' bytes, each with its length prefix, in chunks
        /// of about `chunkBytes`. Chunks, not one array: every sample handed on holds its
        /// array (a reference counted on the reading thread and released on the writer's),
        /// and a million samples sharing one count had the two cores trade its cache line
        /// for every sample.
        var arena: [[UInt8]] = []
        /// The bytes gathered, in all chunks.
        private(set) var arenaBytes = 0
        static let chunkBytes = 256 << 10

        /// Appends `bytes` to the last chunk, or to a new one when it would pass
        /// `chunkBytes`: where they are.
        mutating func append(_ bytes: UnsafeRawBufferPointer) -> (chunk: UInt32, from: UInt32) {
            if arena.isEmpty || (arena[arena.count - 1].count + bytes.count > Self.chunkBytes && !arena[arena.count - 1].isEmpty) {
                if spareChunks.isEmpty {
                    arena.append([])
                    arena[arena.count - 1].reserveCapacity(max(Self.chunkBytes, bytes.count))
                } else {
                    arena.append(spareChunks.removeLast())
                }
            }
            let from = arena[arena.count - 1].count
            arena[arena.count - 1].append(contentsOf: bytes)
            arenaBytes += bytes.count
            return (UInt32(arena.count - 1), UInt32(from))
        }

        /// The last window's chunks, emptied: reused when no sample handed out still
        /// holds them (else emptying gave them fresh storage).
        private var spareChunks: [[UInt8]] = []

        /// Empties the window for `places` places, none of them wanted yet.
        mutating func reset(places: Int) {
            fetches.removeAll(keepingCapacity: true)
            fetches.reserveCapacity(places)
            identities.removeAll(keepingCapacity: true)
            identities.append(contentsOf: repeatElement(Identity(start: 0, end: 0, slot: 0, app: 0), count: places))
            spans.removeAll(keepingCapacity: true)
            spans.append(contentsOf: repeatElement(Span.none, count: places))
            while !arena.isEmpty {
                var chunk = arena.removeLast()  // moved out: unique unless a sample holds it
                chunk.removeAll(keepingCapacity: true)
                spareChunks.append(chunk)
            }
            arenaBytes = 0
        }

        /// Wants the sample `want` at `place` (calls come in log order).
        mutating func want(_ want: Want, at place: Int) {
            fetches.append(Fetch(recordOffset: want.recordOffset, position: want.position, place: UInt32(place)))
            identities[place] = Identity(start: want.start, end: want.end, slot: want.slot, app: want.app)
        }
    }

    /// Gathers the bytes of `window.fetches` into its arena and spans. Each record is
    /// read once: whole and checked (its CRC32C) the first time this reader meets it,
    /// its sample table noted; later, as `samples` reads bytes this reader has checked
    /// before, the span holding the wanted samples or each sample alone when they lie
    /// far apart. No payload is held. `keepTables`: whether the sample tables of the
    /// records read whole are kept for later windows (a window over close slots: its
    /// records are not met again, but at its edges).
    func gather(_ window: inout Window, keepTables: Bool = true) throws {
        windowsGathered += 1
        var i = 0
        let fetches = window.fetches
        while i < fetches.count {
            let offset = fetches[i].recordOffset
            var j = i + 1
            // A run of one record's fetches. (Were the offsets not ascending — a snapshot
            // forged with valid checksums — a record would be read once per run: slower,
            // never wrong, since each read is checked as any other.)
            while j < fetches.count, fetches[j].recordOffset == offset { j += 1 }
            try gather(fetches[i..<j], record: offset, keepTable: keepTables, into: &window)
            i = j
        }
    }

    private func gather(_ group: ArraySlice<Window.Fetch>, record offset: UInt64, keepTable: Bool, into w: inout Window) throws {
        let payloadBase = offset + UInt64(LogFormat.recordHeaderLength)
        if let table = tables[offset], let payload = table.payload {
            try payload.withUnsafeBytes { try copy(group, table: table, from: $0, bufferStart: 0, into: &w) }
            return
        }
        if let table = tables[offset], !table.sealed {
            // Checked by this reader before: read the span of the wanted samples, or each
            // alone (`readsOneSpan`, as `samples` does).
            var first = Int.max, last = -1, tops = 0, total = 0, previous = -1
            for fetch in group {
                let top = try locate(fetch, in: table, w).top
                first = min(first, top)
                last = max(last, top)
                if top != previous {
                    tops += 1
                    total += Int(table.starts[top + 1] - table.starts[top])
                    previous = top
                }
            }
            let from = Int(table.starts[first]), span = Int(table.starts[last + 1]) - from
            if Self.readsOneSpan(span: span, tops: tops, bytes: total) {
                try readExactly(count: span, at: payloadBase + UInt64(from))
                try scratch.withUnsafeBytes {
                    try copy(group, table: table, from: UnsafeRawBufferPointer(rebasing: $0[0..<span]), bufferStart: from, into: &w)
                }
            } else {
                for fetch in group {
                    let top = try locate(fetch, in: table, w).top
                    let start = Int(table.starts[top]), count = Int(table.starts[top + 1]) - start
                    try readExactly(count: count, at: payloadBase + UInt64(start))
                    try scratch.withUnsafeBytes {
                        try copy([fetch][...], table: table, from: UnsafeRawBufferPointer(rebasing: $0[0..<count]),
                                 bufferStart: start, into: &w)
                    }
                }
            }
            return
        }
        let (table, length) = try loadTable(at: offset, keep: keepTable)
        let header = LogFormat.recordHeaderLength
        try scratch.withUnsafeBytes {
            try copy(group, table: table, from: UnsafeRawBufferPointer(rebasing: $0[header..<header + length]), bufferStart: 0, into: &w)
        }
    }

    private func locate(_ fetch: Window.Fetch, in table: Table, _ w: borrowing Window) throws -> (top: Int, member: Int) {
        guard let at = table.locate(fetch.position) else {
            throw QueryError.indexDisagrees(slot: w.identities[Int(fetch.place)].slot, reason: "no position \(fetch.position) in its record")
        }
        return at
    }

    /// Copies each fetch's top-level sample from `buffer`, which holds its record's
    /// payload bytes from `bufferStart` on, into the arena; the members of one
    /// correlation fetched one after another share one copy.
    private func copy(_ group: ArraySlice<Window.Fetch>, table: Table, from buffer: UnsafeRawBufferPointer, bufferStart: Int,
                      into w: inout Window) throws {
        var previousTop = -1, previousSpan = Window.Span.none
        for fetch in group {
            let at = try locate(fetch, in: table, w)
            var span: Window.Span
            if at.top == previousTop {
                span = previousSpan
            } else {
                let from = Int(table.starts[at.top]), to = Int(table.starts[at.top + 1])
                // The table was made from this record's payload, and the buffer holds the
                // bytes of every top asked for.
                precondition(from >= bufferStart && to - bufferStart <= buffer.count, "a gathered sample lies in the bytes read")
                let stored = w.append(UnsafeRawBufferPointer(rebasing: buffer[(from - bufferStart)..<(to - bufferStart)]))
                span = Window.Span(chunk: stored.chunk, from: stored.from, length: UInt32(to - from), payloadOffset: UInt32(from),
                                   version: table.version, member: -1)
                previousTop = at.top
                previousSpan = span
            }
            span.member = Int32(at.member)
            w.spans[Int(fetch.place)] = span
        }
    }

    /// How often `visit(window:)` takes a fresh copy of the bundle identifier it hands on.
    static let bundleCopyEvery = 4096

    /// Hands out a gathered window's samples in place order, as `visit` does: the
    /// common shape read in place to `plain` when `admit` decides it, any other decoded
    /// to `decoded` (with its want). Places with no sample are passed over. Either
    /// returns false to stop.
    func visit(window w: Window, typeCode: UInt16, source: (AppOrdinal) -> Source?,
               admit: (PlainQuantityBytes) -> Bool?, plain: (consuming PlainQuantityBytes) throws -> Bool,
               decoded: (Want, Sample) throws -> Bool) throws {
        var last: DecodedTop?
        var bundleApp: UInt32?
        var bundle: String?
        var handedOut = 0
        // Where each arena chunk's bytes start, for the prefetches below only (a hint
        // that never reads through the address): taking a chunk's buffer for every
        // prefetch retained the chunk, whose count the writer's thread is counting down
        // for the samples handed to it — a cache line the two cores traded each time
        // (7 % of the reading thread at 10M samples). The chunks do not change while the
        // window is handed out.
        let chunkStarts = w.arena.map { chunk in UInt(bitPattern: chunk.withUnsafeBufferPointer { $0.baseAddress }) }
        for place in w.spans.indices {
            // The arena is read in the query's order, not the order it was filled in:
            // ask for a sample's first bytes a few samples ahead.
            if place + Self.lookahead < w.spans.count {
                let ahead = w.spans[place + Self.lookahead]
                if ahead.length > 0, let start = UnsafeRawPointer(bitPattern: chunkStarts[Int(ahead.chunk)]) {
                    hl_prefetch(start + Int(ahead.from))
                }
            }
            let span = w.spans[place]
            if span.length == 0 { continue }
            let identity = w.identities[place]
            let want = Want(slot: identity.slot, recordOffset: 0, position: 0, start: identity.start, end: identity.end,
                            app: identity.app)
            if span.member < 0 {
                if bundleApp != identity.app || handedOut & (Self.bundleCopyEvery - 1) == 0 {
                    bundleApp = identity.app
                    // A string of its own every few thousand samples: each sample handed on
                    // holds it, counted up here and down on the writer's thread, and one
                    // string shared by a million samples had the two cores trade its count's
                    // cache line for every one.
                    let name: String? = source(identity.app)?.bundleIdentifier
                    bundle = name.map { String(decoding: Array($0.utf8), as: UTF8.self) }
                }
                handedOut &+= 1
                if let bytes = try plainSample(w.arena[Int(span.chunk)], span.range, typeCode: typeCode, bundleIdentifier: bundle,
                                               version: span.version, want: want) {
                    switch admit(bytes) {
                    case true?: if try !plain(consume bytes) { return }
                                continue
                    case false?: continue
                    case nil: break
                    }
                }
            }
            // A top-level sample is named by its copy in the arena: the members of one
            // correlation gathered together share it.
            let sample = try decode(want, w.arena[Int(span.chunk)], span.range, payloadOffset: Int(span.payloadOffset),
                                    version: span.version, member: Int(span.member),
                                    top: (UInt64(span.chunk), Int(span.from)), reusing: &last, source: source)
            if try !decoded(want, sample) { return }
        }
    }
}
