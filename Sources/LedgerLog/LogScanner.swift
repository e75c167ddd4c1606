import LedgerChecksums

/// Reads a log's batches in order and checks each against the format's validity
/// rules. Shared by the reader, the writer's recovery and `verify`, so that all
/// three agree on what a valid log is.
///
/// Reads through a window buffer (4 MiB, or one batch when larger), so memory is
/// bounded by the largest batch whatever the log's size.
final class LogScanner {
    /// What `next()` found.
    enum Step {
        /// A valid batch; the view stays valid until the next call.
        case batch(BatchView)
        /// Clean end of the log (or of the part present when the scan started).
        case end
        /// Bytes at the current position fail a rule; the scanner does not move.
        case invalid(LogDamage)
    }

    let file: any LogFile
    /// The file length when the scan started: the reader's consistent snapshot.
    let end: UInt64
    /// Where the next batch starts.
    private(set) var offset: UInt64
    /// The sequence number the next record must have.
    private(set) var nextSequence: UInt64
    /// The link of the last valid batch (the chain head so far).
    private(set) var link: SHA256Digest
    /// The latest record time seen.
    private(set) var lastRecordedAt: Int64
    /// Recompute links (B8) rather than trusting the stored ones.
    let checkChain: Bool
    /// Check every record (R1–R7, B7), not only batch headers.
    let checkRecords: Bool
    /// The log's format allows sealed records (version 2): a record's word at offset
    /// 28 is then its flags (R6, R7).
    let sealedRecords: Bool

    private var window: UnsafeMutableRawBufferPointer
    private var windowStart: UInt64 = 0
    private var windowCount = 0
    static let windowSize = 4 << 20

    init(file: any LogFile, end: UInt64, offset: UInt64, nextSequence: UInt64, link: SHA256Digest,
         lastRecordedAt: Int64, checkChain: Bool, checkRecords: Bool, sealedRecords: Bool) {
        precondition(offset >= UInt64(LogFormat.fileHeaderLength) && offset <= end && nextSequence >= 1)
        self.sealedRecords = sealedRecords
        self.file = file
        self.end = end
        self.offset = offset
        self.nextSequence = nextSequence
        self.link = link
        self.lastRecordedAt = lastRecordedAt
        self.checkChain = checkChain
        self.checkRecords = checkRecords
        // Small logs get a small window; large ones the full 4 MiB.
        window = .allocate(byteCount: Int(min(UInt64(Self.windowSize), max(end - offset, 4096))), alignment: 16)
    }

    deinit { window.deallocate() }

