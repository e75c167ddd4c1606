import Foundation
import LedgerChecksums
import LedgerLog
import Testing
@testable import AppleHealthImport

/// Fixtures written by Python's zlib and zipfile (tools/make_deflate_fixtures.py).
enum Fixtures {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    struct Entry: Sendable, CustomStringConvertible {
        let name: String, kind: String, length: Int, sha256: String
        var description: String { name }
        var path: String { folder.appendingPathComponent(name).path }
    }

    static let manifest: [Entry] = {
        let text = (try? String(contentsOf: folder.appendingPathComponent("manifest.tsv"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { line in
            let f = line.split(separator: "\t").map(String.init)
            return Entry(name: f[0], kind: f[1], length: Int(f[2])!, sha256: f[3])
        }
    }()

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
    }
}

func readAll(_ stream: ByteStream, chunk: Int = 65_536) throws -> [UInt8] {
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: chunk)
    while true {
        let n = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
        if n == 0 { return out }
        out += buffer[0..<n]
    }
}

struct DeflateTests {
    @Test func theManifestListsEveryFixture() {
        #expect(Fixtures.manifest.count == 13)
    }

    /// Every raw DEFLATE fixture (stored, fixed and dynamic Huffman, levels 0–9,
    /// distance 1 to 32768, empty) inflates to exactly the bytes zlib compressed.
    @Test(arguments: Fixtures.manifest.filter { $0.kind == "deflate" })
    func inflatesWhatZlibWrote(_ fixture: Fixtures.Entry) throws {
        for chunk in [1, 7, 65_536] {  // tiny reads exercise every resume point
            let decoder = DeflateDecoder(source: MemoryStream(try Fixtures.bytes(fixture.name), chunk: chunk == 1 ? 3 : chunk))
            let out = try readAll(decoder, chunk: chunk)
            #expect(out.count == fixture.length)
            #expect(SHA256.hash(out).hex == fixture.sha256, "\(fixture.name) read \(chunk) at a time")
            #expect(decoder.isFinished)
        }
    }

    @Test func aTruncatedStreamIsAnErrorNotGarbage() throws {
        let full = try Fixtures.bytes("text-level6.deflate")
        let cut = Array(full[0..<(full.count / 2)])
        #expect(throws: ArchiveError.truncated(entry: "deflate stream")) { try readAll(DeflateDecoder(source: MemoryStream(cut))) }
    }

    @Test func reservedBlockTypeAndBadStoredLengthAreNamed() {
        // BFINAL=1, BTYPE=11.
        #expect(throws: ArchiveError.corruptDeflate(reason: "reserved block type 3")) {
            try readAll(DeflateDecoder(source: MemoryStream([0x07, 0x00])))
        }
        // Stored block whose LEN and NLEN disagree.
        #expect(throws: ArchiveError.corruptDeflate(reason: "stored block length 5 does not match its complement")) {
            try readAll(DeflateDecoder(source: MemoryStream([0x01, 0x05, 0x00, 0x00, 0x00, 1, 2, 3, 4, 5])))
        }
    }

    /// Flipped bits anywhere give a typed error or (rarely) other bytes, never a crash
    /// or a read outside the window.
    @Test func corruptedStreamsNeverCrash() throws {
        let good = try Fixtures.bytes("text-level9.deflate")
        var rng = SystemRandomNumberGenerator()
        var errors = 0
        for _ in 0..<300 {
            var bad = good
            let at = Int.random(in: 0..<bad.count, using: &rng)
            bad[at] ^= UInt8(1 << Int.random(in: 0..<8, using: &rng))
            do { _ = try readAll(DeflateDecoder(source: MemoryStream(bad))) } catch is ArchiveError { errors += 1 }
        }
        #expect(errors > 0)
    }
}

struct ZipArchiveTests {
    @Test(arguments: Fixtures.manifest.filter { $0.kind == "zip" })
    func readsWhatZipfileWrote(_ fixture: Fixtures.Entry) throws {
        let archive = try ZipArchive(path: fixture.path)
        let entry = try #require(archive.entries.first)
        let out = try readAll(try archive.open(entry))
        #expect(SHA256.hash(out).hex == fixture.sha256)
        #expect(UInt64(out.count) == entry.uncompressedSize)
    }

    @Test func namesAreUTF8WithOrWithoutTheFlag() throws {
        for name in ["two-entries.zip", "utf8-unflagged.zip"] {
            let archive = try ZipArchive(path: Fixtures.folder.appendingPathComponent(name).path)
            #expect(archive.entries.map(\.name) == ["apple_health_export/导出.xml", "apple_health_export/stored.bin"], "\(name)")
        }
        let flagged = try ZipArchive(path: Fixtures.folder.appendingPathComponent("two-entries.zip").path)
        let unflagged = try ZipArchive(path: Fixtures.folder.appendingPathComponent("utf8-unflagged.zip").path)
        #expect(flagged.entries[0].flags & 0x0800 != 0)
        #expect(unflagged.entries[0].flags & 0x0800 == 0)
        // Bytes that are not UTF-8 read as CP437, the zip default.
        #expect(ZipArchive.decodeName([0x82, 0x41], utf8Flag: false) == "éA")
    }

