import CLedgerAccel
import Foundation
import HealthModel
import LedgerChecksums
import LedgerLog

/// Reads samples out of the log by slot, many at a time: the fetch half of the
/// streaming read engine (`SampleReader`).
///
/// A chunk of slots is grouped by record. The first time a query touches a record it
/// reads the whole record, checks its CRC32C, and notes where each of its samples
/// starts (a *sample table*: one `UInt32` per sample); it decodes only the samples
/// the chunk needs. Later chunks that need samples of the same record read just
/// those samples' bytes, bytes this query already checked: from memory when the
/// record's payload is *held* (kept after its first read while the held payloads
/// stay within `payloadBudget` bytes, `defaultPayloadBudget`), else one read of the span covering
/// them, or one read per sample when they are far apart. A query whose order is not
/// the log's (a type's samples by start date, saved in another order) touches every
/// record in every chunk: held, each record is read from the log and checked once
/// per query instead of once per chunk. When every record a chunk needs is held,
/// its samples are decoded in the caller's order, with no grouping.
///
/// Memory: the chunk's samples, the held payloads (at most `payloadBudget` bytes;
/// records first read after that are not held) and the sample tables, capped at
/// `tableBudget` entries (64 MiB: the tables of a 16M-sample ledger); past that cap
/// tables and held payloads are dropped and records are read whole again. `visit`
/// lets a held payload go once it has handed out every sample of the record, so a
/// walk in the order the samples were saved holds a record or two; a walk out of that
/// order (samples saved shuffled) still holds every record it has started — which is
/// why a walk over a whole quantity type goes in windows instead (`gather`,
/// RecordReads+Gather.swift), holding no payload.
final class RecordReads {
    private let file: any LogFile
    var tables: [UInt64: Table] = [:]
    var tableEntries = 0
    /// Cap on the total entries of the sample tables kept.
    let tableBudget: Int
    /// The payloads a query holds by default: an eighth of the machine's memory, at
    /// least 64 MiB and at most 1 GiB. A query in an order other than the log's reads a
    /// record's samples far apart; a record not held is read again for each of them, one
    /// small read per sample. At 10M samples (a 506 MB log) and a 64 MiB budget, 7 in 8
    /// samples of a query by start date were such reads (`tools/read_bench.sh --samples
    /// 10000000`: 45 s, against 1.6 s at 1M).
    static let defaultPayloadBudget = Int(min(1 << 30, max(64 << 20, ProcessInfo.processInfo.physicalMemory / 8)))
    /// Cap on the bytes of the payloads held (`Table.payload`).
    let payloadBudget: Int
    private var payloadBytes = 0
    /// The most `payloadBytes` reached (tests and benchmarks).
    private(set) var peakPayloadBytes = 0
    /// Windows gathered (`gather`; tests).
    var windowsGathered = 0
    private(set) var scratch: [UInt8] = []
    private var headers: [SampleCodec.Header] = []
    /// Units and devices as spelled before (a pure function of their bytes, so valid
    /// across records).
    var memo = SampleCodec.SaveMemo()
    /// Metadata of plain samples known to pass the model's checks, by its bytes.
    var validMetadata = PlainQuantityBytes.ValidMetadata()
    private var strings: [String] = []

    /// Where each sample of a record starts. A class: a query looks its record's
    /// table up for every sample, and a struct of three arrays was copied out of the
    /// dictionary each time (three retains and releases per sample, where one does).
    final class Table {
        /// `samplesSaved` version of the record.
        let version: UInt16
        /// Payload offsets of each top-level sample's length prefix, then the payload length.
        let starts: [UInt32]
        /// For records holding correlations: flattened position → (top-level index,
        /// member index or −1). `nil` when flattened positions are top-level indices.
        let flat: [(top: UInt32, member: Int32)]?
        /// The record's whole payload, checked (its CRC32C) when it was read, if held.
        var payload: [UInt8]? {
            didSet {
                payloadStart = payload.map { held in UInt(bitPattern: held.withUnsafeBufferPointer { $0.baseAddress }) } ?? 0
                payloadCount = payload?.count ?? 0
            }
        }
        /// Where `payload`'s bytes start (0: none held) and how many there are, for
        /// `prefetchBytes` only (a hint that never reads through the address): taking
        /// the payload to prefetch retained it, a count the writer thread counts down
        /// for each sample of it handed over.
        private(set) var payloadStart: UInt = 0
        private(set) var payloadCount = 0
        /// A sealed record (issue 32): its bytes in the file are ciphertext, so a sample
        /// of it is never read alone; not held, the record is read and opened again.
        var sealed = false
        /// Samples of the record `visit` has handed out (each sample at most once in a
        /// query's walk).
        var visits = 0
        /// The record's samples, correlation members included (its positions).
        var sampleCount: Int { flat?.count ?? starts.count - 1 }