    /// Makes bytes [position, position + count) available; returns a view of them.
    private func bytes(at position: UInt64, count: Int) throws -> UnsafeRawBufferPointer {
        if position >= windowStart, position + UInt64(count) <= windowStart + UInt64(windowCount) {
            let start = Int(position - windowStart)
            return UnsafeRawBufferPointer(rebasing: window[start..<start + count])
        }
        if count > window.count {
            window.deallocate()
            window = .allocate(byteCount: count, alignment: 16)
        }
        let want = Int(min(UInt64(window.count), end - position))
        let got = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: window[0..<want]), at: position)
        windowStart = position
        windowCount = got
        guard got >= count else { throw FileShrank() }
        return UnsafeRawBufferPointer(rebasing: window[0..<count])
    }

    /// The file became shorter than `end` during the scan.
    private struct FileShrank: Error {}

    /// Validates the batch at `offset` and, when valid, moves past it.
    ///
    /// A file that shrinks under a reader (a writer closing cuts its reserved zero
    /// tail; a recovering writer cuts an unacknowledged torn tail) ends the scan at
    /// the last whole batch: what was cut was never part of the log.
    func next() throws -> Step {
        do {
            return try step()
        } catch is FileShrank {
            return .end
        }
    }

    private func step() throws -> Step {
        let position = offset
        let remaining = end - position
        if remaining == 0 { return .end }
        func damage(_ kind: LogDamage.Kind, _ at: UInt64, _ length: UInt64?, _ sequence: UInt64?) -> Step {
            .invalid(LogDamage(kind: kind, offset: at, length: length, sequence: sequence, inDurablePrefix: false))
        }
        // Z1: zeros to the end of the file are space a writer reserved: the log ends here.
        if try zerosToEnd(from: position) {
            zeroTail = remaining
            return .end
        }
        // B3 (short): not even a header fits.
        guard remaining >= UInt64(LogFormat.batchHeaderLength) else {
            return damage(.trailingBytes, position, remaining, nextSequence)
        }
        let head = try bytes(at: position, count: LogFormat.batchHeaderLength)
        // B1, B2, B5.
        guard let header = BatchHeader.decode(head) else {
            return damage(.batchHeader, position, UInt64(LogFormat.batchHeaderLength), nextSequence)
        }
        // B4: dense sequence numbers across batches.
        guard header.firstSequence == nextSequence else {
            return damage(.sequenceGap, position, UInt64(LogFormat.batchHeaderLength), nextSequence)
        }
        // B6: a batch can only vouch for bytes before it.
        guard header.syncedLength <= position else {
            return damage(.syncedLengthInvalid, position, UInt64(LogFormat.batchHeaderLength), nextSequence)
        }
        // B3: the batch lies within the file.
        guard UInt64(header.batchLength) <= remaining else {
            return damage(.batchTruncated, position, remaining, nextSequence)
        }
        let batch = try bytes(at: position, count: header.batchLength)
        let bodyEnd = header.batchLength - LogFormat.linkLength
        var recordedAt = lastRecordedAt
        if checkRecords {
            // B7, R1–R7.
            let flagsAllowed = sealedRecords ? LogFormat.recordFlagSealed : 0
            var o = LogFormat.batchHeaderLength
            var index = 0
            while o < bodyEnd {
                let at = position + UInt64(o)
                let sequence = header.firstSequence + UInt64(index)
                guard bodyEnd - o >= LogFormat.recordHeaderLength, index < header.recordCount else {
                    return damage(.recordFraming, at, UInt64(bodyEnd - o), sequence)
                }
                let length = Int(UInt32(littleEndian: batch.loadUnaligned(fromByteOffset: o + 4, as: UInt32.self)))
                let total = LogFormat.recordHeaderLength + length
                guard length <= LogFormat.payloadLengthMax, total <= bodyEnd - o else {
                    return damage(.recordFraming, at, UInt64(min(total, bodyEnd - o)), sequence)
                }
                let stored = UInt32(littleEndian: batch.loadUnaligned(fromByteOffset: o, as: UInt32.self))
                guard stored == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: batch[o + 4..<o + total])) else {
                    return damage(.recordChecksum, at, UInt64(total), sequence)
                }
                guard UInt64(littleEndian: batch.loadUnaligned(fromByteOffset: o + 8, as: UInt64.self)) == sequence else {
                    return damage(.recordSequence, at, UInt64(total), sequence)
                }
                let time = Int64(littleEndian: batch.loadUnaligned(fromByteOffset: o + 16, as: Int64.self))
                guard time >= recordedAt else { return damage(.recordTimeOrder, at, UInt64(total), sequence) }
                recordedAt = time
                let kind = UInt16(littleEndian: batch.loadUnaligned(fromByteOffset: o + 24, as: UInt16.self))
                let version = UInt16(littleEndian: batch.loadUnaligned(fromByteOffset: o + 26, as: UInt16.self))
                let flags = UInt32(littleEndian: batch.loadUnaligned(fromByteOffset: o + 28, as: UInt32.self))
                // R5, R6 (flags: none in version 1, only `sealed` in 2), R7 (a sealed
                // payload holds at least its keyId, salt and tag).
                guard kind != 0, version != 0, flags & ~flagsAllowed == 0,
                      flags & LogFormat.recordFlagSealed == 0 || length >= SealedRecord.overhead else {
                    return damage(.recordFields, at, UInt64(total), sequence)
                }
                o += total
                index += 1
            }
            guard index == header.recordCount else {
                return damage(.recordFraming, position, UInt64(header.batchLength), header.firstSequence + UInt64(index))
            }
        }
        let storedLink = SHA256Digest(UnsafeRawBufferPointer(rebasing: batch[bodyEnd..<header.batchLength]))
        if checkChain {
            // B8.
            let computed = BatchChain.link(previous: link, batchBody: UnsafeRawBufferPointer(rebasing: batch[0..<bodyEnd]))
            guard computed == storedLink else {
                let last = header.recordCount > 0 ? header.firstSequence + UInt64(header.recordCount) - 1 : header.firstSequence
                return damage(.chainMismatch, position + UInt64(bodyEnd), UInt64(LogFormat.linkLength), last)
            }
        }
        offset = position + UInt64(header.batchLength)
        nextSequence = header.firstSequence + UInt64(header.recordCount)
        link = storedLink
        lastRecordedAt = recordedAt
        return .batch(BatchView(offset: position, header: header, bytes: batch))
    }

    /// What `nextClassified()` found.
    enum Classified {
        case batch(BatchView)
        case end
        /// Invalid bytes that a later batch (or seal) proves were durable: damage.
        case damaged(LogDamage)
        /// Invalid bytes no later batch vouches for: a torn tail, or a batch a
        /// concurrent writer has not finished.
        case incompleteTail(LogDamage)
    }

    /// `next()`, with invalid bytes classified by the recovery decision table
    /// (FORMAT.md): damage when a later valid batch claims them durable, else a torn
    /// tail. Before calling anything damage, the batch is read again: a reader racing
    /// a writer may have read it half written, and bytes a later batch proves durable
    /// are final, so a fresh read is authoritative.
    func nextClassified() throws -> Classified {
        switch try next() {
        case .batch(let batch): return .batch(batch)
        case .end: return .end
        case .invalid(let damage):
            let claimed = try durableLengthClaimed(after: offset)
            guard offset < claimed else { return .incompleteTail(damage) }
            windowCount = 0
            switch try next() {
            case .batch(let batch): return .batch(batch)
            case .end: return .end
            case .invalid(let again): return .damaged(again.withDurability(true))
            }
        }
    }

    /// Bytes of reserved zeros found after the last batch (0 when the file ends there).
    private(set) var zeroTail: UInt64 = 0

    /// Whether every byte from `position` to the end is zero. Cheap when it is not:
    /// the first 8 bytes of a batch (its magic) are never zero.
    private func zerosToEnd(from position: UInt64) throws -> Bool {
        let first = try bytes(at: position, count: Int(min(8, end - position)))
        if first.contains(where: { $0 != 0 }) { return false }
        var at = position
        while at < end {
            let count = Int(min(UInt64(window.count), end - at))
            let view = try bytes(at: at, count: count)
            var i = 0
            while i + 8 <= count {
                if view.loadUnaligned(fromByteOffset: i, as: UInt64.self) != 0 { return false }
                i += 8
            }
            while i < count {
                if view[i] != 0 { return false }
                i += 1
            }
            at += UInt64(count)
        }
        return true
    }

    /// The largest `syncedLength` claimed by any valid batch header found after
    /// `position` (searching every byte offset for the batch magic; valid: B1, B2
    /// and B5 as `BatchHeader.decode` checks them, and B6 at its offset): bytes below it
    /// were durable when a later batch was written, so damage there is corruption,
    /// not a torn tail.
    func durableLengthClaimed(after position: UInt64) throws -> UInt64 {
        var claimed: UInt64 = 0
        var start = position + 1
        let chunk = Int(min(UInt64(1 << 20), max(end - position, 4096)))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk + LogFormat.batchHeaderLength, alignment: 16)
        defer { buffer.deallocate() }
        while start + UInt64(LogFormat.batchHeaderLength) <= end {
            let want = Int(min(UInt64(buffer.count), end - start))
            let got = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: start)
            guard got >= LogFormat.batchHeaderLength else { break }
            let view = UnsafeRawBufferPointer(rebasing: buffer[0..<got])
            var i = 0
            while i + LogFormat.batchHeaderLength <= got {
                if view[i] == 0x48, view.loadUnaligned(fromByteOffset: i, as: UInt32.self) == LogFormat.batchMagic.littleEndian,
                   let header = BatchHeader.decode(UnsafeRawBufferPointer(rebasing: view[i..<i + LogFormat.batchHeaderLength])),
                   header.syncedLength <= start + UInt64(i) {
                    claimed = max(claimed, header.syncedLength)
                }
                i += 1
            }
            start += UInt64(got - LogFormat.batchHeaderLength + 1)
        }
        return claimed
    }
}

