import LedgerChecksums

/// A valid batch seen during a scan, lent to the callback that gets it.
///
/// Its bytes live in the scanner's window and change at the scanner's next step, so
/// it is not copyable and is only ever lent (`borrowing`): it cannot be kept past the
/// callback, and neither can its records (`forEachRecord`).
package struct LogBatch: ~Copyable {
    let view: BatchView
    /// How the reader opens sealed records.
    let opening: RecordOpening
    /// The log is format version 2.
    let sealedLog: Bool
    /// Byte offset of the batch.
    package var offset: UInt64 { view.offset }
    /// Byte offset after the batch: a position to resume from.
    package let endOffset: UInt64
    /// The batch's link (the chain head once it is read).
    package let link: SHA256Digest
    package var firstSequence: UInt64 { view.header.firstSequence }
    package var recordCount: Int { view.header.recordCount }
    /// A seal (clean close), holding no records.
    package var isSeal: Bool { view.header.isSeal }
    /// The position after this batch.
    package var endPosition: LogReader.Position {
        LogReader.Position(offset: endOffset, nextSequence: firstSequence + UInt64(recordCount), link: link)
    }

    /// Lends each record of the batch to `body`, in order.
    /// A sealed record comes opened (its plaintext payload), or with `sealFailure`.
    package func forEachRecord<E: Error>(_ body: (borrowing RecordView) throws(E) -> Void) throws(E) {
        try view.forEachRecord(opening: opening, sealedLog: sealedLog, body)
    }
}

