import LedgerChecksums

/// A zip archive (PKWARE APPNOTE 6.3), read from its central directory: entry
/// names, sizes and CRCs, with ZIP64 for archives and entries past 4 GiB. Entries
/// are stored (method 0) or deflated (method 8, inflated by `DeflateDecoder`).
public struct ZipArchive: Sendable {
    /// One file in the archive.
    public struct Entry: Hashable, Sendable {
        /// The name, decoded as UTF-8 when the UTF-8 flag is set *or* the bytes are
        /// valid UTF-8 (some zips store UTF-8 without the flag), else as CP437.
        public let name: String
        /// The name's bytes as stored.
        public let rawName: [UInt8]
        public let method: UInt16
        public let flags: UInt16
        public let crc32: UInt32
        public let compressedSize: UInt64
        public let uncompressedSize: UInt64
        public let localHeaderOffset: UInt64

        /// A folder, not a file.
        public var isDirectory: Bool { name.hasSuffix("/") }
    }

    public let file: ReadOnlyFile
    /// Entries in central-directory order.
    public let entries: [Entry]

    /// Reads the central directory of the zip at `path`.
    public init(path: String) throws(ArchiveError) {
        try self.init(file: ReadOnlyFile(path: path))
    }

    public init(file: ReadOnlyFile) throws(ArchiveError) {
        self.file = file
        let size = file.size
        // The end-of-central-directory record: 22 bytes plus a comment of ≤ 65,535.
        let tailLength = Int(min(size, 22 + 65_535))
        guard tailLength >= 22 else { throw ArchiveError.notAZip(path: file.path) }
        let tailStart = size - UInt64(tailLength)
        let tail = try file.bytes(at: tailStart, count: tailLength)
        var eocd = -1
        var i = tailLength - 22
        while i >= 0 {
            if tail[i] == 0x50 && tail[i + 1] == 0x4B && tail[i + 2] == 0x05 && tail[i + 3] == 0x06 {
                eocd = i
                break
            }
            i -= 1
        }
        guard eocd >= 0 else { throw ArchiveError.notAZip(path: file.path) }
        var entryCount = UInt64(le16(tail, eocd + 10))
        var directorySize = UInt64(le32(tail, eocd + 12))
        var directoryOffset = UInt64(le32(tail, eocd + 16))
        if entryCount == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF {
            // ZIP64: a locator sits just before the record and points at the ZIP64 record.
            guard UInt64(eocd) + tailStart >= 20 else {
                throw ArchiveError.corruptDirectory(offset: tailStart + UInt64(eocd), reason: "no room for a ZIP64 locator")
            }
            let locatorAt = tailStart + UInt64(eocd) - 20
            let locator = try file.bytes(at: locatorAt, count: 20)
            guard le32(locator, 0) == 0x0706_4B50 else {
                throw ArchiveError.corruptDirectory(offset: locatorAt, reason: "ZIP64 end-of-central-directory locator missing")
            }
            let recordAt = le64(locator, 8)
            let record = try file.bytes(at: recordAt, count: 56)
            guard le32(record, 0) == 0x0606_4B50 else {
                throw ArchiveError.corruptDirectory(offset: recordAt, reason: "ZIP64 end-of-central-directory record missing")
            }
            entryCount = le64(record, 32)
            directorySize = le64(record, 40)
            directoryOffset = le64(record, 48)
        }
        // Both come from the file: compare without adding, so ZIP64's 64-bit values cannot overflow.
        guard directorySize <= 1 << 30, directoryOffset <= size, directorySize <= size - directoryOffset else {
            throw ArchiveError.corruptDirectory(offset: directoryOffset, reason: "central directory outside the file")
        }
        let directory = try file.bytes(at: directoryOffset, count: Int(directorySize))
        var entries: [Entry] = []
        entries.reserveCapacity(Int(min(entryCount, 1 << 20)))
        var p = 0
        for _ in 0..<entryCount {
            let at = directoryOffset + UInt64(p)
            guard p + 46 <= directory.count, le32(directory, p) == 0x0201_4B50 else {
                throw ArchiveError.corruptDirectory(offset: at, reason: "central directory header expected")
            }
            let flags = le16(directory, p + 8)
            let method = le16(directory, p + 10)
            let crc = le32(directory, p + 16)
            var compressed = UInt64(le32(directory, p + 20))
            var uncompressed = UInt64(le32(directory, p + 24))
            let nameLength = Int(le16(directory, p + 28))
            let extraLength = Int(le16(directory, p + 30))
            let commentLength = Int(le16(directory, p + 32))
            var localOffset = UInt64(le32(directory, p + 42))
            let end = p + 46 + nameLength + extraLength + commentLength
            guard end <= directory.count else {
                throw ArchiveError.corruptDirectory(offset: at, reason: "central directory header runs past the directory")
            }
            let rawName = Array(directory[(p + 46)..<(p + 46 + nameLength)])
            var unicodeName: String?
            // Extra fields: ZIP64 sizes (0x0001) and Info-ZIP's Unicode path (0x7075).
            var x = p + 46 + nameLength
            let extraEnd = x + extraLength
            while x + 4 <= extraEnd {
                let id = le16(directory, x), length = Int(le16(directory, x + 2))
                let body = x + 4
                guard body + length <= extraEnd else { break }
                if id == 0x0001 {
                    var f = body
                    if uncompressed == 0xFFFF_FFFF, f + 8 <= body + length { uncompressed = le64(directory, f); f += 8 }
                    if compressed == 0xFFFF_FFFF, f + 8 <= body + length { compressed = le64(directory, f); f += 8 }
                    if localOffset == 0xFFFF_FFFF, f + 8 <= body + length { localOffset = le64(directory, f); f += 8 }
                } else if id == 0x7075, length >= 5, directory[body] == 1,
                          le32(directory, body + 1) == CRC32.checksum(rawName) {
                    unicodeName = String(validating: directory[(body + 5)..<(body + length)], as: UTF8.self)
                }
                x = body + length
            }
            let name = unicodeName ?? Self.decodeName(rawName, utf8Flag: flags & 0x0800 != 0)
            entries.append(Entry(name: name, rawName: rawName, method: method, flags: flags, crc32: crc,
                                 compressedSize: compressed, uncompressedSize: uncompressed, localHeaderOffset: localOffset))
            p = end
        }
        self.entries = entries
    }

