import LedgerChecksums

/// Records to append together, built in place in the bytes they will have on disk.
///
/// A batch is the unit of commit: after a crash either all of its records are in the
/// log or none is. Payloads are copied (or encoded) straight into the batch buffer,
/// so appending a million small records costs no per-record allocation.
public struct RecordBatch: Sendable {
    /// Header space, records, and (once sealed by the writer) the link.
    var bytes: [UInt8]
    /// Number of records.
    public private(set) var count = 0
    /// The largest payload appended, to refuse oversize records early.
    private(set) var oversize: Int?
    /// Where each record starts, relative to the start of the batch (its offset in
    /// the log is the batch's offset plus this).
    public private(set) var recordStarts: [Int] = []

    /// An empty batch; `capacity` is a hint in bytes.
    public init(capacity: Int = 4096) {
        bytes = [UInt8](repeating: 0, count: LogFormat.batchHeaderLength)
        bytes.reserveCapacity(capacity + LogFormat.batchLengthMin)
    }

    /// A batch of the given records.
    public init(_ records: [LogRecord]) {
        self.init(capacity: records.reduce(0) { $0 + $1.payload.count + LogFormat.recordHeaderLength })
        for r in records { append(kind: r.kind, version: r.kindVersion, payload: r.payload) }
    }

    private static let blankRecordHeader = [UInt8](repeating: 0, count: LogFormat.recordHeaderLength)

    /// Bytes the batch will take on disk once the writer adds its link.
    public var encodedLength: Int { bytes.count + LogFormat.linkLength }

    /// Appends a record with a copied payload.
    public mutating func append(kind: UInt16, version: UInt16, payload: [UInt8]) {
        append(kind: kind, version: version) { $0.append(contentsOf: payload) }
    }

    /// Appends a record whose payload `encode` writes in place, at the end of the
    /// batch's buffer, through a writer that reaches only that payload (it cannot
    /// read or overwrite the records before it). The record header's sequence, time
    /// and checksum are filled in at append time.
    public mutating func append(kind: UInt16, version: UInt16, encode: (inout PayloadWriter) -> Void) {
        let start = bytes.count
        recordStarts.append(start)
        bytes.append(contentsOf: Self.blankRecordHeader)
        // The buffer moves into the writer and back: swapped, never copied (a copy
        // would make the next write copy the whole batch).
        var writer = PayloadWriter(takingBufferOf: &bytes)
        encode(&writer)
        writer.giveBackBuffer(to: &bytes)
        let payloadLength = bytes.count - start - LogFormat.recordHeaderLength
        if payloadLength > LogFormat.payloadLengthMax { oversize = max(oversize ?? 0, payloadLength) }
        bytes.withUnsafeMutableBytes { b in
            b.storeBytes(of: UInt32(payloadLength).littleEndian, toByteOffset: start + 4, as: UInt32.self)
            b.storeBytes(of: kind.littleEndian, toByteOffset: start + 24, as: UInt16.self)
            b.storeBytes(of: version.littleEndian, toByteOffset: start + 26, as: UInt16.self)
        }
        count += 1
    }

    /// Appends a record to be sealed under the data key `keyId` (issue 32): `encode`
    /// writes the plaintext payload in place, as for `append(kind:version:encode:)`;
    /// the writer, when it gives the batch its sequence numbers, encrypts it in place
    /// (`SealedRecord`: keyId · salt · ciphertext · tag). Only a log of format
    /// version 2 takes sealed records, and only from a writer that has the key
    /// (`LogWriter.enqueue` refuses the batch otherwise, before anything is written).
    public mutating func append(kind: UInt16, version: UInt16, sealedUnder keyId: UInt64,
                                encode: (inout PayloadWriter) -> Void) {
        append(kind: kind, version: version) { w in
            var prefix = [UInt8](repeating: 0, count: SealedRecord.prefixLength)
            withUnsafeBytes(of: keyId.littleEndian) { for i in 0..<8 { prefix[i] = $0[i] } }
            w.append(contentsOf: prefix)
            encode(&w)
            w.append(contentsOf: repeatElement(0, count: SealedRecord.tagLength))
        }
        let start = recordStarts[recordStarts.count - 1]
        bytes.withUnsafeMutableBytes { b in
            b.storeBytes(of: LogFormat.recordFlagSealed.littleEndian, toByteOffset: start + 28, as: UInt32.self)
        }
    }