        init(version: UInt16, starts: [UInt32], flat: [(top: UInt32, member: Int32)]?) {
            self.version = version
            self.starts = starts
            self.flat = flat
        }

        func locate(_ position: UInt32) -> (top: Int, member: Int)? {
            if let flat {
                guard Int(position) < flat.count else { return nil }
                return (Int(flat[Int(position)].top), Int(flat[Int(position)].member))
            }
            guard Int(position) < starts.count - 1 else { return nil }
            return (Int(position), -1)
        }
    }

    /// How sealed records are opened: nil for a plain log (version 1).
    private let opening: RecordOpening?

    init(fs: any LogFileSystem, tableBudget: Int = 16 << 20, payloadBudget: Int = RecordReads.defaultPayloadBudget) throws {
        file = try fs.open(LogWriter.logFileName, .readOnly)
        self.tableBudget = tableBudget
        self.payloadBudget = payloadBudget
        do {
            let header = try LogFileHeader.read(from: file, path: fs.path)
            opening = header.allowsSealedRecords ? RecordOpening(keys: fs.recordKeys, ledgerId: header.ledgerId) : nil
        } catch {
            file.close()
            throw error
        }
    }

    deinit { file.close() }

    /// One slot to fetch.
    /// A sample asked for: its slot, where the log holds it, and what the index says it
    /// is — its start and end, which the sample read there must have (the index holds no
    /// UUID to compare: a sample of another start or end there means the index and the
    /// log disagree).
    struct Want {
        let slot: UInt32
        let recordOffset: UInt64
        let position: UInt32
        let start: Double
        let end: Double
        let app: UInt32

        /// Whether a sample from `start` to `end` is the one the index means.
        @inline(__always)
        func isHeld(start s: Double, end e: Double) -> Bool {
            s.bitPattern == start.bitPattern && e.bitPattern == end.bitPattern
        }

        /// The reason a sample from `start` to `end` is not the one wanted.
        func disagreement(start s: Double, end e: Double) -> String {
            "the log holds a sample from \(s) to \(e) there, the index one from \(start) to \(end)"
        }
    }

    /// The samples of `wants`, in the same order.
    func samples(_ wants: [Want], source: (AppOrdinal) -> Source?) throws -> [Sample] {
        // The leading wants whose records are held: decoded in the caller's order,
        // straight from memory; the rest (usually none) grouped by record.
        var inOrder: [Sample] = []
        inOrder.reserveCapacity(wants.count)
        var last: DecodedTop?
        for want in wants {
            guard let table = tables[want.recordOffset], let payload = table.payload else { break }
            inOrder.append(try decode(want, table: table, buffer: payload, bufferStart: 0, reusing: &last, source: source))
        }
        if inOrder.count == wants.count { return inOrder }
        return inOrder + (try grouped(Array(wants[inOrder.count...]), source: source))
    }

    /// The samples of `wants`, in the same order, read record by record.
    private func grouped(_ wants: [Want], source: (AppOrdinal) -> Source?) throws -> [Sample] {
        var out = [Sample?](repeating: nil, count: wants.count)
        let order = wants.indices.sorted {
            let a = wants[$0], b = wants[$1]
            return a.recordOffset != b.recordOffset ? a.recordOffset < b.recordOffset : a.position < b.position
        }
        var i = 0
        while i < order.count {
            var j = i + 1
            let offset = wants[order[i]].recordOffset
            while j < order.count, wants[order[j]].recordOffset == offset { j += 1 }
            try fetchGroup(order[i..<j], wants, offset: offset, source: source, into: &out)
            i = j
        }
        return try out.enumerated().map { i, s in
            guard let s else { throw QueryError.indexDisagrees(slot: wants[i].slot, reason: "no sample read") }
            return s
        }
    }

