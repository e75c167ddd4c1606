import Foundation
import LedgerCrypto
import LedgerKeys
import LedgerLog

/// A sealed snapshot being written (`SealedSnapshotLayout`, version 2): each chunk of
/// the plain image is sealed and written to the real file as soon as the snapshot's
/// writer has moved past it, so memory holds two chunks, not the snapshot.
///
/// The snapshot's writer writes its file front to back and its header (at offset 0)
/// last, so chunk 0 is held until `sync`; every later chunk is sealed once a write
/// lands beyond it. Invariants: chunks 1..<`index` are sealed and written; `current`
/// holds chunk `index`'s bytes so far; `length` is the image's length (a write past
/// the end fills the gap with zeros, as a file does). A write into a chunk already
/// sealed is refused (it cannot be changed any more).
final class SealingFile: LogFile, @unchecked Sendable {
    // @unchecked: a snapshot file is written by one thread (the snapshot's writer).
    private let target: any LogFile
    private let key: SealKey
    private let ledgerId: UUID
    private let header: [UInt8]
    private let chunkLength: Int
    /// Chunk 0's plain bytes, sealed at `sync`.
    private var first: [UInt8] = []
    /// Chunk `index`'s plain bytes (index ≥ 1).
    private var current: [UInt8] = []
    private var index = 1
    private var length = 0
    /// One sealed chunk, reused.
    private var sealed: [UInt8]
    private var synced = false

    /// - Throws: `LogError.io` when the random source fails.
    init(target: any LogFile, key: SealKey, keyId: UInt64, ledgerId: UUID,
         chunkLength: Int = SealedSnapshotLayout.chunkLength) throws {
        var nonce = [UInt8](repeating: 0, count: SealNonce.byteCount)
        guard getentropy(&nonce, nonce.count) == 0 else { throw LogError.io(operation: "getentropy", path: "", errno: errno) }
        self.target = target
        self.key = key
        self.ledgerId = ledgerId
        self.chunkLength = chunkLength
        header = SealedSnapshotLayout.header(keyId: keyId, fileNonce: nonce, chunkLength: chunkLength)
        sealed = [UInt8](repeating: 0, count: chunkLength + SealedSnapshotLayout.tagLength)
        first.reserveCapacity(chunkLength)
        current.reserveCapacity(chunkLength)
    }

    func size() throws -> UInt64 { UInt64(length) }

    /// Reads what is still held (chunk 0 and the current chunk); a sealed chunk is gone.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        guard offset < UInt64(length) else { return 0 }
        let start = Int(offset)
        let (chunk, within) = start.quotientAndRemainder(dividingBy: chunkLength)
        let held: [UInt8]
        if chunk == 0 { held = first } else if chunk == index { held = current } else {
            throw LogError.io(operation: "read (a sealed snapshot's chunk \(chunk) is already sealed)", path: "", errno: EPERM)
        }
        let n = min(buffer.count, held.count - within)
        guard n > 0 else { return 0 }
        held.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + within, byteCount: n) }
        return n
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        precondition(!synced, "a sealed snapshot is written until its sync")
        guard !bytes.isEmpty else { return }
        guard offset <= UInt64(Int.max / 2) else { throw LogError.io(operation: "write (offset too large)", path: "", errno: EFBIG) }
        var position = Int(offset)
        var done = 0
        while done < bytes.count {
            let (chunk, within) = position.quotientAndRemainder(dividingBy: chunkLength)
            let n = min(bytes.count - done, chunkLength - within)
            let piece = UnsafeRawBufferPointer(rebasing: bytes[done..<(done + n)])
            if chunk == 0 {
                Self.place(piece, at: within, in: &first)
            } else {
                guard chunk >= index else {
                    throw LogError.io(operation: "write (a sealed snapshot's chunk \(chunk) is already sealed)", path: "", errno: EPERM)
                }
                while chunk > index { try sealCurrent(last: false) }
                Self.place(piece, at: within, in: &current)
            }
            position += n
            done += n
        }
        length = max(length, position)
    }

    /// `bytes` at `offset` in `buffer`, zeros filling any gap before them.
    private static func place(_ bytes: UnsafeRawBufferPointer, at offset: Int, in buffer: inout [UInt8]) {
        if buffer.count < offset { buffer.append(contentsOf: repeatElement(0, count: offset - buffer.count)) }
        let overlap = min(bytes.count, buffer.count - offset)
        if overlap > 0 {
            buffer.withUnsafeMutableBytes { ($0.baseAddress! + offset).copyMemory(from: bytes.baseAddress!, byteCount: overlap) }
        }
        if overlap < bytes.count { buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[overlap...])) }
    }

    /// Seals chunk `index` (padded with zeros to a whole chunk unless it is the last),
    /// writes it, and moves on to the next.
    private func sealCurrent(last: Bool) throws {
        if !last, current.count < chunkLength { current.append(contentsOf: repeatElement(0, count: chunkLength - current.count)) }
        let offset = try seal(current, chunk: index, last: last)
        target.beginWriteback(offset: UInt64(offset), length: UInt64(current.count + SealedSnapshotLayout.tagLength))
        index += 1
        current.removeAll(keepingCapacity: true)
    }

    /// Seals `plain` as chunk `chunk` and writes it where it goes; returns that offset.
    private func seal(_ plain: [UInt8], chunk: Int, last: Bool) throws -> Int {
        let aad = SealedSnapshotLayout.associatedData(header: header, ledgerId: ledgerId, last: last)
        let count = plain.count + SealedSnapshotLayout.tagLength
        try plain.withUnsafeBytes { p in
            try sealed.withUnsafeMutableBytes { out in
                try aad.withUnsafeBytes { aad in
                    try ChaCha20Poly1305.seal(plaintext: p, key: key, nonce: SealedSnapshotLayout.nonce(header: header, chunk: chunk),
                                              associatedData: aad, into: UnsafeMutableRawBufferPointer(rebasing: out[0..<count]))
                }
            }
        }
        let offset = SealedSnapshotLayout.fileOffset(ofChunk: chunk, chunkLength: chunkLength)
        try sealed.withUnsafeBytes { try target.write(UnsafeRawBufferPointer(rebasing: $0[0..<count]), at: UInt64(offset)) }
        return offset
    }

    /// Seals chunk 0 and the last chunk, writes the header, and syncs: the file is
    /// whole. A snapshot is synced once, when written whole.
    func sync() throws {
        precondition(!synced, "a sealed snapshot is synced once")
        synced = true
        if length <= chunkLength {
            _ = try seal(first, chunk: 0, last: true)
        } else {
            assert(current.count == length - index * chunkLength && !current.isEmpty, "the current chunk ends the image")
            if first.count < chunkLength { first.append(contentsOf: repeatElement(0, count: chunkLength - first.count)) }
            _ = try seal(first, chunk: 0, last: false)
            try sealCurrent(last: true)
        }
        try header.withUnsafeBytes { try target.write($0, at: 0) }
        try target.sync()
    }

    /// Only to nothing, before any chunk is sealed (the snapshot's writer never cuts a file).
    func truncate(to length: UInt64) throws {
        guard length == 0, index == 1, !synced else {
            throw LogError.io(operation: "truncate (a sealed snapshot is written front to back)", path: "", errno: EPERM)
        }
        first.removeAll(keepingCapacity: true)
        current.removeAll(keepingCapacity: true)
        self.length = 0
    }

    func allocate(upTo length: UInt64) throws {}
    func beginWriteback(offset: UInt64, length: UInt64) {}
    func lockExclusive() throws {}
    func unlock() {}
    func close() { target.close() }
}