    /// Names another key for the sealed record `index` (0-based in the batch): for a
    /// caller that lays records out first (their offsets are final: a key id's size is
    /// fixed) and learns their keys after (the ledger prepares the keys a batch needs
    /// once its records are folded).
    public mutating func setSealKey(ofRecord index: Int, to keyId: UInt64) {
        let start = recordStarts[index]
        bytes.withUnsafeMutableBytes { b in
            precondition(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: start + 28, as: UInt32.self))
                         & LogFormat.recordFlagSealed != 0, "only a sealed record names a key")
            b.storeBytes(of: keyId.littleEndian, toByteOffset: start + LogFormat.recordHeaderLength, as: UInt64.self)
        }
    }

    /// The limit the batch breaks, if any (`LogError.tooLarge` naming it): checked
    /// before anything is written, so callers can refuse before acting on it.
    public var limitViolation: LogError? {
        if let oversize { return .tooLarge(bytes: oversize, limit: LogFormat.payloadLengthMax) }
        if encodedLength > LogFormat.batchLengthMax { return .tooLarge(bytes: encodedLength, limit: LogFormat.batchLengthMax) }
        return nil
    }

    /// Drops the records from index `first` on (a caller taking back what it just
    /// appended, e.g. a command of a group that broke a limit).
    public mutating func removeRecords(from first: Int) {
        guard first < count else { return }
        bytes.removeSubrange(recordStarts[first]...)
        recordStarts.removeSubrange(first...)
        count = first
        oversize = nil
        var start = LogFormat.batchHeaderLength
        bytes.withUnsafeBytes { b in
            while start < b.count {
                let length = Int(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: start + 4, as: UInt32.self)))
                if length > LogFormat.payloadLengthMax { oversize = max(oversize ?? 0, length) }
                start += LogFormat.recordHeaderLength + length
            }
        }
    }

    /// Checks the limits, and that every sealed record may be sealed here (a log of
    /// format version 2, `allowsSealed`) under a key `sealing` holds live; the writer
    /// calls it before assigning sequence numbers.
    func validate(allowsSealed: Bool = false, sealing: RecordSealing? = nil) throws {
        guard count > 0 else { throw LogError.emptyBatch }
        if let oversize { throw LogError.tooLarge(bytes: oversize, limit: LogFormat.payloadLengthMax) }
        guard encodedLength <= LogFormat.batchLengthMax else {
            throw LogError.tooLarge(bytes: encodedLength, limit: LogFormat.batchLengthMax)
        }
        var offset = LogFormat.batchHeaderLength
        try bytes.withUnsafeBytes { b in
            while offset < b.count {
                let length = Int(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)))
                let kind = UInt16(littleEndian: b.loadUnaligned(fromByteOffset: offset + 24, as: UInt16.self))
                let version = UInt16(littleEndian: b.loadUnaligned(fromByteOffset: offset + 26, as: UInt16.self))
                guard kind != 0, version != 0 else { throw LogError.invalidKind(kind: kind, version: version) }
                if UInt32(littleEndian: b.loadUnaligned(fromByteOffset: offset + 28, as: UInt32.self)) & LogFormat.recordFlagSealed != 0 {
                    guard allowsSealed else { throw LogError.sealedRecordInPlainLog }
                    let id = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: offset + 32, as: UInt64.self))
                    guard sealing?.key(id) != nil else { throw LogError.sealKeyUnavailable(keyId: id) }
                }
                offset += LogFormat.recordHeaderLength + length
            }
        }
    }

    /// Turns the buffer into the on-disk batch: sequence numbers from `firstSequence`,
    /// every record stamped `recordedAt`, sealed records encrypted (`sealing`, which
    /// holds every key they name: `LogWriter.enqueue` checked), checksums, the header,
    /// and the link to `previousLink`. Returns the new link.
    mutating func seal(firstSequence: UInt64, recordedAt: Int64, syncedLength: UInt64,
                       previousLink: SHA256Digest, sealing: RecordSealing? = nil,
                       recordOffsets: inout [UInt64]) -> SHA256Digest {
        let length = encodedLength
        bytes.withUnsafeMutableBytes { b in
            var offset = LogFormat.batchHeaderLength
            var sequence = firstSequence
            while offset < b.count {
                recordOffsets.append(UInt64(offset))
                let payloadLength = Int(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)))
                let kind = UInt16(littleEndian: b.loadUnaligned(fromByteOffset: offset + 24, as: UInt16.self))
                let version = UInt16(littleEndian: b.loadUnaligned(fromByteOffset: offset + 26, as: UInt16.self))
                let flags = UInt32(littleEndian: b.loadUnaligned(fromByteOffset: offset + 28, as: UInt32.self))
                let record = UnsafeMutableRawBufferPointer(
                    rebasing: b[offset..<offset + LogFormat.recordHeaderLength + payloadLength])
                if flags & LogFormat.recordFlagSealed != 0 {
                    guard let sealing, let key = sealing.key(SealedRecord.keyId(framed: UnsafeRawBufferPointer(record))) else {
                        preconditionFailure("the writer checks that it holds every key a batch names before sealing it")
                    }
                    // The header's fields first: the associated data covers them.
                    record.storeBytes(of: sequence.littleEndian, toByteOffset: 8, as: UInt64.self)
                    record.storeBytes(of: recordedAt.littleEndian, toByteOffset: 16, as: Int64.self)
                    SealedRecord.seal(framed: record, key: key, salt: sealing.salt, sequence: sequence,
                                      ledgerId: sealing.ledgerId)
                }
                RecordHeader.store(into: record, payloadLength: payloadLength, sequence: sequence,
                                   recordedAt: recordedAt, kind: kind, kindVersion: version, flags: flags)
                offset += LogFormat.recordHeaderLength + payloadLength
                sequence += 1
            }
            BatchHeader(batchLength: length, firstSequence: firstSequence, recordCount: count, isSeal: false,
                        syncedLength: syncedLength).store(into: b)
        }
        let link = BatchChain.link(previous: previousLink, batchBody: bytes)
        withUnsafeBytes(of: link.bytes) { bytes.append(contentsOf: $0) }
        return link
    }
}