    @Test func aStoredEntryAndZip64Sizes() throws {
        let archive = try ZipArchive(path: Fixtures.folder.appendingPathComponent("two-entries.zip").path)
        #expect(archive.entries[1].method == 0)
        #expect(try readAll(try archive.open(archive.entries[1])).count == 1000)
        let zip64 = try ZipArchive(path: Fixtures.folder.appendingPathComponent("zip64.zip").path)
        #expect(zip64.entries.map(\.name) == ["export.xml"])
        #expect(zip64.entries[0].uncompressedSize == 91_240)
    }

    /// A ZIP64 end record whose 64-bit offsets are forged: each is a named error,
    /// never an arithmetic trap (the sums used to overflow UInt64).
    @Test(arguments: [
        (UInt64(0xFFFF_FFFF_FFFF_FFF0), UInt64(0x20)),   // offset + size overflows
        (UInt64(0x10), UInt64(0xFFFF_FFFF_FFFF_FFF8)),   // size alone is absurd
        (UInt64(0xFFFF_FFFF_FFFF_FFFF), UInt64(0)),
    ])
    func forgedZip64OffsetsAreNamedNotTrapped(offset: UInt64, size: UInt64) throws {
        func le(_ value: UInt64, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        var bytes: [UInt8] = []
        bytes += le(0x0606_4B50, 4) + le(44, 8) + le(45, 2) + le(45, 2) + le(0, 4) + le(0, 4)   // ZIP64 record
        bytes += le(1, 8) + le(1, 8) + le(size, 8) + le(offset, 8)
        bytes += le(0x0706_4B50, 4) + le(0, 4) + le(0, 8) + le(1, 4)                            // locator → 0
        bytes += le(0x0605_4B50, 4) + le(0, 4) + le(0xFFFF, 2) + le(0xFFFF, 2)                  // end record
        bytes += le(0xFFFF_FFFF, 4) + le(0xFFFF_FFFF, 4) + le(0, 2)
        let dir = TemporaryFolder()
        let path = dir.path + "/forged.zip"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try ZipArchive(path: path)
        } throws: { error in
            guard case ArchiveError.corruptDirectory(_, let reason) = error else { return false }
            return reason == "central directory outside the file"
        }
    }

    /// An end record at the very start of the file that asks for ZIP64 has no room
    /// for the locator before it: named, not an underflow.
    @Test func aZip64EndRecordAtOffsetZeroIsNamed() throws {
        let bytes: [UInt8] = [0x50, 0x4B, 0x05, 0x06, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF,
                              0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0]
        let dir = TemporaryFolder()
        let path = dir.path + "/short.zip"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try ZipArchive(path: path)
        } throws: { error in
            guard case ArchiveError.corruptDirectory(0, let reason) = error else { return false }
            return reason == "no room for a ZIP64 locator"
        }
    }

    @Test func aDamagedEntryFailsItsChecksum() throws {
        var bytes = try Fixtures.bytes("two-entries.zip")
        let archive = try ZipArchive(path: Fixtures.folder.appendingPathComponent("two-entries.zip").path)
        // Damage one byte of the stored entry's data (after its local header).
        let stored = archive.entries[1]
        let dataAt = Int(stored.localHeaderOffset) + 30 + stored.rawName.count + 100
        bytes[dataAt] ^= 0xFF
        let dir = TemporaryFolder()
        let path = dir.path + "/damaged.zip"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let damaged = try ZipArchive(path: path)
        #expect(throws: ArchiveError.self) { try readAll(try damaged.open(damaged.entries[1])) }
        do {
            _ = try readAll(try damaged.open(damaged.entries[1]))
        } catch let ArchiveError.checksumMismatch(entry, expected, _) {
            #expect(entry == "apple_health_export/stored.bin")
            #expect(expected == stored.crc32)
        }
    }

    @Test func notAZipIsNamed() throws {
        let dir = TemporaryFolder()
        let path = dir.path + "/plain.txt"
        try Data("hello".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: ArchiveError.notAZip(path: path)) { try ZipArchive(path: path) }
    }

    /// Every zip in the shared exports inflates with its CRC-32 checked.
    @Test(.enabled(if: SharedExports.root != nil, "needs ../shared/data/apple-health (the shared exports are absent)"))
    func everySharedZipInflates() throws {
        let root = try #require(SharedExports.root)
        let zips = SharedExports.files(in: root).filter { $0.hasSuffix(".zip") }
        #expect(zips.count == 5)
        for zip in zips {
            let archive = try ZipArchive(path: zip)
            for entry in archive.entries where !entry.isDirectory {
                let n = try readAll(try archive.open(entry), chunk: 1 << 20).count
                #expect(UInt64(n) == entry.uncompressedSize, "\(zip) \(entry.name)")
            }
        }
    }
}

/// A temporary folder for one test.
final class TemporaryFolder {
    let path: String
    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("healthledger-import-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}
