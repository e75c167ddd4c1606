import Foundation
@testable import LedgerCore
import LedgerKeys
import LedgerLog
import Testing
import TestSupport

/// Sealed snapshots in chunks (events/FORMAT.md, "Sealed snapshots", rule S10): what
/// the writer seals as it goes opens to exactly the bytes written, and every way of
/// changing the file — a bit, a chunk moved, dropped, cut, added, or the header's
/// chunk length — is refused by name.
@Suite struct SealedSnapshotFileTests {
    /// A ledger folder's key ring and its sealing file system.
    struct Fixture {
        let dir: TemporaryDirectory
        let fs: SealedSnapshotFileSystem
        let ledgerId = UUID()

        init(_ name: String) throws {
            dir = TemporaryDirectory(name)
            try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
            let ring = LedgerKeyRing(folder: LedgerKeyRing.folder(ofLedger: dir.path), kek: try KeyEncryptionKey.create(at: dir.path + "/kek"))
            try ring.create()
            try ring.openForWriting()
            fs = SealedSnapshotFileSystem(base: PosixFileSystem(path: dir.path), ring: ring, ledgerId: ledgerId)
            _ = try fs.createSubfolder(SnapshotFile.folder)
        }

        var path: String { dir.path + "/" + Self.name }
        static let name = SnapshotFile.folder + "/s.bin"

        /// Writes `image` as the snapshot writer does: from offset 128 on in pieces of
        /// `piece` bytes, then its first 128 bytes last.
        func write(_ image: [UInt8], piece: Int) throws {
            let file = try fs.open(Self.name, .replace)
            var offset = 128
            while offset < image.count {
                let end = min(image.count, offset + piece)
                try image[offset..<end].withUnsafeBytes { try file.write($0, at: UInt64(offset)) }
                offset = end
            }
            try image[0..<min(128, image.count)].withUnsafeBytes { try file.write($0, at: 0) }
            try file.sync()
            file.close()
        }

        /// What opening the file gives.
        enum Opened: Equatable {
            case image([UInt8])
            /// The rule and reason it was refused for.
            case refused(String)
        }

        /// The image the file opens to, or the reason it does not.
        func read() -> Opened {
            do {
                let file = try fs.open(Self.name, .readOnly)
                return .image(try file.readAll(path: path))
            } catch let SnapshotProblem.unreadable(_, reason, rule) {
                return .refused("\(rule ?? "-"): \(reason)")
            } catch {
                return .refused("\(error)")
            }
        }

        var bytes: [UInt8] {
            get { Array((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()) }
            nonmutating set { try? Data(newValue).write(to: URL(fileURLWithPath: path)) }
        }
    }

    /// `count` bytes from a seeded generator, eight at a time.
    static func image(_ count: Int) -> [UInt8] {
        var random = SeededRandom(seed: UInt64(count))
        var bytes = [UInt8](repeating: 0, count: (count + 7) / 8 * 8)
        bytes.withUnsafeMutableBytes { b in
            for i in stride(from: 0, to: b.count, by: 8) { b.storeBytes(of: random.next(), toByteOffset: i, as: UInt64.self) }
        }
        return Array(bytes.prefix(count))
    }

    @Test(arguments: [128, 4000, 1 << 20, (1 << 20) + 1, 2 << 20, (2 << 20) + 200, (3 << 20) - 7])
    func whatIsWrittenOpensToTheSameBytes(count: Int) throws {
        let f = try Fixture("sealed-\(count)")
        let image = Self.image(count)
        try f.write(image, piece: 70_001)
        #expect(f.read() == .image(image))
        let chunks = (count + (1 << 20) - 1) >> 20
        let file = f.bytes
        #expect(file.count == 32 + count + 16 * chunks)
        #expect(Array(file[0..<8]) == Array("HLSEAL02".utf8))
        #expect(file[28..<32] == [0, 0, 16, 0])  // 1 MiB chunks
        // The header opens alone (the snapshot is chosen by it before it is loaded).
        let header = try f.fs.openHeader(Fixture.name).readAll(path: f.path)
        #expect(header == Array(image.prefix(128)))
        // No plain run of the image is in the file.
        #expect(file.firstRange(of: image.suffix(32)) == nil)
    }