    /// UTF-8 when flagged or when the bytes are valid UTF-8; otherwise CP437 (the
    /// zip default), byte by byte.
    static func decodeName(_ bytes: [UInt8], utf8Flag: Bool) -> String {
        if let s = String(validating: bytes, as: UTF8.self) { return s }
        if utf8Flag { return String(decoding: bytes, as: UTF8.self) }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar(cp437[Int($0)])! }))
    }

    /// The entry's bytes, inflated as they are read; the CRC-32 and size are checked
    /// when the stream reaches its end.
    public func open(_ entry: Entry) throws(ArchiveError) -> ByteStream {
        guard entry.flags & 1 == 0 else { throw ArchiveError.encrypted(entry: entry.name) }
        // Offsets and sizes come from the file (ZIP64: any 64-bit value): range-check
        // before adding, so a forged directory is an error, never an overflow trap.
        guard entry.localHeaderOffset <= file.size, file.size - entry.localHeaderOffset >= 30 else {
            throw ArchiveError.truncated(entry: entry.name)
        }
        let header = try file.bytes(at: entry.localHeaderOffset, count: 30)
        guard le32(header, 0) == 0x0403_4B50 else {
            throw ArchiveError.corruptDirectory(offset: entry.localHeaderOffset, reason: "local file header expected for \(entry.name)")
        }
        let dataAt = entry.localHeaderOffset + 30 + UInt64(le16(header, 26)) + UInt64(le16(header, 28))
        guard dataAt <= file.size, entry.compressedSize <= file.size - dataAt else {
            throw ArchiveError.truncated(entry: entry.name)
        }
        let region = FileRegionStream(file, offset: dataAt, length: entry.compressedSize)
        let inner: ByteStream
        switch entry.method {
        case 0: inner = region
        case 8: inner = DeflateDecoder(source: region, name: entry.name)
        default: throw ArchiveError.unsupportedMethod(entry: entry.name, method: entry.method)
        }
        return CheckedEntryStream(inner, entry: entry)
    }

    /// The first `count` bytes of an entry (content sniffing).
    public func prefix(of entry: Entry, count: Int) throws -> [UInt8] {
        let stream = try open(entry)
        var out = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = try out.withUnsafeMutableBytes { b in
                try stream.read(into: UnsafeMutableRawBufferPointer(rebasing: b[filled...]))
            }
            if n == 0 { break }
            filled += n
        }
        return Array(out[0..<filled])
    }
}

