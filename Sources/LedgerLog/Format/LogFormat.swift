import Foundation
import LedgerChecksums

// The log file format, versions 1 and 2. events/FORMAT.md is the normative text; this file
// mirrors it, and each validity rule carries the rule ID the spec gives it.
//
// All integers little-endian.
//
// File header (64 bytes, offset 0):
//   0   8  magic            89 48 4C 4F 47 0D 0A 1A  ("\x89HLOG\r\n\x1A")
//   8   2  formatVersion    version that wrote the file: 1 plain, 2 may hold sealed records
//  10   2  minReaderVersion oldest reader version that may read it (= formatVersion)
//  12   4  headerLength     64
//  16  16  ledgerId         UUID bytes (RFC 4122 order)
//  32   8  createdAt        Int64 nanoseconds since 1970-01-01T00:00:00Z
//  40  20  reserved         zero
//  60   4  headerCRC        CRC32C of bytes 0..<60
//
// Batch (the unit of commit and of the hash chain), at offsets 64, 64+L1, …:
//   0   4  magic            48 4C 42 31 ("HLB1")
//   4   4  batchLength      L: bytes of the whole batch, header and link included
//   8   8  firstSequence    sequence number of the first record (the next unused one for a seal)
//  16   4  recordCount      records in the batch; 0 only for a seal
//  20   2  flags            bit 0: seal (written on clean close); other bits zero
//  22   2  reserved         zero
//  24   8  syncedLength     log length known durable when the batch was written (≤ its offset)
//  32   4  reserved         zero
//  36   4  headerCRC        CRC32C of bytes 0..<36
//  40   …  records          back to back, exactly filling [40, L-32)
//  L-32 32 link             SHA-256(previous link ‖ batch bytes 0..<L-32); the first
//                           previous link is SHA-256(file header bytes 0..<64)
//
// Record:
//   0   4  crc              CRC32C of record bytes 4..<32+payloadLength
//   4   4  payloadLength    ≤ LogFormat.payloadLengthMax
//   8   8  sequence         firstSequence + index in batch; dense from 1 over the log
//  16   8  recordedAt       Int64 nanoseconds since the epoch; never decreases along the log
//  24   2  kind             ≥ 1; meaning belongs to the layer above
//  26   2  kindVersion      ≥ 1
//  28   4  flags            version 1: zero; version 2: bit 0 sealed, other bits zero
//  32   …  payload          sealed (SealedRecord): u64 keyId · u32 salt · ciphertext · tag(16)

/// Layout constants and limits of format versions 1 and 2.
package enum LogFormat {
    /// The format version of a plain log (no sealed records), the one `create` writes
    /// unless asked for sealed records.
    package static let formatVersion: UInt16 = 1
    /// The format version of a log that may hold sealed records (issue 32): a record
    /// header's word at offset 28 is then its flags (bit 0: sealed).
    package static let sealedFormatVersion: UInt16 = 2
    /// The newest format version this code can read.
    package static let readableVersion: UInt16 = 2
    /// The format versions this code appends to.
    package static let writableVersions: ClosedRange<UInt16> = 1...2
    /// Record flag (format version 2): the payload is sealed (`SealedRecord`).
    package static let recordFlagSealed: UInt32 = 1

    static let fileMagic: [UInt8] = [0x89, 0x48, 0x4C, 0x4F, 0x47, 0x0D, 0x0A, 0x1A]
    static let batchMagic: UInt32 = 0x3142_4C48  // "HLB1" read little-endian

    /// Bytes of the file header.
    package static let fileHeaderLength = 64
    /// Bytes of a batch header.
    package static let batchHeaderLength = 40
    /// Bytes of a batch's trailing link.
    package static let linkLength = 32
    /// Bytes of a record header.
    package static let recordHeaderLength = 32
    /// The largest record payload.
    package static let payloadLengthMax = 16 << 20
    /// The largest batch.
    package static let batchLengthMax = 1 << 30
    /// The smallest batch: a seal (header + link, no records).
    package static let batchLengthMin = batchHeaderLength + linkLength
    /// Batch flag: a seal, written when a writer closes cleanly.
    static let flagSeal: UInt16 = 1
}