    private func fetchGroup(_ group: ArraySlice<Int>, _ wants: [Want], offset: UInt64, source: (AppOrdinal) -> Source?,
                            into out: inout [Sample?]) throws {
        let payloadBase = offset + UInt64(LogFormat.recordHeaderLength)
        if let table = tables[offset], let payload = table.payload {
            try decode(group, wants, table: table, buffer: payload, bufferStart: 0, source: source, into: &out)
            return
        }
        if let table = tables[offset], !table.sealed {
            // Bytes already checked by this query: read only what the chunk needs.
            var tops: [Int] = []
            for w in group {
                guard let at = table.locate(wants[w].position) else {
                    throw QueryError.indexDisagrees(slot: wants[w].slot, reason: "no position \(wants[w].position) in its record")
                }
                if tops.last != at.top { tops.append(at.top) }
            }
            let span = Int(table.starts[tops.last! + 1] - table.starts[tops[0]])
            let total = tops.reduce(0) { $0 + Int(table.starts[$1 + 1] - table.starts[$1]) }
            if Self.readsOneSpan(span: span, tops: tops.count, bytes: total) {
                let from = Int(table.starts[tops[0]])
                try readExactly(count: span, at: payloadBase + UInt64(from))
                try decode(group, wants, table: table, buffer: scratch, bufferStart: from, source: source, into: &out)
            } else {
                for w in group {
                    let top = table.locate(wants[w].position)!.top
                    let from = Int(table.starts[top])
                    try readExactly(count: Int(table.starts[top + 1]) - from, at: payloadBase + UInt64(from))
                    try decode([w][...], wants, table: table, buffer: scratch, bufferStart: from, source: source, into: &out)
                }
            }
            return
        }
        let (table, payload) = try load(at: offset)
        try decode(group, wants, table: table, buffer: payload, bufferStart: 0, source: source, into: &out)
    }

    /// Reads the record at `offset` whole (checking its CRC32C), notes its sample
    /// table, and holds its payload while the budget allows.
    private func load(at offset: UInt64) throws -> (Table, [UInt8]) {
        let (table, payloadLength) = try loadTable(at: offset)
        let payload = Array(scratch[LogFormat.recordHeaderLength..<LogFormat.recordHeaderLength + payloadLength])
        if payloadBytes + payload.count <= payloadBudget {
            table.payload = payload
            payloadBytes += payload.count
            peakPayloadBytes = max(peakPayloadBytes, payloadBytes)
        }
        return (table, payload)
    }

    /// Reads the record at `offset` whole (checking its CRC32C) into `scratch`, its
    /// payload after the record header, and notes its sample table when `keep`
    /// (dropping every table and held payload first when the tables would pass
    /// `tableBudget`).
    func loadTable(at offset: UInt64, keep: Bool = true) throws -> (table: Table, payloadLength: Int) {
        let (version, payloadLength) = try readRecord(at: offset)
        let table = try scratch.withUnsafeBytes { b in
            try makeTable(UnsafeRawBufferPointer(rebasing: b[LogFormat.recordHeaderLength..<LogFormat.recordHeaderLength + payloadLength]),
                          version: version, offset: offset)
        }
        table.sealed = opened
        guard keep else { return (table, payloadLength) }
        if tableEntries + table.starts.count > tableBudget {
            tables.removeAll(keepingCapacity: true)
            tableEntries = 0
            payloadBytes = 0
        }
        tables[offset] = table
        tableEntries += table.starts.count + (table.flat?.count ?? 0)
        return (table, payloadLength)
    }

