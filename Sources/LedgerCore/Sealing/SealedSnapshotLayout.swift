import Foundation
import LedgerCrypto

/// The byte layout of a sealed snapshot (events/FORMAT.md Part 3, "Sealed snapshots",
/// rule S10), shared by its writer (`SealingFile`) and its reader.
///
/// Version 2 (`HLSEAL02`, written since the import benchmark of issue 32): the plain
/// image in chunks of `chunkLength` bytes, each sealed on its own, so a snapshot is
/// sealed and written as it is made instead of held whole in memory and sealed at the
/// end. File: magic (8) · u64 keyId · 12-byte file nonce (random, fresh per file) ·
/// u32 chunkLength C · then per chunk k = 0, 1, …: the ciphertext of plain bytes
/// k·C ..< min((k+1)·C, n) and its 16-byte tag. Chunk k's nonce is the file nonce with
/// its last 4 bytes XORed with u32 k (little-endian), as TLS 1.3 derives a record's
/// nonce from its sequence number; its associated data is bytes 0..<32, the ledger's id
/// and one byte, 1 for the last chunk and 0 for every other: a chunk moved, dropped,
/// cut at a chunk boundary or taken from another file fails its tag. Every chunk but the
/// last holds exactly C plain bytes; the last holds 1…C (0 only when it is the only one).
///
/// Version 1 (`HLSEAL01`, still read): magic · u64 keyId · 12-byte nonce · u32 reserved
/// · the whole image sealed as one · tag; associated data bytes 0..<32 and the ledger's id.
///
/// Why the nonces never repeat under one key: within a file the chunk index differs in
/// the nonce's last 4 bytes; two files' chunk nonces meet only when their random file
/// nonces agree in the first 8 bytes and differ in the last 4 by the XOR of two chunk
/// indices — for snapshots below 4 GiB (4,096 chunks), probability 2^-84 per pair of
/// files, below 2^-44 after a million snapshots under one key.
enum SealedSnapshotLayout {
    static let magicVersion1 = Array("HLSEAL01".utf8)
    static let magicVersion2 = Array("HLSEAL02".utf8)
    /// Bytes before the first chunk (either version).
    static let headerLength = 32
    /// Plain bytes per chunk written: 1 MiB.
    static let chunkLength = 1 << 20
    /// The chunk lengths a reader accepts: multiples of 64 from 4 KiB to 64 MiB (an
    /// untrusted u32, range-checked before any arithmetic; a chunk holds at least the
    /// plain snapshot's header, so `openHeader` finds it in chunk 0).
    static let acceptedChunkLengths = 4096...(1 << 26)
    static let tagLength = ChaCha20Poly1305.tagByteCount

    /// The 32-byte header of a version 2 file.
    static func header(keyId: UInt64, fileNonce: [UInt8], chunkLength: Int) -> [UInt8] {
        precondition(fileNonce.count == SealNonce.byteCount && acceptedChunkLengths.contains(chunkLength) && chunkLength % 64 == 0)
        var header = magicVersion2
        withUnsafeBytes(of: keyId.littleEndian) { header += $0 }
        header += fileNonce
        withUnsafeBytes(of: UInt32(chunkLength).littleEndian) { header += $0 }
        return header
    }

    /// Chunk `index`'s nonce: the file nonce (header bytes 16..<28), its last 4 bytes
    /// XORed with u32 `index`.
    static func nonce(header: some Collection<UInt8>, chunk index: Int) -> SealNonce {
        var bytes = Array(header.dropFirst(16).prefix(SealNonce.byteCount))
        let counter = UInt32(truncatingIfNeeded: index)
        for i in 0..<4 { bytes[8 + i] ^= UInt8(truncatingIfNeeded: counter >> (8 * UInt32(i))) }
        // 12 bytes by construction: cannot fail.
        guard let nonce = try? SealNonce(bytes: bytes) else { preconditionFailure("a nonce is 12 bytes") }
        return nonce
    }

    /// A version 2 chunk's associated data: the header, the ledger's id, and whether it
    /// is the file's last chunk.
    static func associatedData(header: some Collection<UInt8>, ledgerId: UUID, last: Bool) -> [UInt8] {
        Array(header) + withUnsafeBytes(of: ledgerId.uuid) { Array($0) } + [last ? 1 : 0]
    }

    /// Where chunk `index` begins in a version 2 file of chunk length `chunkLength`.
    static func fileOffset(ofChunk index: Int, chunkLength: Int) -> Int {
        headerLength + index * (chunkLength + tagLength)
    }

    /// A version 2 file's chunk length (bytes 28..<32), when it is one a writer makes;
    /// nil otherwise.
    static func chunkLength(ofHeader header: ArraySlice<UInt8>) -> Int? {
        guard header.count >= headerLength else { return nil }
        let b = header.startIndex + 28
        let length = Int(header[b]) | Int(header[b + 1]) << 8 | Int(header[b + 2]) << 16 | Int(header[b + 3]) << 24
        guard acceptedChunkLengths.contains(length), length % 64 == 0 else { return nil }
        return length
    }

    /// The number of chunks of a version 2 file with `bodyLength` bytes after its header,
    /// and how many plain bytes its last chunk holds; nil when no file of chunks of
    /// `chunkLength` is that long (cut inside a tag, or an empty last chunk after others).
    static func chunks(bodyLength: Int, chunkLength: Int) -> (count: Int, lastLength: Int)? {
        let sealedChunk = chunkLength + tagLength
        guard bodyLength >= tagLength else { return nil }
        let count = (bodyLength + sealedChunk - 1) / sealedChunk
        let last = bodyLength - (count - 1) * sealedChunk - tagLength
        guard last >= (count == 1 ? 0 : 1), last <= chunkLength, count <= Int(UInt32.max) else { return nil }
        return (count, last)
    }
}