/// A valid batch as the scanner found it. `bytes` points into the scanner's window
/// and is valid only until the scanner's next call.
struct BatchView {
    let offset: UInt64
    let header: BatchHeader
    let bytes: UnsafeRawBufferPointer

    /// Lends `body` each record (already validated when the scanner checked records).
    /// A sealed record (R6, version 2 only) is opened with `opening`'s keys into a
    /// buffer of this call's, and lent with its plaintext payload; one that cannot be
    /// opened (no keys, the key destroyed or unknown, the tag broken) is lent with
    /// `sealFailure` set and an empty payload.
    func forEachRecord<E: Error>(opening: RecordOpening? = nil, sealedLog: Bool = false,
                                 _ body: (borrowing RecordView) throws(E) -> Void) throws(E) {
        var o = LogFormat.batchHeaderLength
        let bodyEnd = header.batchLength - LogFormat.linkLength
        var plaintext: UnsafeMutableRawBufferPointer?
        defer { plaintext?.deallocate() }
        while o < bodyEnd {
            let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: o + 4, as: UInt32.self)))
            let flags = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: o + 28, as: UInt32.self))
            let framed = UnsafeRawBufferPointer(rebasing: bytes[o..<o + LogFormat.recordHeaderLength + length])
            var payload = UnsafeRawBufferPointer(rebasing: framed[LogFormat.recordHeaderLength...])
            var failure: RecordSealFailure?
            var keyId: UInt64?
            if flags & LogFormat.recordFlagSealed != 0 {
                let id = SealedRecord.keyId(framed: framed)
                keyId = id
                let count = length - SealedRecord.overhead
                if plaintext == nil || plaintext!.count < count {
                    plaintext?.deallocate()
                    plaintext = .allocate(byteCount: max(count, 64), alignment: 16)
                }
                let out = UnsafeMutableRawBufferPointer(rebasing: plaintext![0..<count])
                let refused: RecordSealFailure.Reason? = opening.map { $0.open(framed: framed, into: out) } ?? .noKeys
                if let refused {
                    failure = RecordSealFailure(keyId: id, reason: refused)
                    payload = UnsafeRawBufferPointer(rebasing: framed[0..<0])
                } else {
                    payload = UnsafeRawBufferPointer(out)
                }
            }
            let record = RecordView(
                offset: offset + UInt64(o),
                sequence: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: o + 8, as: UInt64.self)),
                recordedAt: Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: o + 16, as: Int64.self)),
                kind: UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: o + 24, as: UInt16.self)),
                kindVersion: UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: o + 26, as: UInt16.self)),
                framed: framed, payload: payload, sealedKeyId: keyId, sealFailure: failure, inSealedLog: sealedLog)
            try body(record)
            o += LogFormat.recordHeaderLength + length
        }
    }
}