/// Passes an entry's bytes through, computing CRC-32 and size; at the end, throws
/// `checksumMismatch`/`sizeMismatch` rather than returning 0 when they disagree
/// with the central directory.
final class CheckedEntryStream: ByteStream {
    private let inner: ByteStream
    private let entry: ZipArchive.Entry
    private var crc = CRC32()
    private var size: UInt64 = 0

    init(_ inner: ByteStream, entry: ZipArchive.Entry) {
        self.inner = inner
        self.entry = entry
    }

    /// Asks the inner stream for at most one byte past the claimed size: enough to
    /// tell an entry longer than its directory says (a zip bomb), which then stops
    /// there, never inflating on.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let remaining = entry.uncompressedSize - size  // size never passes it (thrown below)
        let want = remaining < UInt64(buffer.count) ? Int(remaining) + 1 : buffer.count
        let n = try inner.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]))
        if n == 0 {
            guard size == entry.uncompressedSize else {
                throw ArchiveError.sizeMismatch(entry: entry.name, expected: entry.uncompressedSize, actual: size)
            }
            guard crc.value == entry.crc32 else {
                throw ArchiveError.checksumMismatch(entry: entry.name, expected: entry.crc32, actual: crc.value)
            }
            return 0
        }
        crc.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        size += UInt64(n)
        if size > entry.uncompressedSize {
            throw ArchiveError.sizeMismatch(entry: entry.name, expected: entry.uncompressedSize, actual: size)
        }
        return n
    }
}

@inline(__always) func le16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
@inline(__always) func le32(_ b: [UInt8], _ i: Int) -> UInt32 {
    UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
}
@inline(__always) func le64(_ b: [UInt8], _ i: Int) -> UInt64 { UInt64(le32(b, i)) | UInt64(le32(b, i + 4)) << 32 }

/// Code page 437, the zip default for names without the UTF-8 flag.
private let cp437: [UInt32] = {
    var t = (0..<128).map { UInt32($0) }
    t += [0xC7, 0xFC, 0xE9, 0xE2, 0xE4, 0xE0, 0xE5, 0xE7, 0xEA, 0xEB, 0xE8, 0xEF, 0xEE, 0xEC, 0xC4, 0xC5,
          0xC9, 0xE6, 0xC6, 0xF4, 0xF6, 0xF2, 0xFB, 0xF9, 0xFF, 0xD6, 0xDC, 0xA2, 0xA3, 0xA5, 0x20A7, 0x192,
          0xE1, 0xED, 0xF3, 0xFA, 0xF1, 0xD1, 0xAA, 0xBA, 0xBF, 0x2310, 0xAC, 0xBD, 0xBC, 0xA1, 0xAB, 0xBB,
          0x2591, 0x2592, 0x2593, 0x2502, 0x2524, 0x2561, 0x2562, 0x2556, 0x2555, 0x2563, 0x2551, 0x2557, 0x255D, 0x255C, 0x255B, 0x2510,
          0x2514, 0x2534, 0x252C, 0x251C, 0x2500, 0x253C, 0x255E, 0x255F, 0x255A, 0x2554, 0x2569, 0x2566, 0x2560, 0x2550, 0x256C, 0x2567,
          0x2568, 0x2564, 0x2565, 0x2559, 0x2558, 0x2552, 0x2553, 0x256B, 0x256A, 0x2518, 0x250C, 0x2588, 0x2584, 0x258C, 0x2590, 0x2580,
          0x3B1, 0xDF, 0x393, 0x3C0, 0x3A3, 0x3C3, 0xB5, 0x3C4, 0x3A6, 0x398, 0x3A9, 0x3B4, 0x221E, 0x3C6, 0x3B5, 0x2229,
          0x2261, 0xB1, 0x2265, 0x2264, 0x2320, 0x2321, 0xF7, 0x2248, 0xB0, 0x2219, 0xB7, 0x221A, 0x207F, 0xB2, 0x25A0, 0xA0]
    return t
}()