/// The decoded file header.
package struct LogFileHeader: Sendable, Equatable {
    package let formatVersion: UInt16
    package let minReaderVersion: UInt16
    package let ledgerId: UUID
    /// Nanoseconds since the Unix epoch.
    package let createdAt: Int64

    /// Whether records of this log may be sealed (format version 2 and later).
    package var allowsSealedRecords: Bool { formatVersion >= LogFormat.sealedFormatVersion }

    func encoded() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: LogFormat.fileHeaderLength)
        bytes.withUnsafeMutableBytes { b in
            for (i, m) in LogFormat.fileMagic.enumerated() { b[i] = m }
            b.storeBytes(of: formatVersion.littleEndian, toByteOffset: 8, as: UInt16.self)
            b.storeBytes(of: minReaderVersion.littleEndian, toByteOffset: 10, as: UInt16.self)
            b.storeBytes(of: UInt32(LogFormat.fileHeaderLength).littleEndian, toByteOffset: 12, as: UInt32.self)
            withUnsafeBytes(of: ledgerId.uuid) { (b.baseAddress! + 16).copyMemory(from: $0.baseAddress!, byteCount: 16) }
            b.storeBytes(of: createdAt.littleEndian, toByteOffset: 32, as: Int64.self)
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<60]))
            b.storeBytes(of: crc.littleEndian, toByteOffset: 60, as: UInt32.self)
        }
        return bytes
    }

    /// The header of an open log file, validated (H1–H4): which ledger a file opened by
    /// name now holds (a folder may have been replaced since the ledger was opened).
    package static func read(from file: any LogFile, path: String) throws -> LogFileHeader {
        var bytes = [UInt8](repeating: 0, count: LogFormat.fileHeaderLength)
        guard try bytes.withUnsafeMutableBytes({ try file.read(into: $0, at: 0) }) == LogFormat.fileHeaderLength else {
            throw LogError.notALedgerLog(reason: "\(path)/\(LogWriter.logFileName) is shorter than a log header")
        }
        return try bytes.withUnsafeBytes { try decode($0) }
    }

    /// Decodes and validates (rules H1–H4 of FORMAT.md).
    static func decode(_ b: UnsafeRawBufferPointer) throws(LogError) -> LogFileHeader {
        // H1: the file starts with the magic.
        guard b.count >= LogFormat.fileHeaderLength, Array(b[0..<8]) == LogFormat.fileMagic else {
            throw .notALedgerLog(reason: "missing the HealthLedger log magic")
        }
        // H2: the header checksum holds.
        let crc = UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 60, as: UInt32.self))
        guard crc == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<60])) else {
            throw .damaged(LogDamage(kind: .fileHeader, offset: 0, length: UInt64(LogFormat.fileHeaderLength),
                                     sequence: nil, inDurablePrefix: true))
        }
        let version = UInt16(littleEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt16.self))
        let minReader = UInt16(littleEndian: b.loadUnaligned(fromByteOffset: 10, as: UInt16.self))
        // H3: this reader is new enough.
        guard minReader <= LogFormat.readableVersion else {
            throw .unsupportedFormatVersion(found: version, minReader: minReader, supported: LogFormat.readableVersion)
        }
        // H4: header length is 64.
        guard UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 12, as: UInt32.self)) == UInt32(LogFormat.fileHeaderLength) else {
            throw .notALedgerLog(reason: "unexpected header length", rule: "H4")
        }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: b[16..<32])) }
        return LogFileHeader(formatVersion: version, minReaderVersion: minReader, ledgerId: UUID(uuid: uuid),
                             createdAt: Int64(littleEndian: b.loadUnaligned(fromByteOffset: 32, as: Int64.self)))
    }
}

/// A decoded batch header.
struct BatchHeader: Equatable {
    var batchLength: Int
    var firstSequence: UInt64
    var recordCount: Int
    var isSeal: Bool
    var syncedLength: UInt64