/// A record seen in place, lent to the callback that gets it.
///
/// Its bytes live in the scanner's window, so it is not copyable and only ever lent
/// (`borrowing`): it cannot outlive the callback. Its payload is lent in turn, as a
/// `RawSpan`, which cannot escape the closure it is given to (`withPayload`).
package struct RecordView: ~Copyable {
    /// Byte offset of the record in the log file.
    package let offset: UInt64
    package let sequence: UInt64
    /// Nanoseconds since the Unix epoch.
    package let recordedAt: Int64
    package let kind: UInt16
    package let kindVersion: UInt16
    /// The record as framed in the log: its 32-byte header, then the payload as
    /// stored (a sealed record's ciphertext).
    private let framed: UnsafeRawBufferPointer
    /// The payload: as stored, or a sealed record's plaintext (empty when it could not
    /// be opened).
    private let payload: UnsafeRawBufferPointer
    /// The data key a sealed record names (nil for a plain record).
    package let sealedKeyId: UInt64?
    /// Why a sealed record's payload could not be opened (nil: plain, or opened).
    package let sealFailure: RecordSealFailure?
    /// The record is in a log of format version 2 (one that may hold sealed records):
    /// the layer above refuses a plain record of a kind it seals there.
    package let inSealedLog: Bool

    init(offset: UInt64, sequence: UInt64, recordedAt: Int64, kind: UInt16, kindVersion: UInt16,
         framed: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer, sealedKeyId: UInt64? = nil,
         sealFailure: RecordSealFailure? = nil, inSealedLog: Bool = false) {
        self.inSealedLog = inSealedLog
        self.offset = offset
        self.sequence = sequence
        self.recordedAt = recordedAt
        self.kind = kind
        self.kindVersion = kindVersion
        self.framed = framed
        self.payload = payload
        self.sealedKeyId = sealedKeyId
        self.sealFailure = sealFailure
    }

    /// The payload's length in bytes (a sealed record's plaintext length).
    package var payloadCount: Int { payload.count }

    /// Lends the payload to `body` (a sealed record's plaintext; empty when
    /// `sealFailure` says why it could not be opened).
    package func withPayload<Result, E: Error>(_ body: (RawSpan) throws(E) -> Result) throws(E) -> Result {
        try body(unsafe payload.bytes)
    }

    /// Lends the record as framed in the log (header and payload: a Merkle leaf's input).
    package func withFramedBytes<Result, E: Error>(_ body: (RawSpan) throws(E) -> Result) throws(E) -> Result {
        try body(unsafe framed.bytes)
    }

    /// A copy of the payload.
    package func payloadCopy() -> [UInt8] {
        Array(payload)
    }

    /// Appends the payload to `bytes`.
    package func appendPayload(to bytes: inout [UInt8]) {
        bytes.append(contentsOf: payload)
    }

    /// A copy that outlives the callback: the payload a plain record stores, or a
    /// sealed record's plaintext.
    /// - Throws: `LogError.sealedRecordUnopened` for a sealed record that could not be opened.
    package func stored() throws(LogError) -> StoredRecord {
        if let sealFailure { throw .sealedRecordUnopened(sequence: sequence, failure: sealFailure) }
        return StoredRecord(sequence: sequence, recordedAt: recordedAt, kind: kind, kindVersion: kindVersion,
                            payload: payloadCopy(), offset: offset, sealedKeyId: sealedKeyId)
    }
}