/// Writes one record's payload: appends bytes, and patches bytes it wrote itself.
///
/// Given to an encoder by `RecordBatch.append(kind:version:encode:)`, it writes in
/// place at the end of the batch's buffer but reaches nothing before its own payload:
/// there is no way to read the buffer, and every index is relative to the payload's
/// start and checked against what this writer wrote. Made with `init(capacity:)` it
/// writes a buffer of its own (a payload on its own, or any other encoding).
public struct PayloadWriter: Sendable {
    /// The batch's buffer (or the writer's own); this payload is `buffer[start...]`.
    @usableFromInline var buffer: [UInt8]
    @usableFromInline let start: Int

    /// A writer of a buffer of its own; `capacity` is a hint in bytes.
    public init(capacity: Int = 64) {
        buffer = []
        buffer.reserveCapacity(capacity)
        start = 0
    }

    /// A writer appending to the end of `buffer`, which it takes (leaving it empty)
    /// until `giveBackBuffer(to:)`.
    init(takingBufferOf buffer: inout [UInt8]) {
        self.buffer = []
        swap(&self.buffer, &buffer)
        start = self.buffer.count
    }

    /// Bytes written so far.
    @inlinable public var count: Int { buffer.count - start }

    /// Appends a byte.
    @inlinable public mutating func append(_ byte: UInt8) { buffer.append(byte) }

    /// Appends bytes.
    @inlinable public mutating func append(contentsOf bytes: UnsafeRawBufferPointer) { buffer.append(contentsOf: bytes) }

    /// Appends bytes.
    @inlinable public mutating func append(contentsOf bytes: some Collection<UInt8>) { buffer.append(contentsOf: bytes) }

    /// Replaces the byte at `index` of this payload (0 is its first byte; below `count`).
    @inlinable public mutating func overwrite(at index: Int, with byte: UInt8) {
        precondition(index >= 0 && index < count, "a payload writer writes only its own payload")
        buffer[start + index] = byte
    }

