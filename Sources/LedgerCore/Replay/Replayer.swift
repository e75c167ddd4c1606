import Foundation
import HealthModel
import LedgerLog

/// How far to replay.
package enum ReplayLimit: Sendable, Equatable {
    /// To the end of the log.
    case end
    /// Through this sequence number.
    case sequence(UInt64)
    /// Through the last event recorded at or before this instant (ns since the epoch).
    case instant(Int64)
}

extension ReplayLimit {
    /// Whether an event at this sequence number and time is within the limit.
    package func admits(sequence: UInt64, recordedAt: Int64) -> Bool {
        switch self {
        case .end: true
        case .sequence(let last): sequence <= last
        case .instant(let t): recordedAt <= t
        }
    }

    /// The instants the log's clock can name (`recordedAt` is Int64 nanoseconds since
    /// 1970), as error messages give them.
    package static let instantRangeText = "1677-09-21T00:12:43.145224192Z…2262-04-11T23:47:16.854775807Z (the log's clock)"

    /// `date` as the log's clock (nanoseconds since 1970, rounded); throws
    /// `dateOutOfRange` naming `field` when it does not fit an Int64.
    package static func nanoseconds(_ date: Date, field: String) throws(HealthModelError) -> Int64 {
        let ns = (date.timeIntervalSince1970 * 1e9).rounded()
        // -2^63 and 2^63 are exact doubles: the comparisons are exact.
        guard ns >= -9_223_372_036_854_775_808.0, ns < 9_223_372_036_854_775_808.0 else {
            throw .dateOutOfRange(field: field, date: ISO8601.string(date), range: instantRangeText)
        }
        return Int64(ns)
    }
}

/// Why replay stopped before the end.
public enum ReplayError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An event whose bytes do not decode.
    case undecodable(sequence: UInt64, offset: UInt64, EventDecodingError)
    /// An event the rules do not allow at its point in the log.
    case ruleViolation(sequence: UInt64, offset: UInt64, RuleViolation)

    public var description: String {
        switch self {
        case .undecodable(let s, let o, let e): "event \(s) at byte \(o) does not decode: \(e)"
        case .ruleViolation(let s, let o, let v): "event \(s) at byte \(o) breaks a rule: \(v)"
        }
    }

    /// The sequence number of the offending event.
    public var sequence: UInt64 {
        switch self {
        case .undecodable(let s, _, _), .ruleViolation(let s, _, _): s
        }
    }
}

/// Progress of a long replay: bytes of log read of the total, events folded.
package struct ReplayProgress: Sendable {
    package let bytes: UInt64
    package let totalBytes: UInt64
    package let events: UInt64
}