    /// Writes the header into the first 40 bytes of `b`.
    func store(into b: UnsafeMutableRawBufferPointer) {
        b.storeBytes(of: LogFormat.batchMagic.littleEndian, toByteOffset: 0, as: UInt32.self)
        b.storeBytes(of: UInt32(batchLength).littleEndian, toByteOffset: 4, as: UInt32.self)
        b.storeBytes(of: firstSequence.littleEndian, toByteOffset: 8, as: UInt64.self)
        b.storeBytes(of: UInt32(recordCount).littleEndian, toByteOffset: 16, as: UInt32.self)
        b.storeBytes(of: (isSeal ? LogFormat.flagSeal : 0).littleEndian, toByteOffset: 20, as: UInt16.self)
        b.storeBytes(of: UInt16(0), toByteOffset: 22, as: UInt16.self)
        b.storeBytes(of: syncedLength.littleEndian, toByteOffset: 24, as: UInt64.self)
        b.storeBytes(of: UInt32(0), toByteOffset: 32, as: UInt32.self)
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<36]))
        b.storeBytes(of: crc.littleEndian, toByteOffset: 36, as: UInt32.self)
    }

    /// Decodes the 40 header bytes at the start of `b`, checking only what the
    /// header alone can show (rules B1, B2, B5 of FORMAT.md; B6 needs the batch's
    /// offset, so the caller checks it); nil when invalid.
    static func decode(_ b: UnsafeRawBufferPointer) -> BatchHeader? {
        guard b.count >= LogFormat.batchHeaderLength else { return nil }
        // B1: magic.
        guard UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 0, as: UInt32.self)) == LogFormat.batchMagic else { return nil }
        // B2: header checksum.
        let crc = UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 36, as: UInt32.self))
        guard crc == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<36])) else { return nil }
        let length = Int(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        let count = Int(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 16, as: UInt32.self)))
        let flags = UInt16(littleEndian: b.loadUnaligned(fromByteOffset: 20, as: UInt16.self))
        let reserved = UInt16(littleEndian: b.loadUnaligned(fromByteOffset: 22, as: UInt16.self))
        let reserved2 = UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 32, as: UInt32.self))
        // B5: length within bounds; flags and reserved fields as specified; a seal is
        // exactly header + link with no records, any other batch has records.
        guard length >= LogFormat.batchLengthMin, length <= LogFormat.batchLengthMax,
              flags & ~LogFormat.flagSeal == 0, reserved == 0, reserved2 == 0 else { return nil }
        let seal = flags & LogFormat.flagSeal != 0
        if seal {
            guard count == 0, length == LogFormat.batchLengthMin else { return nil }
        } else {
            guard count >= 1,
                  count <= (length - LogFormat.batchLengthMin) / LogFormat.recordHeaderLength else { return nil }
        }
        return BatchHeader(batchLength: length,
                           firstSequence: UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                           recordCount: count, isSeal: seal,
                           syncedLength: UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
    }
}

/// A record's header fields.
struct RecordHeader {
    var payloadLength: Int
    var sequence: UInt64
    var recordedAt: Int64
    var kind: UInt16
    var kindVersion: UInt16

    /// Stores the header (CRC last, over the bytes after it and the payload, which
    /// must already be in place) at the start of `b`. `flags`: zero, or
    /// `recordFlagSealed` in a version 2 log.
    static func store(into b: UnsafeMutableRawBufferPointer, payloadLength: Int, sequence: UInt64, recordedAt: Int64,
                      kind: UInt16, kindVersion: UInt16, flags: UInt32 = 0) {
        b.storeBytes(of: UInt32(payloadLength).littleEndian, toByteOffset: 4, as: UInt32.self)
        b.storeBytes(of: sequence.littleEndian, toByteOffset: 8, as: UInt64.self)
        b.storeBytes(of: recordedAt.littleEndian, toByteOffset: 16, as: Int64.self)
        b.storeBytes(of: kind.littleEndian, toByteOffset: 24, as: UInt16.self)
        b.storeBytes(of: kindVersion.littleEndian, toByteOffset: 26, as: UInt16.self)
        b.storeBytes(of: flags.littleEndian, toByteOffset: 28, as: UInt32.self)
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[4..<LogFormat.recordHeaderLength + payloadLength]))
        b.storeBytes(of: crc.littleEndian, toByteOffset: 0, as: UInt32.self)
    }
}