    /// Replaces `range` of this payload (indices from its first byte) with `bytes`;
    /// what follows moves.
    @inlinable public mutating func replaceSubrange(_ range: Range<Int>, with bytes: some Collection<UInt8>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "a payload writer writes only its own payload")
        buffer.replaceSubrange(start + range.lowerBound..<start + range.upperBound, with: bytes)
    }

    /// Opens `count` bytes at `index` of this payload (indices from its first byte;
    /// at most `count`): what followed moves up by that much, in place (one memmove,
    /// no allocation); the gap's bytes are then overwritten by the caller.
    @inlinable public mutating func openGap(at index: Int, count gap: Int) {
        precondition(index >= 0 && index <= count && gap >= 0, "a payload writer writes only its own payload")
        let tail = count - index
        buffer.append(contentsOf: repeatElement(0, count: gap))
        let from = start + index
        buffer.withUnsafeMutableBytes { b in
            (b.baseAddress! + from + gap).copyMemory(from: b.baseAddress! + from, byteCount: tail)
        }
    }

    /// Appends `count` bytes that `write` fills (all of them; they start zeroed): for
    /// an encoder that sized what it writes beforehand.
    @inlinable package mutating func appendUninitialized(count n: Int, _ write: (UnsafeMutableRawBufferPointer) -> Void) {
        precondition(n >= 0, "a byte count is not negative")
        let from = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: n))
        buffer.withUnsafeMutableBytes { write(UnsafeMutableRawBufferPointer(rebasing: $0[from..<from + n])) }
    }

    /// Empties a writer of its own buffer, keeping the buffer's storage.
    package mutating func removeAll() {
        precondition(start == 0, "only a writer of its own buffer is emptied")
        buffer.removeAll(keepingCapacity: true)
    }

    /// Lends this payload's bytes (only this writer's) to `body`.
    @inlinable package func withWrittenBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
    }

    /// A copy of what this writer wrote (for a writer of its own buffer, the buffer).
    public var bytes: [UInt8] { start == 0 ? buffer : Array(buffer[start...]) }

    /// Puts the buffer, this payload at its end, back into `owner` (the writer is
    /// left empty).
    mutating func giveBackBuffer(to owner: inout [UInt8]) {
        swap(&buffer, &owner)
        buffer = []
    }
}

/// A record to append: its kind, kind version and payload.
public struct LogRecord: Hashable, Sendable {
    public let kind: UInt16
    public let kindVersion: UInt16
    public let payload: [UInt8]

    public init(kind: UInt16, kindVersion: UInt16, payload: [UInt8]) {
        self.kind = kind
        self.kindVersion = kindVersion
        self.payload = payload
    }
}

/// A record read back from the log, with what the log stamped on it.
public struct StoredRecord: Hashable, Sendable {
    public let sequence: UInt64
    /// Nanoseconds since the Unix epoch.
    public let recordedAt: Int64
    public let kind: UInt16
    public let kindVersion: UInt16
    public let payload: [UInt8]
    /// Byte offset of the record in the log file.
    public let offset: UInt64
    /// The data key a sealed record named (its payload here is the plaintext); nil
    /// for a plain record.
    public var sealedKeyId: UInt64? = nil
}

/// The hash chain: how links are computed.
enum BatchChain {
    /// The link before the first batch: SHA-256 of the 64 file header bytes.
    static func genesis(fileHeader: [UInt8]) -> SHA256Digest { SHA256.hash(fileHeader) }

    /// SHA-256(previous ‖ batch bytes without the link).
    static func link(previous: SHA256Digest, batchBody: UnsafeRawBufferPointer) -> SHA256Digest {
        var h = SHA256()
        h.update(previous)
        h.update(batchBody)
        return h.finalize()
    }

    static func link(previous: SHA256Digest, batchBody: [UInt8]) -> SHA256Digest {
        batchBody.withUnsafeBytes { link(previous: previous, batchBody: $0) }
    }

    /// A seal batch: header and link, no records.
    static func sealBatch(firstSequence: UInt64, syncedLength: UInt64, previousLink: SHA256Digest) -> ([UInt8], SHA256Digest) {
        var bytes = [UInt8](repeating: 0, count: LogFormat.batchHeaderLength)
        bytes.withUnsafeMutableBytes { b in
            BatchHeader(batchLength: LogFormat.batchLengthMin, firstSequence: firstSequence, recordCount: 0, isSeal: true,
                        syncedLength: syncedLength).store(into: b)
        }
        let link = Self.link(previous: previousLink, batchBody: bytes)
        withUnsafeBytes(of: link.bytes) { bytes.append(contentsOf: $0) }
        return (bytes, link)
    }
}