    /// The samples of `wants`, in order, each to `plain` when it has the common shape
    /// (`PlainQuantityBytes`: a quantity sample of type `typeCode`, read in place) and
    /// `admit` decides it (true: to `plain`; false: skipped), else decoded to
    /// `decoded`. Either returns false to stop. Bytes are read as `samples` reads
    /// them: a record's first read is whole and checked; later, from the held payload
    /// or the sample's bytes.
    func visit(_ wants: [Want], typeCode: UInt16, source: (AppOrdinal) -> Source?, admit: (PlainQuantityBytes) -> Bool?,
               plain: (Int, consuming PlainQuantityBytes) throws -> Bool, decoded: (Int, Sample) throws -> Bool) throws {
        var last: DecodedTop?
        // The bundle identifier of the last app seen: a chunk's samples mostly share one.
        var bundleApp: UInt32?
        var bundle: String?
        for (i, want) in wants.enumerated() {
            if i + 2 * Self.lookahead < wants.count { prefetchStart(of: wants[i + 2 * Self.lookahead]) }
            if i + Self.lookahead < wants.count { prefetchBytes(of: wants[i + Self.lookahead]) }
            var table: Table
            var buffer: [UInt8]
            var bufferStart = 0
            if let held = tables[want.recordOffset], held.payload != nil || !held.sealed {
                table = held
                if let payload = held.payload {
                    buffer = payload
                } else {
                    guard let at = held.locate(want.position) else {
                        throw QueryError.indexDisagrees(slot: want.slot, reason: "no position \(want.position) in its record")
                    }
                    bufferStart = Int(held.starts[at.top])
                    let count = Int(held.starts[at.top + 1]) - bufferStart
                    try readExactly(count: count, at: want.recordOffset + UInt64(LogFormat.recordHeaderLength) + UInt64(bufferStart))
                    // A copy of just these bytes, never `scratch` itself: a plain sample
                    // handed on (a front end batches them) would hold `scratch`, and the
                    // next read into it would copy all of it (copy on write).
                    buffer = Array(scratch[0..<count])
                }
            } else {
                (table, buffer) = try load(at: want.recordOffset)
            }
            // A record whose every sample this walk has now handed out is let go: a query
            // over samples saved in its order (an import, a day's saves) holds a record
            // or two, not the log. Should a sample of it be asked for again, its bytes
            // are read alone, as for a record not held.
            table.visits += 1
            if table.visits >= table.sampleCount, let held = table.payload {
                table.payload = nil
                payloadBytes -= held.count
            }
            guard let at = table.locate(want.position) else {
                throw QueryError.indexDisagrees(slot: want.slot, reason: "no position \(want.position) in its record")
            }
            if at.member < 0 {
                let from = Int(table.starts[at.top]) - bufferStart, to = Int(table.starts[at.top + 1]) - bufferStart
                if bundleApp != want.app {
                    bundleApp = want.app
                    bundle = source(want.app)?.bundleIdentifier
                }
                if let bytes = try plainSample(buffer, from..<to, typeCode: typeCode, bundleIdentifier: bundle, version: table.version,
                                               want: want) {
                    switch admit(bytes) {
                    case true?: if try !plain(i, consume bytes) { return }
                                continue
                    case false?: continue
                    case nil: break
                    }
                }
            }
            let sample = try decode(want, table: table, buffer: buffer, bufferStart: bufferStart, reusing: &last, source: source)
            if try !decoded(i, sample) { return }
        }
    }

    /// Whether the wanted samples of a record checked before are read as one span
    /// (`span` bytes) rather than each alone (`tops` reads, `bytes` in all): a read
    /// costs about as much as copying 8 KiB.
    static func readsOneSpan(span: Int, tops: Int, bytes: Int) -> Bool {
        1 + span / 8192 <= tops + bytes / 8192
    }

    /// The sample at `buffer[range]` read in place (`PlainQuantityBytes`) when it has the
    /// common shape of type `typeCode` and passes the model's checks; nil: it is to be
    /// decoded. Throws when its start or end is not the index's (`want`'s).
    func plainSample(_ buffer: [UInt8], _ range: Range<Int>, typeCode: UInt16, bundleIdentifier: String?, version: UInt16,
                     want: Want) throws -> PlainQuantityBytes? {
        guard let bytes = PlainQuantityBytes.read(buffer, range, typeCode: typeCode, bundleIdentifier: bundleIdentifier,
                                                  version: version),
              bytes.passesModelChecks(memo: &memo, valid: &validMetadata) else { return nil }
        guard want.isHeld(start: bytes.start, end: bytes.end) else {
            throw QueryError.indexDisagrees(slot: want.slot, reason: want.disagreement(start: bytes.start, end: bytes.end))
        }
        return bytes
    }

    /// How far ahead `visit` asks for a sample's bytes.
    static let lookahead = 8

    /// Asks the CPU to start loading the first bytes of `want`'s sample when its record's
    /// payload is held (a hint: nothing is read or checked). A query by start date
    /// reads the held payloads out of log order: each sample's first byte was a cache
    /// miss, a fifth of the reading thread (`perf`, 1M samples: `ByteReader.varint`,
    /// the length prefix).
    @inline(__always)
    private func prefetchBytes(of want: Want) {
        guard let table = tables[want.recordOffset], let start = UnsafeRawPointer(bitPattern: table.payloadStart),
              table.flat == nil, Int(want.position) < table.starts.count else { return }
        let from = Int(table.starts[Int(want.position)])
        if from < table.payloadCount { hl_prefetch(start + from) }
    }