/// Reads a ledger's log without taking the writer's lock.
///
/// A scan sees a consistent prefix: the file's length is read once when the scan
/// starts, every batch is validated (checksums, and the chain on request) before any
/// of its records is shown, and a batch a concurrent writer has not finished is
/// treated as the end. Memory is bounded by the scan window (4 MiB or the largest
/// batch), whatever the log's size.
package final class LogReader: Sendable {
    /// The decoded file header.
    package let header: LogFileHeader
    private let fs: any LogFileSystem
    private let file: any LogFile
    private let genesis: SHA256Digest
    /// The length `index/log.idx` proved durable (I3), read once: the index only
    /// grows, so an older value is a safe lower bound.
    private let knownDurable = Locked<UInt64?>(nil)
    private let shortEnd = Locked<LogDamage?>(nil)

    /// The incomplete tail the last scan that reached one stopped at (nil when every
    /// scan read to the file's end): tools warn when a read stopped short.
    package var stoppedShort: LogDamage? { shortEnd.withLock { $0 } }

    /// How sealed records are opened (the keys given, or none).
    package let opening: RecordOpening

    /// Opens the log of the ledger folder for reading; `keys` (by default the location's,
    /// `fs.recordKeys`) open its sealed records (without them every sealed record is
    /// lent unopened, `sealFailure` `noKeys`: framing, checksums and the chain are
    /// still checked).
    package init(_ fs: any LogFileSystem, keys: (any RecordKeys)?? = nil) throws {
        guard fs.exists(LogWriter.logFileName) else { throw LogError.ledgerNotFound(path: fs.path) }
        self.fs = fs
        file = try fs.open(LogWriter.logFileName, .readOnly)
        let opened = try LogOpening(fs: fs, file: file)
        header = opened.header
        genesis = opened.genesis
        opening = RecordOpening(keys: keys ?? fs.recordKeys, ledgerId: opened.header.ledgerId)
    }

    /// A reader of the same log that opens no sealed record (each is lent unopened,
    /// `noKeys`): a pass over the framing that costs no decryption.
    package func unopened() throws -> LogReader { try LogReader(fs, keys: .some(nil)) }

    /// How a scan ended.
    package struct ScanEnd: Sendable, Equatable {
        /// Byte offset after the last valid batch.
        package let endOffset: UInt64
        /// The sequence number after the last record seen.
        package let nextSequence: UInt64
        /// The link of the last valid batch (the chain head).
        package let chainHead: SHA256Digest
        /// Invalid bytes after the last valid batch that no later batch proves durable:
        /// a write in progress or a torn tail (a writer's open would cut them).
        package let incompleteTail: LogDamage?
        /// True when the body asked to stop early.
        package let stoppedEarly: Bool
    }

    /// Calls `body` for every record with a sequence number ≥ `sequence`, in order,
    /// until it returns false. Throws `LogError.damaged` for damage inside the durable
    /// part of the log. `verifyChain` also recomputes every batch's link (from the
    /// start of the log, or from the link stored before the first batch read).
    @discardableResult
    package func forEachRecord(from sequence: UInt64 = 1, verifyChain: Bool = false,
                              _ body: (borrowing RecordView) throws -> Bool) throws -> ScanEnd {
        var keepGoing = true
        var end = try forEachBatch(from: sequence, verifyChain: verifyChain) { batch in
            try batch.forEachRecord { record in
                guard keepGoing, record.sequence >= sequence else { return }
                keepGoing = try body(record)
            }
            return keepGoing
        }
        if !keepGoing { end = ScanEnd(endOffset: end.endOffset, nextSequence: end.nextSequence, chainHead: end.chainHead,
                                      incompleteTail: nil, stoppedEarly: true) }
        return end
    }

    /// A position in the log between batches: where to resume a scan.
    package struct Position: Sendable, Hashable {
        /// Byte offset of the next batch.
        package let offset: UInt64
        /// The sequence number the next record has.
        package let nextSequence: UInt64
        /// The link of the batch ending at `offset` (the genesis link at the start).
        package let link: SHA256Digest

        package init(offset: UInt64, nextSequence: UInt64, link: SHA256Digest) {
            self.offset = offset
            self.nextSequence = nextSequence
            self.link = link
        }
    }

    /// The start of the log.
    package var start: Position {
        Position(offset: UInt64(LogFormat.fileHeaderLength), nextSequence: 1, link: genesis)
    }

    /// Lends `body` every valid batch (seals included) that holds records with
    /// sequence numbers ≥ `sequence` (or, with `position`, from that position), in
    /// order, until it returns false.
    @discardableResult
    package func forEachBatch(from sequence: UInt64 = 1, position: Position? = nil, verifyChain: Bool = false,
                             _ body: (borrowing LogBatch) throws -> Bool) throws -> ScanEnd {
        let size = try file.size()
        var start = position ?? self.start
        if position == nil, sequence > 1,
           let checkpoint = LogCheckpoint.load(fs, log: file, logLength: size, ledgerId: header.ledgerId, genesis: genesis),
           let entry = checkpoint.entry(before: sequence), entry.offset >= UInt64(LogFormat.fileHeaderLength + LogFormat.linkLength) {
            var stored = [UInt8](repeating: 0, count: LogFormat.linkLength)
            _ = try stored.withUnsafeMutableBytes { try file.read(into: $0, at: entry.offset - UInt64(LogFormat.linkLength)) }
            start = Position(offset: entry.offset, nextSequence: entry.firstSequence, link: SHA256Digest(stored))
        }
        // I3: a log shorter than a length known durable lost acknowledged bytes. The
        // size is read again first: a writer may have grown the log (and saved the
        // index) since the first read.
        // A store that commits every byte vouches for all this scan sees.
        let knownDurable = fs.storeCommitsEveryByte ? size : knownDurableLength()
        if knownDurable > size, try file.size() < knownDurable {
            throw LogError.damaged(LogDamage(kind: .truncatedBelowDurable, offset: size, length: knownDurable - size,
                                             sequence: nil, inDurablePrefix: true))
        }
        guard start.offset <= size else { throw LogError.sequenceNotFound(start.nextSequence) }
        let scanner = LogScanner(file: file, end: size, offset: start.offset, nextSequence: start.nextSequence,
                                 link: start.link, lastRecordedAt: .min, checkChain: verifyChain, checkRecords: true,
                                 sealedRecords: header.allowsSealedRecords)
        while true {
            switch try scanner.nextClassified() {
            case .end:
                return ScanEnd(endOffset: scanner.offset, nextSequence: scanner.nextSequence, chainHead: scanner.link,
                               incompleteTail: nil, stoppedEarly: false)
            case .damaged(let damage):
                throw LogError.damaged(damage)
            case .incompleteTail(let damage):
                if scanner.offset < knownDurable { throw LogError.damaged(damage.withDurability(true)) }
                shortEnd.withLock { $0 = damage }
                return ScanEnd(endOffset: scanner.offset, nextSequence: scanner.nextSequence, chainHead: scanner.link,
                               incompleteTail: damage, stoppedEarly: false)
            case .batch(let view):
                let last = view.header.firstSequence + UInt64(view.header.recordCount)
                if last <= sequence && !view.header.isSeal { continue }
                let batch = LogBatch(view: view, opening: opening, sealedLog: header.allowsSealedRecords,
                                     endOffset: scanner.offset, link: scanner.link)
                if try !body(batch) {
                    return ScanEnd(endOffset: scanner.offset, nextSequence: scanner.nextSequence, chainHead: scanner.link,
                                   incompleteTail: nil, stoppedEarly: true)
                }
            }
        }
    }

    private func knownDurableLength() -> UInt64 {
        knownDurable.withLock { known in
            if let known { return known }
            let value = LogCheckpoint.knownDurableLength(fs, ledgerId: header.ledgerId, seenLength: 0) ?? 0
            known = value
            return value
        }
    }

    /// Copies of the records with sequence numbers in `range` (for tools and tests;
    /// scans use `forEachRecord`).
    package func records(_ range: ClosedRange<UInt64>) throws -> [StoredRecord] {
        var out: [StoredRecord] = []
        try forEachRecord(from: range.lowerBound) { record in
            guard record.sequence <= range.upperBound else { return false }
            out.append(try record.stored())
            return true
        }
        return out
    }

    /// The record with `sequence`, found through the sparse index.
    package func record(sequence: UInt64) throws -> StoredRecord {
        guard let found = try records(sequence...sequence).first else { throw LogError.sequenceNotFound(sequence) }
        return found
    }

    /// The record starting at byte `offset` (as the scanner reported it), checked
    /// against its own checksum (and a sealed record opened). This is how projections
    /// that hold log offsets fetch a record without scanning.
    /// - Throws: `LogError.damaged`; `LogError.sealedRecordUnopened` for a sealed
    ///   record this reader cannot open.
    package func record(atOffset offset: UInt64) throws -> StoredRecord {
        var head = [UInt8](repeating: 0, count: LogFormat.recordHeaderLength)
        let got = try head.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
        let damage = LogError.damaged(LogDamage(kind: .recordChecksum, offset: offset, length: nil, sequence: nil,
                                                inDurablePrefix: true))
        guard got == LogFormat.recordHeaderLength else { throw damage }
        let length = head.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self))) }
        guard length <= LogFormat.payloadLengthMax else { throw damage }
        var bytes = [UInt8](repeating: 0, count: LogFormat.recordHeaderLength + length)
        let read = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
        guard read == bytes.count else { throw damage }
        return try bytes.withUnsafeBytes { b in
            let crc = UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
            guard crc == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[4...])) else { throw damage }
            let sequence = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            var payload = Array(b[LogFormat.recordHeaderLength...])
            var keyId: UInt64?
            let flags = UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 28, as: UInt32.self))
            if header.allowsSealedRecords, flags & LogFormat.recordFlagSealed != 0 {
                guard length >= SealedRecord.overhead else { throw damage }
                keyId = SealedRecord.keyId(framed: b)
                switch SealedRecord.open(framed: b, opening: opening) {
                case .success(let plaintext): payload = plaintext
                case .failure(let failure):
                    throw LogError.sealedRecordUnopened(sequence: sequence, failure: failure)
                }
            }
            return StoredRecord(
                sequence: sequence,
                recordedAt: Int64(littleEndian: b.loadUnaligned(fromByteOffset: 16, as: Int64.self)),
                kind: UInt16(littleEndian: b.loadUnaligned(fromByteOffset: 24, as: UInt16.self)),
                kindVersion: UInt16(littleEndian: b.loadUnaligned(fromByteOffset: 26, as: UInt16.self)),
                payload: payload, offset: offset, sealedKeyId: keyId)
        }
    }

    /// The stored link at the end of the batch that ends at byte `offset`
    /// (the genesis link for offset 64): how snapshots prove they belong here.
    package func link(endingAt offset: UInt64) throws -> SHA256Digest {
        if offset == UInt64(LogFormat.fileHeaderLength) { return genesis }
        guard offset >= UInt64(LogFormat.fileHeaderLength + LogFormat.batchLengthMin) else {
            throw LogError.noBatchEndsAt(offset: offset)
        }
        var stored = [UInt8](repeating: 0, count: LogFormat.linkLength)
        let got = try stored.withUnsafeMutableBytes { try file.read(into: $0, at: offset - UInt64(LogFormat.linkLength)) }
        guard got == LogFormat.linkLength else { throw LogError.noBatchEndsAt(offset: offset) }
        return SHA256Digest(stored)
    }

    /// The log file's current length.
    package func size() throws -> UInt64 { try file.size() }
}