/// Rebuilds projections by folding the log's events, streaming (memory is the
/// projections' plus a few batches in flight), every event checked by the rules on
/// the way so that no log, however written, can put the state out of its invariants.
///
/// Two stages on two threads: a reader thread scans batches (checksums), decodes
/// each event's facts into chunks and has each chunk's saves decoded in full on all
/// cores; the calling thread checks the rules and folds. The stages hand over chunks of about 4,096
/// events or 65,536 sample headers, whichever comes first (an import writes 2,048
/// samples per event), through a bounded queue, so memory stays bounded and order
/// is kept.
package enum Replayer {
    /// What a replay reached.
    package struct Outcome: Sendable {
        /// After the last whole batch folded (nil when stopped inside a batch).
        package let position: LogReader.Position?
        /// Events folded by this call.
        package let applied: UInt64
        /// Invalid bytes at the end of the log that no later batch proves durable.
        package let incompleteTail: LogDamage?
        /// The transactional import the replay stopped before, its end not in the log
        /// (or, with a limit, not within it): nil when none (rule E11).
        package let openImport: OpenImport?
    }

    /// Folds events after `position` into `state`, up to `limit`.
    /// - Parameters:
    ///   - decodeFully: decode each save with its samples' sources (the app as the
    ///     reader thread's registry knows it at that point of the log), as `verify`
    ///     does. Either way saves are folded from their headers and decoded completely
    ///     on all cores before each chunk is handed over, and every other event is
    ///     decoded completely on the reader thread: every event passes the same full
    ///     decoder, so replay, open and verify accept exactly the same logs.
    ///   - onBatch: called on the folding thread after each batch is folded, with the
    ///     position after it (`verify` compares snapshots there).
    package static func replay(_ reader: LogReader, into state: inout LedgerState, from position: LogReader.Position,
                              limit: ReplayLimit = .end, decodeFully: Bool = false,
                              progress: ((ReplayProgress) -> Void)? = nil,
                              onBatch: ((LogReader.Position, inout LedgerState) throws -> Void)? = nil) throws -> Outcome {
        try replay(reader, into: &state, from: position, limit: limit, decodeFully: decodeFully, progress: progress,
                   onBatch: onBatch, beforeFold: nil)
    }

    /// The samples a log of `logBytes` likely holds, from a first chunk of `chunkBytes`
    /// holding `chunkSamples`: its samples per byte when it read enough of either to
    /// tell (4,096 samples or 256 KiB), else one per 86 bytes (a single-sample save);
    /// never more than one per 40 bytes (no sample record is smaller), so that a
    /// misleading first chunk cannot reserve much beyond the log.
    static func estimatedSamples(logBytes: UInt64, chunkSamples: Int, chunkBytes: UInt64) -> Int {
        let ceiling = logBytes / 40
        guard chunkBytes > 0, chunkSamples >= 4096 || chunkBytes >= 1 << 18 else { return Int(logBytes / 86) }
        let (scaled, overflow) = logBytes.multipliedReportingOverflow(by: UInt64(chunkSamples))
        let estimate = overflow ? ceiling : scaled / chunkBytes
        return Int(min(max(estimate, logBytes / 86), ceiling))
    }

    /// A folded event as `beforeFold` sees it.
    struct Point {
        let sequence: UInt64
        let recordedAt: Int64
        let offset: UInt64
        let kind: UInt16
    }

    /// `replay`, calling `beforeFold` with each event's facts and the state just
    /// before it is folded (audit shows "the authorization in force at that moment").
    static func replay(_ reader: LogReader, into state: inout LedgerState, from position: LogReader.Position,
                       limit: ReplayLimit, decodeFully: Bool, progress: ((ReplayProgress) -> Void)?,
                       onBatch: ((LogReader.Position, inout LedgerState) throws -> Void)?,
                       beforeFold: ((Point, EventFacts, LedgerState) -> Void)?,
                       planned: [ErasureIndex.Entry] = []) throws -> Outcome {
        // Every erasure of the log, before anything is folded (issue 32), and those an
        // erasure's dry run is about to write. A state built before one of them was
        // written (a snapshot older than it, a reader following the log) holds what it
        // erased: rebuilt from the start.
        var read = try ErasureIndex.read(reader, continuing: state.erasures, from: position)
        for p in planned { read.add(p.erasure, sequence: p.sequence, recordedAt: p.recordedAt) }
        let erasures = read
        let rebuild = position.nextSequence > 1 && erasures.entries.contains { $0.sequence >= position.nextSequence }
        let position = rebuild ? reader.start : position
        if rebuild { state = LedgerState() }
        state.erasures = erasures
        let total = try reader.size()
        // A replay from nothing reserves its columns and UUID table once, from the first
        // chunk's samples per log byte (a log of large saves holds ~53 bytes a sample,
        // single-sample saves ~86: a table sized for the latter grew once, re-placing
        // every UUID, 0.07-0.25 s of a million-sample replay).
        var reservePending = state.samples.count == 0 && position.offset < total
        let queue = ChunkQueue(capacity: 4)
        let producer = Thread {
            queue.produce(reader: reader, position: position, decodeFully: decodeFully, erasures: erasures,
                          through: erasures.readThrough)
        }
        producer.stackSize = 1 << 20
        producer.start()
        defer { queue.cancel() }

        var applied: UInt64 = 0
        var stoppedInside = false
        var lastPosition: LogReader.Position? = position
        var nextReport = position.offset + (64 << 20)
        var failure: ReplayError?
        var end: LogReader.ScanEnd?
        // E11: the events of an aborted import are passed over through its
        // `importAborted`; replay stops before an import whose end it cannot reach.
        var passOverThrough: UInt64?
        var openImport: OpenImport?
        consume: while let chunk = try queue.next() {
            // Local copies: a class's arrays are checked for exclusive access on every
            // use; locals are not. Dropped before the chunk goes back to the reader.
            var items = chunk.items, headers = chunk.headers, strings = chunk.strings, batches = chunk.batches
            var events = chunk.events, errors = chunk.errors
            if reservePending {
                reservePending = false
                // The scan reads forward from `position`: a chunk ends after it (max: no trap if not).
                let chunkEnd = max(batches.last?.end.offset ?? position.offset, position.offset)
                let estimate = Self.estimatedSamples(logBytes: total - position.offset, chunkSamples: headers.count,
                                                     chunkBytes: chunkEnd - position.offset)
                state.samples.reserve(estimatedSamples: estimate)
                state.statistics.reserve(estimate)
            }
            var boundary = 0
            var i = 0
            while i <= items.count {
                // Close the batches (and seals) that end before item i.
                while boundary < batches.count, batches[boundary].lastItem < i {
                    let batchEnd = batches[boundary].end
                    lastPosition = batchEnd
                    try onBatch?(batchEnd, &state)
                    if let progress, batchEnd.offset >= nextReport {
                        progress(ReplayProgress(bytes: batchEnd.offset, totalBytes: total, events: applied))
                        nextReport = batchEnd.offset + (64 << 20)
                    }
                    boundary += 1
                }
                if i == items.count { break }
                if i + Self.lookahead < items.count, case .save(_, let range, _)? = items[i + Self.lookahead].facts,
                   range.lowerBound < range.upperBound {
                    state.samples.prefetch(headers[range.lowerBound].uuid)
                }
                guard limit.admits(sequence: items[i].sequence, recordedAt: items[i].recordedAt) else { break consume }
                let item = items[i]
                if let through = passOverThrough {
                    // An aborted import's event: decoded (every event must be), never applied.
                    if case .undecodable(let e)? = item.facts {
                        failure = .undecodable(sequence: item.sequence, offset: item.offset, errors[e])
                        break consume
                    }
                    state.skip(sequence: item.sequence, recordedAt: item.recordedAt)
                    if item.sequence == through { passOverThrough = nil }
                    applied += 1
                    i += 1
                    continue
                }
                if case .start(let importId, let close) = item.transaction {
                    // E11: a transaction begins a batch, so that replay can stop before it.
                    guard let before = lastPosition, before.nextSequence == item.sequence else {
                        failure = .ruleViolation(sequence: item.sequence, offset: item.offset,
                                                 .importMismatch(importId, "starts inside a batch: a transaction begins its batch", rule: "E11"))
                        break consume
                    }
                    switch close {
                    case .aborted(let through, _)?:
                        passOverThrough = through
                        continue  // this very item is passed over first
                    case .finished(let at, let time)? where limit.admits(sequence: at, recordedAt: time):
                        break  // applies: fold it like any event
                    default:
                        openImport = OpenImport(importId: importId, startedAt: item.sequence, position: before)
                        break consume
                    }
                }
                if let problem = fold(item, headers: headers, strings: strings, events: events, errors: errors, into: &state,
                                      beforeFold: beforeFold) {
                    failure = problem
                    break consume
                }
                applied += 1
                i += 1
            }
            if let scanEnd = chunk.scanEnd { end = scanEnd }
            // The chunk's arrays keep their memory for the reader's next chunk (large
            // arrays are fresh pages each time otherwise: the kernel zeroes them).
            (items, headers, strings, batches, events, errors) = ([], [], [], [], [], [])
            queue.recycle(chunk)
        }
        if let failure { throw failure }
        // Stopped by the limit inside a batch: no position to resume from.
        if let last = lastPosition, state.lastSequence + 1 != last.nextSequence { stoppedInside = true }
        progress?(ReplayProgress(bytes: end?.endOffset ?? position.offset, totalBytes: total, events: applied))
        return Outcome(position: stoppedInside ? nil : lastPosition, applied: applied, incompleteTail: end?.incompleteTail,
                       openImport: openImport)
    }

    static let lookahead = 32

    /// Checks and folds one event; the problem when it may not be folded.
    static func fold(_ item: Chunk.Item, headers: [SampleCodec.Header], strings: [String], events: [Event],
                     errors: [EventDecodingError], into state: inout LedgerState,
                     beforeFold: ((Point, EventFacts, LedgerState) -> Void)? = nil) -> ReplayError? {
        let facts: EventFacts
        switch item.facts {
        case .save(let app, let range, let names) where state.erasures.isEmpty && beforeFold == nil:
            // The common case, folded from the chunk's arrays in place: the same rules
            // and the same fold as below, without an `EventFacts` of slices (a retain
            // and a release of two arrays per save).
            return headers.withUnsafeBufferPointer { allHeaders in
                strings.withUnsafeBufferPointer { allStrings in
                    let h = UnsafeBufferPointer(rebasing: allHeaders[range]), s = UnsafeBufferPointer(rebasing: allStrings[names])
                    if let violation = LedgerRules.saveViolation(app: app, headers: h, strings: s, in: state) {
                        return .ruleViolation(sequence: item.sequence, offset: item.offset, violation)
                    }
                    state.applySave(app: app, headers: h, strings: s, kind: item.kind, sequence: item.sequence,
                                    recordedAt: item.recordedAt, offset: item.offset)
                    return nil
                }
            }
        case .undecodable(let index):
            return .undecodable(sequence: item.sequence, offset: item.offset, errors[index])
        case .other(let index):
            if state.erasures.isEmpty {
                facts = .other(events[index])
            } else {
                let adjusted: Event?
                do { adjusted = try state.erasures.adjust(events[index], in: state) } catch {
                    return .ruleViolation(sequence: item.sequence, offset: item.offset, error)
                }
                guard let adjusted else {
                    state.skip(sequence: item.sequence, recordedAt: item.recordedAt)  // names only erased samples
                    return nil
                }
                facts = .other(adjusted)
            }
        case .save(let app, let range, let names):
            let adjusted: [SampleCodec.Header]?
            do { adjusted = state.erasures.isEmpty ? nil : try state.erasures.adjust(headers[range], in: state) } catch {
                return .ruleViolation(sequence: item.sequence, offset: item.offset, error)
            }
            if let adjusted {
                facts = .samplesSaved(app: app, headers: adjusted[...], syncIdentifiers: strings[names])
            } else {
                facts = .samplesSaved(app: app, headers: headers[range], syncIdentifiers: strings[names])
            }
        case .erased:
            // Sealed under an erased key: its content is gone (issue 32).
            state.skip(sequence: item.sequence, recordedAt: item.recordedAt)
            return nil
        case nil:
            return .undecodable(sequence: item.sequence, offset: item.offset, .truncated(offset: 0))
        }
        let resealed = !state.erasures.isEmpty && state.erasures.resealed.contains(item.sequence)
        if let violation = LedgerRules.violation(facts, in: state, resealed: resealed) {
            return .ruleViolation(sequence: item.sequence, offset: item.offset, violation)
        }
        if let beforeFold {
            beforeFold(Point(sequence: item.sequence, recordedAt: item.recordedAt, offset: item.offset, kind: item.kind), facts, state)
        }
        state.apply(facts, kind: item.kind, sequence: item.sequence, recordedAt: item.recordedAt, offset: item.offset)
        return nil
    }

    /// Events of one or more batches, with their facts decoded by the reader thread.
    final class Chunk: @unchecked Sendable {
        // @unchecked: built by one thread, then handed over whole through the queue.
        struct Item {
            let sequence: UInt64
            let recordedAt: Int64
            let offset: UInt64
            let kind: UInt16
            var facts: Facts?
            /// For a transactional import's start: how it ends (rule E11).
            var transaction: Transaction = .none
        }

        enum Transaction {
            case none
            /// An `importStarted` of version 2, and its close (nil: not in the log).
            case start(importId: UUID, close: ImportClose?)
        }

        /// Plain data (no references), so that items copy as bytes.
        enum Facts {
            case save(app: AppOrdinal, headers: Range<Int>, strings: Range<Int>)
            /// An event other than a save, at this index of `events`.
            case other(Int)
            /// At this index of `errors`.
            case undecodable(Int)
            /// Sealed under an erased key, with no replacement: passed over.
            case erased
        }

        struct Boundary {
            /// Index of the batch's last item (−1 for a seal before any item).
            let lastItem: Int
            let end: LogReader.Position
        }

        // Unchecked exclusivity: one thread at a time owns a chunk (the reader fills it,
        // the hand-off passes it whole, the folder reads it, the recycle returns it), and
        // no access to these arrays overlaps another: the runtime's dynamic checks on a
        // class's properties cost the reader thread ~6% (`AccessSet::insert`,
        // `swift_beginAccess`, appending each event's headers in place).
        @exclusivity(unchecked) var items: [Item] = []
        @exclusivity(unchecked) var headers: [SampleCodec.Header] = []
        @exclusivity(unchecked) var strings: [String] = []
        @exclusivity(unchecked) var events: [Event] = []
        @exclusivity(unchecked) var errors: [EventDecodingError] = []
        @exclusivity(unchecked) var batches: [Boundary] = []
        var scanEnd: LogReader.ScanEnd?
        /// Saves still to decode in full, their payloads copied into the reader's buffer.
        @exclusivity(unchecked) var saves: [PendingSave] = []
        /// The sources `saves` name (`decodeFully` only).
        @exclusivity(unchecked) var saveSources: [Source] = []

        /// Plain data (no references): the workers read each as bytes.
        struct PendingSave: Sendable {
            let item: Int
            let bytes: Range<Int>
            let version: UInt16
            /// The index in `saveSources` of the source to stamp the samples with
            /// (`decodeFully`: verify's), or −1 for none.
            let source: Int32
        }

        /// The saves a worker reads, lent for the length of `validateSaves`.
        private struct SharedSaves: @unchecked Sendable {
            // @unchecked: only read, and only while the lending closure runs.
            let saves: UnsafeBufferPointer<PendingSave>
        }

        /// Decodes every pending save in full (the same decoder `verify` runs), on all
        /// cores, from `savePayloads` (where the reader copied them); a save that does
        /// not decode becomes its item's facts, so the fold stops there exactly as
        /// `verify` does.
        func validateSaves(_ savePayloads: [UInt8]) {
            guard !saves.isEmpty else { return }
            // Work shared by bytes, not by saves: an import's saves hold 2,048 samples
            // each, and a chunk of them is a few dozen saves.
            let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, saves.count, savePayloads.count / (32 << 10)))
            let failures = Failures()
            let sources = saveSources
            savePayloads.withUnsafeBytes { raw in
                saves.withUnsafeBufferPointer { pending in
                    let all = SharedBytes(raw), shared = SharedSaves(saves: pending)
                    DispatchQueue.concurrentPerform(iterations: workers) { worker in
                        // One memo per worker for the whole chunk: spellings repeat from
                        // save to save far more than within one.
                        var memo = SampleCodec.SaveMemo(capacity: Self.memoCapacity)
                        var valid = PlainQuantityBytes.ValidMetadata()
                        var i = worker
                        while i < shared.saves.count {
                            let save = shared.saves[i]
                            do throws(EventDecodingError) {
                                _ = try EventCodec.checkSave(version: save.version,
                                                             payload: UnsafeRawBufferPointer(rebasing: all.bytes[save.bytes]),
                                                             source: save.source >= 0 ? sources[Int(save.source)] : nil,
                                                             memo: &memo, valid: &valid)
                            } catch {
                                failures.add(save.item, error)
                            }
                            i += workers
                        }
                    }
                }
            }
            saves.removeAll(keepingCapacity: true)
            saveSources.removeAll(keepingCapacity: true)
            for (item, error) in failures.sorted() {
                errors.append(error)
                items[item].facts = .undecodable(errors.count - 1)
            }
        }

        /// Unit and device spellings a worker remembers over a chunk's saves.
        static let memoCapacity = 64

        /// Decoding failures from the workers, by item.
        struct Failures: Sendable {
            private let list = Locked<[(Int, EventDecodingError)]>([])
            func add(_ item: Int, _ error: EventDecodingError) { list.withLock { $0.append((item, error)) } }
            func sorted() -> [(Int, EventDecodingError)] { list.withLock { $0.sorted { $0.0 < $1.0 } } }
        }

        init(reserving: Bool = true) {
            guard reserving else { return }
            items.reserveCapacity(ChunkQueue.chunkEvents)
            headers.reserveCapacity(ChunkQueue.chunkEvents)
        }

        /// A copy holding only what it needs: the last chunk is folded while a snapshot at
        /// the end of the log is compared, and a reused chunk keeps the memory of its
        /// fullest use.
        func compacted() -> Chunk {
            /// A copy of `array` in storage of its own, just large enough (`Array(array)`
            /// would share the reused storage).
            func exact<T>(_ array: [T]) -> [T] {
                var copy: [T] = []
                copy.reserveCapacity(array.count)
                copy.append(contentsOf: array)
                return copy
            }
            let copy = Chunk(reserving: false)
            copy.items = exact(items)
            copy.headers = exact(headers)
            copy.strings = exact(strings)
            copy.events = exact(events)
            copy.errors = exact(errors)
            copy.batches = exact(batches)
            copy.scanEnd = scanEnd
            copy.saves = exact(saves)
            copy.saveSources = exact(saveSources)
            return copy
        }

        /// Empties the chunk for reuse, its arrays keeping their capacity.
        func reset() {
            items.removeAll(keepingCapacity: true)
            headers.removeAll(keepingCapacity: true)
            strings.removeAll(keepingCapacity: true)
            events.removeAll(keepingCapacity: true)
            errors.removeAll(keepingCapacity: true)
            batches.removeAll(keepingCapacity: true)
            scanEnd = nil
            saves.removeAll(keepingCapacity: true)
            saveSources.removeAll(keepingCapacity: true)
        }
    }

    /// The reader thread's side of the replay: scans, decodes and hands chunks over
    /// (a `BoundedHandOff`, the pipelines' one queue) to the folding thread.
    final class ChunkQueue: @unchecked Sendable {
        // @unchecked: the hand-off is thread-safe; nothing else is shared.
        static let chunkEvents = 4096
        /// A chunk also ends at this many sample headers (~64 bytes each).
        static let chunkSamples = 65_536
        /// The saves of a chunk are decoded in full whenever this many bytes of their
        /// payloads wait (and when it is handed over), so that the buffer they are
        /// copied to stays about this small.
        static let payloadBytes = 1 << 20
        private let handOff: BoundedHandOff<Chunk>
        /// Chunks the folding thread is done with, for the reader to fill again; none
        /// are kept once the reader is done (`closed`).
        private let spares = Locked<(chunks: [Chunk], closed: Bool)>(([], false))

        init(capacity: Int) { handOff = BoundedHandOff(capacity: capacity) }

        /// The reader thread: scan, decode, hand over.
        /// `through`: no batch starting at or after this offset is read (the end the
        /// erasure index was read to).
        func produce(reader: LogReader, position: LogReader.Position, decodeFully: Bool, erasures: ErasureIndex,
                     through: UInt64 = .max) {
            defer { spares.withLock { $0 = ([], true) } }
            var chunk = Chunk()
            // The saves' payloads, copied for their full decode (reused from chunk to chunk).
            var payloads: [UInt8] = []
            var registry = AppRegistry()
            var batchStart = position
            do {
                let end = try reader.forEachBatch(position: position) { batch in
                    if self.handOff.isCancelled || batch.offset >= through { return false }
                    // Bound once a batch: the record closure reading the captured variable
                    // retained and released the chunk for every record.
                    let filling = chunk
                    batch.forEachRecord { record in
                        var item = Chunk.Item(sequence: record.sequence, recordedAt: record.recordedAt, offset: record.offset,
                                              kind: record.kind, facts: nil)
                        item.facts = Self.decode(record, decodeFully: decodeFully, registry: &registry, chunk: filling,
                                                 payloads: &payloads, erasures: erasures)
                        if record.kind == EventKind.importStarted.rawValue, case .other(let e)? = item.facts,
                           case .importStarted(let start) = filling.events[e], start.isTransaction {
                            // Look ahead for its end before anything of it is folded.
                            item.transaction = .start(importId: start.importId,
                                                      close: ImportBrackets.close(of: start.importId, startedAt: record.sequence,
                                                                                  scanningFrom: batchStart, reader: reader))
                        }
                        filling.items.append(item)
                    }
                    batchStart = batch.endPosition
                    chunk.batches.append(Chunk.Boundary(lastItem: chunk.items.count - 1, end: batch.endPosition))
                    if chunk.items.count >= Self.chunkEvents || chunk.headers.count >= Self.chunkSamples {
                        guard self.put(chunk, payloads: &payloads) else { return false }
                        chunk = self.spares.withLock { $0.chunks.popLast() } ?? Chunk()
                    } else if payloads.count >= Self.payloadBytes {
                        // Decoded before the chunk is full: the buffer stays small.
                        chunk.validateSaves(payloads)
                        payloads.removeAll(keepingCapacity: true)
                    }
                    return true
                }
                chunk.scanEnd = end
                putLast(&chunk, payloads: &payloads)
                handOff.finish()
            } catch {
                putLast(&chunk, payloads: &payloads)
                handOff.finish(throwing: error)
            }
        }

        /// The folding thread is done with `chunk`: the reader may fill it again.
        func recycle(_ chunk: Chunk) {
            chunk.reset()
            spares.withLock { if !$0.closed { $0.chunks.append(chunk) } }
        }

        private static func decode(_ record: borrowing RecordView, decodeFully: Bool, registry: inout AppRegistry,
                                   chunk: Chunk, payloads: inout [UInt8], erasures: ErasureIndex) -> Chunk.Facts {
            switch erasures.disposition(keyId: record.sealedKeyId, sequence: record.sequence) {
            case .fold: break
            case .passOver: return .erased
            case .replace(let event):
                chunk.events.append(event)
                return .other(chunk.events.count - 1)
            case .forged:
                chunk.errors.append(ErasureIndex.forgery)
                return .undecodable(chunk.errors.count - 1)
            }
            do throws(EventDecodingError) {
                // One definition of a valid event: every event, saves included, goes
                // through the full decoder (the model's constructors). Saves are folded
                // from their headers; `validateSaves` decodes them in full, on all cores,
                // before the chunk is handed over.
                if record.kind != EventKind.samplesSaved.rawValue {
                    let known = registry
                    let event = try EventCodec.decode(record, source: decodeFully ? { known.source($0) } : nil)
                    if case .appRegistered(let ordinal, let r) = event { registry.register(ordinal, r) }
                    chunk.events.append(event)
                    return .other(chunk.events.count - 1)
                }
                // A save's headers go straight into the chunk (no intermediate arrays).
                let h = chunk.headers.count, s = chunk.strings.count
                let version = record.kindVersion
                if let failure = record.sealFailure { throw .sealedRecordUnopened(failure) }
                try SealScopes.requireSealed(kind: record.kind, inSealedLog: record.inSealedLog, sealed: record.sealedKeyId != nil)
                let app = try record.withPayload { (payload) throws(EventDecodingError) -> AppOrdinal in
                    try EventFacts.readSave(version: version, payload: payload, into: &chunk.headers, strings: &chunk.strings)
                }
                // Copied out: the batch's buffer does not outlive this callback. The
                // source is the app as registered at this point of the log (the header
                // reader's app is the ordinal the full decoder reads).
                let start = payloads.count
                record.appendPayload(to: &payloads)
                var source: Int32 = -1
                if decodeFully, let known = registry.source(app) {
                    source = Int32(chunk.saveSources.count)
                    chunk.saveSources.append(known)
                }
                chunk.saves.append(Chunk.PendingSave(item: chunk.items.count, bytes: start..<payloads.count,
                                                     version: version, source: source))
                return .save(app: app, headers: h..<chunk.headers.count, strings: s..<chunk.strings.count)
            } catch {
                // A save the header reader refuses is named by the full decoder's error
                // when that fails too (rare: the cost does not matter).
                var named = error
                if record.kind == EventKind.samplesSaved.rawValue {
                    let known = registry
                    do throws(EventDecodingError) {
                        _ = try EventCodec.decode(record, source: decodeFully ? { known.source($0) } : nil)
                    } catch {
                        named = error
                    }
                }
                chunk.errors.append(named)
                return .undecodable(chunk.errors.count - 1)
            }
        }

        /// Hands over the last chunk, compacted, after letting go of every reused chunk
        /// and buffer: the last chunk is folded while a snapshot at the end of the log
        /// is compared, the moment memory peaks.
        private func putLast(_ chunk: inout Chunk, payloads: inout [UInt8]) {
            let last = chunk.compacted()
            chunk = Chunk(reserving: false)
            spares.withLock { $0 = ([], true) }
            last.validateSaves(payloads)
            payloads = []
            _ = handOff.put(last)
        }

        /// Blocks while the queue is full; false when the consumer went away.
        private func put(_ chunk: Chunk, payloads: inout [UInt8]) -> Bool {
            chunk.validateSaves(payloads)
            payloads.removeAll(keepingCapacity: true)
            return handOff.put(chunk)
        }

        /// The next chunk; nil at the end. Rethrows the reader's error after the chunks
        /// read before it.
        func next() throws -> Chunk? { try handOff.next() }

        /// Stops the reader thread (the consumer is done).
        func cancel() { handOff.cancel() }
    }
}