    /// Asks the CPU to start loading where `want`'s sample starts in its record (the
    /// sample table's entry `prefetchBytes` reads `lookahead` samples later).
    @inline(__always)
    private func prefetchStart(of want: Want) {
        // As `prefetchBytes`: a record holding correlations numbers its positions
        // otherwise (`flat`), and is passed over.
        guard let table = tables[want.recordOffset], table.flat == nil, Int(want.position) < table.starts.count else { return }
        table.starts.withUnsafeBufferPointer { hl_prefetch($0.baseAddress! + Int(want.position)) }
    }

    /// Decodes the wanted samples from `buffer`, which holds payload bytes from `bufferStart`.
    private func decode(_ group: ArraySlice<Int>, _ wants: [Want], table: Table, buffer: [UInt8], bufferStart: Int,
                        source: (AppOrdinal) -> Source?, into out: inout [Sample?]) throws {
        var last: DecodedTop?
        for w in group {
            out[w] = try decode(wants[w], table: table, buffer: buffer, bufferStart: bufferStart, reusing: &last, source: source)
        }
    }

    /// A top-level sample just decoded: the members of one correlation share it.
    struct DecodedTop {
        let record: UInt64
        let top: Int
        let sample: Sample
    }

    /// Decodes one wanted sample from `buffer` (payload bytes from `bufferStart`).
    /// `last`: the top-level sample decoded just before, reused for the members of one
    /// correlation, and updated.
    private func decode(_ want: Want, table: Table, buffer: [UInt8], bufferStart: Int,
                        reusing last: inout DecodedTop?, source: (AppOrdinal) -> Source?) throws -> Sample {
        guard let at = table.locate(want.position) else {
            throw QueryError.indexDisagrees(slot: want.slot, reason: "no position \(want.position) in its record")
        }
        let from = Int(table.starts[at.top]) - bufferStart, to = Int(table.starts[at.top + 1]) - bufferStart
        return try decode(want, buffer, from..<to, payloadOffset: Int(table.starts[at.top]), version: table.version,
                          member: at.member, top: (want.recordOffset, at.top), reusing: &last, source: source)
    }

    /// Decodes one wanted sample whose top-level sample (length prefix first) is
    /// `buffer[range]`, at `payloadOffset` of its record's payload; `member` ≥ 0 picks
    /// that member of a correlation. `top` names the top-level sample: the members of
    /// one correlation decode it once (`last`). Checks the UUID against the index's.
    func decode(_ want: Want, _ buffer: [UInt8], _ range: Range<Int>, payloadOffset: Int, version: UInt16, member: Int,
                top key: (record: UInt64, top: Int), reusing last: inout DecodedTop?,
                source: (AppOrdinal) -> Source?) throws -> Sample {
        let top: Sample
        if let last, last.record == key.record, last.top == key.top {
            top = last.sample
        } else {
            top = try buffer.withUnsafeBytes { b throws -> Sample in
                var r = ByteReader(UnsafeRawBufferPointer(rebasing: b[range]))
                r.base = payloadOffset
                var sub = try r.lengthPrefixed()
                let saved = try SampleCodec.decode(&sub, source: source(want.app), version: version, asMember: false,
                                                   memo: &memo)
                try sub.finish()
                return saved.sample
            }
            last = DecodedTop(record: key.record, top: key.top, sample: top)
        }
        var sample = top
        if member >= 0 {
            guard case .correlation(let c) = top, member < c.objects.count else {
                throw QueryError.indexDisagrees(slot: want.slot, reason: "member \(member) is not in its correlation")
            }
            sample = .quantity(c.objects[member])
        }
        let (s, e) = (sample.startDate.timeIntervalSinceReferenceDate, sample.endDate.timeIntervalSinceReferenceDate)
        guard want.isHeld(start: s, end: e) else {
            throw QueryError.indexDisagrees(slot: want.slot, reason: want.disagreement(start: s, end: e))
        }
        return sample
    }