    @Test func aGapIsZerosAndAChunkAlreadySealedCannotBeWrittenAgain() throws {
        let f = try Fixture("sealed-gap")
        let file = try f.fs.open(Fixture.name, .replace)
        try [UInt8](repeating: 7, count: 10).withUnsafeBytes { try file.write($0, at: UInt64(3 << 20)) }
        let refused = #expect(throws: LogError.self) {
            try [UInt8](repeating: 1, count: 4).withUnsafeBytes { try file.write($0, at: UInt64(1 << 20)) }
        }
        #expect("\(refused.map { "\($0)" } ?? "")".contains("chunk 1 is already sealed"))
        try [UInt8](repeating: 9, count: 4).withUnsafeBytes { try file.write($0, at: 0) }
        try file.sync()
        file.close()
        var expected = [UInt8](repeating: 0, count: (3 << 20) + 10)
        expected.replaceSubrange(0..<4, with: [9, 9, 9, 9])
        expected.replaceSubrange((3 << 20)..<((3 << 20) + 10), with: [UInt8](repeating: 7, count: 10))
        #expect(f.read() == .image(expected))
    }

    @Test func everyChangeToTheFileIsRefusedByName() throws {
        let f = try Fixture("sealed-hostile")
        let image = Self.image((2 << 20) + 300)  // chunks of 1 MiB, 1 MiB, 300 bytes
        try f.write(image, piece: 1 << 16)
        let good = f.bytes
        let sealedChunk = (1 << 20) + 16
        let chunk = { (k: Int) in 32 + k * sealedChunk }
        func refused(_ change: ([UInt8]) -> [UInt8]) -> String {
            f.bytes = change(good)
            defer { f.bytes = good }
            switch f.read() {
            case .image: return "opened"
            case .refused(let why): return why
            }
        }
        // A bit flipped in each chunk, in a tag, in the header's nonce.
        for at in [chunk(0) + 5, chunk(1) + 77, chunk(2) + 299, good.count - 1] {
            #expect(refused { var b = $0; b[at] ^= 1; return b }.contains("does not match its tag"), "byte \(at)")
        }
        #expect(refused { var b = $0; b[20] ^= 1; return b }.contains("chunk 0 of 3 does not match its tag"))
        // Chunks 0 and 1 swapped (same length): each fails its nonce.
        #expect(refused { b in
            Array(b[0..<32]) + Array(b[chunk(1)..<chunk(2)]) + Array(b[chunk(0)..<chunk(1)]) + Array(b[chunk(2)...])
        }.contains("chunk 0 of 3 does not match its tag"))
        // The last chunk dropped (a cut at a chunk boundary): chunk 1 was not sealed as last.
        #expect(refused { Array($0[0..<chunk(2)]) }.contains("chunk 1 of 2 does not match its tag"))
        // Cut inside the last tag, or inside chunk 1's tag; or after 10 bytes of the
        // last chunk, shorter than any tag.
        #expect(refused { Array($0.dropLast(10)) }.contains("chunk 2 of 3 does not match its tag"))
        #expect(refused { Array($0[0..<(chunk(2) - 5)]) }.contains("chunk 1 of 2 does not match its tag"))
        #expect(refused { Array($0[0..<(chunk(2) + 10)]) } == "S10: its length is not a whole number of sealed chunks")
        // A chunk appended (a copy of the last): the old last is not last any more.
        #expect(refused { $0 + Array($0[chunk(2)...]) }.contains("does not match its tag"))
        // The chunk length in the header changed: out of range, or in range and wrong.
        #expect(refused { var b = $0; b[28] = 1; return b }.contains("chunk length is not one a writer makes"))
        #expect(refused { var b = $0; b[30] = 8; return b }.contains("does not match its tag"))
        // Another ledger's file system (another ledger id) refuses this file.
        let other = SealedSnapshotFileSystem(base: f.fs.base, ring: f.fs.ring, ledgerId: UUID())
        #expect(throws: SnapshotProblem.self) { _ = try other.open(Fixture.name, .readOnly) }
        #expect(f.read() == .image(image))
    }
}
