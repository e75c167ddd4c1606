import Foundation
import LedgerChecksums

/// The log's derived index, `index/log.idx`: a checkpoint (how far the log is known
/// valid, with the chain head and next sequence number there) plus a sparse map
/// from sequence numbers to batch offsets (one entry per 64 KiB of log).
///
/// Derived data: deleting it costs one full scan at the next open; a damaged or
/// stale one is ignored and rebuilt.
///
/// Layout (little-endian):
///   0  8  magic "HLIDX001"      8 16 ledgerId          24 8 coveredLength
///  32  8  nextSequence         40  8 lastRecordedAt    48 32 link at coveredLength
///  80  8  entryCount           88  4 reserved (0)      92  4 CRC32C of bytes 0..<92 then all entries
///  96  …  entries: (firstSequence u64, offset u64)
package struct LogCheckpoint: Sendable, Equatable {
    /// Log bytes covered (a batch boundary): everything before it was validated.
    package var coveredLength: UInt64
    /// The sequence number after the last record before `coveredLength`.
    package var nextSequence: UInt64
    /// The time of the last record before `coveredLength`.
    package var lastRecordedAt: Int64
    /// The chain link of the batch ending at `coveredLength` (genesis when none).
    package var link: SHA256Digest
    /// Sparse (firstSequence, batch offset) pairs, ascending.
    package var entries: [SparseEntry]

    /// One index entry: a batch's first sequence number and its offset.
    package struct SparseEntry: Sendable, Equatable {
        package let firstSequence: UInt64
        package let offset: UInt64
    }

    static let fileName = "index/log.idx"
    static let magic = Array("HLIDX001".utf8)
    /// Distance in bytes between sparse entries.
    static let spacing: UInt64 = 64 << 10

    /// Adds an entry for a batch at `offset` when it is far enough from the last one.
    mutating func note(batchAt offset: UInt64, firstSequence: UInt64) {
        if let last = entries.last, offset < last.offset + Self.spacing { return }
        entries.append(SparseEntry(firstSequence: firstSequence, offset: offset))
    }

    /// The entry to start a scan for `sequence` from (the last one at or before it).
    func entry(before sequence: UInt64) -> SparseEntry? {
        var low = 0, high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if entries[mid].firstSequence <= sequence { low = mid + 1 } else { high = mid }
        }
        return low == 0 ? nil : entries[low - 1]
    }

    func encoded(ledgerId: UUID) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 96 + 16 * entries.count)
        bytes.withUnsafeMutableBytes { b in
            for (i, m) in Self.magic.enumerated() { b[i] = m }
            withUnsafeBytes(of: ledgerId.uuid) { (b.baseAddress! + 8).copyMemory(from: $0.baseAddress!, byteCount: 16) }
            b.storeBytes(of: coveredLength.littleEndian, toByteOffset: 24, as: UInt64.self)
            b.storeBytes(of: nextSequence.littleEndian, toByteOffset: 32, as: UInt64.self)
            b.storeBytes(of: lastRecordedAt.littleEndian, toByteOffset: 40, as: Int64.self)
            withUnsafeBytes(of: link.bytes) { (b.baseAddress! + 48).copyMemory(from: $0.baseAddress!, byteCount: 32) }
            b.storeBytes(of: UInt64(entries.count).littleEndian, toByteOffset: 80, as: UInt64.self)
            for (i, e) in entries.enumerated() {
                b.storeBytes(of: e.firstSequence.littleEndian, toByteOffset: 96 + 16 * i, as: UInt64.self)
                b.storeBytes(of: e.offset.littleEndian, toByteOffset: 104 + 16 * i, as: UInt64.self)
            }
            var crc = CRC32C.update(0xFFFF_FFFF, UnsafeRawBufferPointer(rebasing: b[0..<92]))
            crc = ~CRC32C.update(crc, UnsafeRawBufferPointer(rebasing: b[96...]))
            b.storeBytes(of: crc.littleEndian, toByteOffset: 92, as: UInt32.self)
        }
        return bytes
    }

    static func decode(_ bytes: [UInt8], ledgerId: UUID) -> LogCheckpoint? { try? decodeChecked(bytes, ledgerId: ledgerId) }

    /// Why an `index/log.idx` is not used (I1): it is ignored and rebuilt, never a
    /// reason to stop. The description ends with the rule.
    struct Rejection: Error, Equatable, CustomStringConvertible {
        let reason: String
        var description: String { "\(LogCheckpoint.fileName) ignored: \(reason) [I1]" }
    }

    /// What `verify` finds of the index (I1 in two halves): its own bytes, then the log.
    enum Examination: Equatable {
        /// There is no index.
        case absent
        /// Intact and in agreement with the log: used.
        case agrees(LogCheckpoint)
        /// Its own bytes fail (magic, size, checksum, fields): derived data that was
        /// damaged, ignored and rebuilt by the next writer; nothing to say of the log.
        case damaged(Rejection)
        /// An intact index (its checksum holds) that does not fit this log: another
        /// ledger's, or written for bytes the log no longer holds (cut or replaced).
        case disagrees(Rejection)
    }

    /// `decode`, saying why the bytes are refused: first the file's own checks, so that
    /// damage to any byte is named as such (`checksum`), then the ledger id.
    static func decodeChecked(_ bytes: [UInt8], ledgerId: UUID) throws(Rejection) -> LogCheckpoint {
        let (stored, checkpoint) = try decodeIntact(bytes)
        guard stored == ledgerId else { throw Rejection(reason: "another ledger's index") }
        return checkpoint
    }

    /// The ledger id an index names and its checkpoint, when its own bytes hold: magic,
    /// entryCount against the size (before anything else is read from it), the CRC, and
    /// entries that ascend.
    static func decodeIntact(_ bytes: [UInt8]) throws(Rejection) -> (ledgerId: UUID, checkpoint: LogCheckpoint) {
        guard bytes.count >= 96, Array(bytes[0..<8]) == magic else { throw Rejection(reason: "not an index (magic)") }
        return try bytes.withUnsafeBytes { b in
            Result { () throws(Rejection) -> (ledgerId: UUID, checkpoint: LogCheckpoint) in try decodeFields(b) }
        }.get()
    }

    private static func decodeFields(_ b: UnsafeRawBufferPointer) throws(Rejection) -> (ledgerId: UUID, checkpoint: LogCheckpoint) {
        // The count is untrusted: compare it with the file's size before making it an Int.
        let storedCount = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 80, as: UInt64.self))
        guard storedCount <= UInt64((b.count - 96) / 16) else {
            throw Rejection(reason: "entryCount \(storedCount) does not fit the file's \(b.count) bytes")
        }
        let count = Int(storedCount)
        guard b.count == 96 + 16 * count else { throw Rejection(reason: "\(b.count) bytes for \(count) entries") }
        var crc = CRC32C.update(0xFFFF_FFFF, UnsafeRawBufferPointer(rebasing: b[0..<92]))
        crc = ~CRC32C.update(crc, UnsafeRawBufferPointer(rebasing: b[96...]))
        guard crc == UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 92, as: UInt32.self)) else {
            throw Rejection(reason: "checksum")
        }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: b[8..<24])) }
        var entries: [SparseEntry] = []
        entries.reserveCapacity(count)
        for i in 0..<count {
            entries.append(SparseEntry(
                firstSequence: UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 96 + 16 * i, as: UInt64.self)),
                offset: UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 104 + 16 * i, as: UInt64.self))))
        }
        // Entries ascend in both fields (the scan start search relies on it).
        for (i, (earlier, later)) in zip(entries, entries.dropFirst()).enumerated()
            where later.firstSequence <= earlier.firstSequence || later.offset <= earlier.offset {
            throw Rejection(reason: "entry \(i + 1) does not ascend")
        }
        let checkpoint = LogCheckpoint(
            coveredLength: UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 24, as: UInt64.self)),
            nextSequence: UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 32, as: UInt64.self)),
            lastRecordedAt: Int64(littleEndian: b.loadUnaligned(fromByteOffset: 40, as: Int64.self)),
            link: SHA256Digest(UnsafeRawBufferPointer(rebasing: b[48..<80])), entries: entries)
        return (UUID(uuid: uuid), checkpoint)
    }

    /// Loads the checkpoint if it is intact and agrees with the log: it covers no
    /// more than the file, and its link is the one stored at the end of the batch
    /// ending at `coveredLength`. Otherwise nil (the caller scans from the start).
    static func load(_ fs: any LogFileSystem, log: any LogFile, logLength: UInt64, ledgerId: UUID,
                     genesis: SHA256Digest) -> LogCheckpoint? {
        guard fs.exists(fileName) else { return nil }
        return try? loadChecked(fs, log: log, logLength: logLength, ledgerId: ledgerId, genesis: genesis)
    }

    /// `load` of an index that exists, saying why it is not used (I1).
    static func loadChecked(_ fs: any LogFileSystem, log: any LogFile, logLength: UInt64, ledgerId: UUID,
                            genesis: SHA256Digest) throws(Rejection) -> LogCheckpoint {
        switch examine(fs, log: log, logLength: logLength, ledgerId: ledgerId, genesis: genesis) {
        case .agrees(let checkpoint): return checkpoint
        case .damaged(let why), .disagrees(let why): throw why
        case .absent: throw Rejection(reason: "cannot be opened")
        }
    }

    /// The index judged by I1, telling damage to its own bytes from an intact index that
    /// does not fit the log (`verify` reports only the second).
    static func examine(_ fs: any LogFileSystem, log: any LogFile, logLength: UInt64, ledgerId: UUID,
                        genesis: SHA256Digest) -> Examination {
        guard fs.exists(fileName) else { return .absent }
        guard let file = try? fs.open(fileName, .readOnly) else { return .damaged(Rejection(reason: "cannot be opened")) }
        defer { file.close() }
        guard let size = try? file.size(), size <= 1 << 32 else { return .damaged(Rejection(reason: "larger than 4 GiB")) }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        guard (try? bytes.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }) == Int(size) else {
            return .damaged(Rejection(reason: "cannot be read"))
        }
        let stored: UUID, checkpoint: LogCheckpoint
        do { (stored, checkpoint) = try decodeIntact(bytes) } catch { return .damaged(error) }
        // Fields that contradict each other are damage too, whatever the CRC says.
        guard checkpoint.coveredLength >= UInt64(LogFormat.fileHeaderLength) else {
            return .damaged(Rejection(reason: "coveredLength \(checkpoint.coveredLength) inside the file header"))
        }
        guard checkpoint.nextSequence >= 1,
              checkpoint.entries.allSatisfy({ $0.offset < checkpoint.coveredLength && $0.firstSequence < checkpoint.nextSequence })
        else { return .damaged(Rejection(reason: "an entry beyond coveredLength or nextSequence")) }
        guard stored == ledgerId else { return .disagrees(Rejection(reason: "another ledger's index")) }
        guard checkpoint.coveredLength <= logLength else {
            return .disagrees(Rejection(reason: "coveredLength \(checkpoint.coveredLength) outside the log's \(logLength) bytes"))
        }
        if checkpoint.coveredLength == UInt64(LogFormat.fileHeaderLength) {
            guard checkpoint.link == genesis && checkpoint.nextSequence == 1 else {
                return .disagrees(Rejection(reason: "an empty log's index without the genesis link"))
            }
            return .agrees(checkpoint)
        }
        var link = [UInt8](repeating: 0, count: LogFormat.linkLength)
        let got = try? link.withUnsafeMutableBytes {
            try log.read(into: $0, at: checkpoint.coveredLength - UInt64(LogFormat.linkLength))
        }
        guard got == LogFormat.linkLength, SHA256Digest(link) == checkpoint.link else {
            return .disagrees(Rejection(reason: "its link is not the log's at byte \(checkpoint.coveredLength)"))
        }
        return .agrees(checkpoint)
    }

    /// The coveredLength an intact index of this ledger claims, whatever the log's
    /// length (I3): the index is written only after the log was synced that far, so
    /// it is a length known durable. A log shorter than it lost acknowledged bytes.
    /// `seenLength` is the log's length as the caller read it: a store that commits
    /// every byte before showing it vouches for all of that (and no more: a writer may
    /// have committed since, which the caller has not seen).
    static func knownDurableLength(_ fs: any LogFileSystem, ledgerId: UUID, seenLength: UInt64) -> UInt64? {
        if fs.storeCommitsEveryByte { return seenLength }
        guard fs.exists(fileName), let file = try? fs.open(fileName, .readOnly) else { return nil }
        defer { file.close() }
        guard let size = try? file.size(), size <= 1 << 32 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        guard (try? bytes.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }) == Int(size) else { return nil }
        return decode(bytes, ledgerId: ledgerId)?.coveredLength
    }

    /// Writes the checkpoint (to a temporary name, then renamed over the old one).
    func save(_ fs: any LogFileSystem, ledgerId: UUID) throws {
        if try fs.createSubfolder("index") { try fs.syncFolder(nil) }
        let temporary = Self.fileName + ".tmp"
        let file = try fs.open(temporary, .replace)
        let bytes = encoded(ledgerId: ledgerId)
        try bytes.withUnsafeBytes { try file.write($0, at: 0) }
        try file.sync()
        file.close()
        try fs.rename(temporary, to: Self.fileName)
        try fs.syncFolder("index")
    }
}