    /// Reads the whole record at `offset` into `scratch` and checks its CRC32C.
    func readRecord(at offset: UInt64) throws -> (version: UInt16, payloadLength: Int) {
        let damage = LogError.damaged(LogDamage(kind: .recordChecksum, offset: offset, length: nil, sequence: nil,
                                                inDurablePrefix: true))
        try readExactly(count: LogFormat.recordHeaderLength, at: offset, or: damage)
        let (length, kind, version) = scratch.withUnsafeBytes { b in
            (Int(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 4, as: UInt32.self))),
             UInt16(littleEndian: b.loadUnaligned(fromByteOffset: 24, as: UInt16.self)),
             UInt16(littleEndian: b.loadUnaligned(fromByteOffset: 26, as: UInt16.self)))
        }
        guard length <= LogFormat.payloadLengthMax else { throw damage }
        try readExactly(count: LogFormat.recordHeaderLength + length, at: offset, or: damage)
        let ok = scratch.withUnsafeBytes { b in
            UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
                == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[4..<LogFormat.recordHeaderLength + length]))
        }
        guard ok else { throw damage }
        guard kind == EventKind.samplesSaved.rawValue else {
            throw QueryError.indexDisagrees(slot: nil, reason: "the record at \(offset) is not a save")
        }
        opened = false
        let flags = scratch.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 28, as: UInt32.self)) }
        guard let opening else { return (version, length) }
        guard flags & LogFormat.recordFlagSealed != 0 else {
            // K4: an encrypted ledger's saves are sealed; a plain one is a forgery.
            throw EventDecodingError.malformed(offset: 0, reason: "a samplesSaved record of an encrypted ledger is not sealed", rule: "K4")
        }
        guard length >= SealedRecord.overhead else { throw damage }
        // A sealed record: opened, its plaintext put where its payload was.
        let result = scratch.withUnsafeBytes { b in
            SealedRecord.open(framed: UnsafeRawBufferPointer(rebasing: b[0..<LogFormat.recordHeaderLength + length]), opening: opening)
        }
        switch result {
        case .success(let plaintext):
            scratch.replaceSubrange(LogFormat.recordHeaderLength..<LogFormat.recordHeaderLength + plaintext.count, with: plaintext)
            opened = true
            return (version, plaintext.count)
        case .failure(let failure):
            let sequence = scratch.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
            throw LogError.sealedRecordUnopened(sequence: sequence, failure: failure)
        }
    }

    /// Whether the record `readRecord` read last was sealed (its plaintext is in `scratch`).
    private var opened = false

    func readExactly(count: Int, at offset: UInt64, or error: Error? = nil) throws {
        if scratch.count < count { scratch = [UInt8](repeating: 0, count: max(count, scratch.count * 2)) }
        let got = try scratch.withUnsafeMutableBytes { try file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<count]), at: offset) }
        guard got == count else {
            throw error ?? QueryError.indexDisagrees(slot: nil, reason: "the log ends before byte \(offset + UInt64(count))")
        }
    }

    /// Notes where each sample of a save's payload starts.
    func makeTable(_ payload: [UInt8], version: UInt16, offset: UInt64) throws -> Table {
        try payload.withUnsafeBytes { try makeTable($0, version: version, offset: offset) }
    }

    /// Notes where each sample of a save's payload (`p`) starts.
    func makeTable(_ p: UnsafeRawBufferPointer, version: UInt16, offset: UInt64) throws -> Table {
        var r = ByteReader(p)
        _ = try r.varint()
        let n = try r.count(limit: r.remaining)
        var starts: [UInt32] = []
        starts.reserveCapacity(n + 1)
        var flat: [(top: UInt32, member: Int32)]?
        for t in 0..<n {
            starts.append(UInt32(r.absolutePosition))
            var sub = try r.lengthPrefixed()
            var peek = sub
            if try peek.u8() == SampleCodec.Kind.correlation.rawValue {
                if flat == nil { flat = (0..<t).map { (UInt32($0), -1) } }
                headers.removeAll(keepingCapacity: true)
                strings.removeAll(keepingCapacity: true)
                try SampleCodec.headers(&sub, into: &headers, strings: &strings)
                flat!.append((UInt32(t), -1))
                for m in 0..<(headers.count - 1) { flat!.append((UInt32(t), Int32(m))) }
            } else {
                flat?.append((UInt32(t), -1))
            }
        }
        starts.append(UInt32(r.absolutePosition))
        try r.finish()
        return Table(version: version, starts: starts, flat: flat)
    }
}

/// Why a read failed (beyond the log's own errors).
public enum QueryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A resume cursor that names no sample of this ledger.
    case invalidCursor(String)
    /// The sample index and the log disagree (a slot, when known).
    case indexDisagrees(slot: UInt32?, reason: String)

    public var description: String {
        switch self {
        case .invalidCursor(let text): "invalidCursor: '\(text)' names no sample of this ledger"
        case .indexDisagrees(let slot, let reason):
            "indexDisagrees: the sample index and the log disagree" + (slot.map { " at slot \($0)" } ?? "") + ": \(reason)"
        }
    }
}
