import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerLog
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Rule S8 against a snapshot file that changes while a reader has it open:
/// another process truncates it, overwrites it in place, shrinks or grows it. The
/// bytes a reader uses are the bytes it checked — a block changed after its first read
/// changes no answer; a block changed before it makes the read fail with S8 — and
/// nothing traps.
struct MappedSnapshotChangeTests {
    static func readAll(_ state: LedgerState, _ dir: TemporaryDirectory) throws -> [[Sample]] {
        var view = try LedgerReadView(state: state, fs: dir.fs, ledgerId: fixedLedgerId, viewer: .owner)
        return try [ObjectType.quantity(.stepCount), .quantity(.bodyMass), .correlation(.bloodPressure)].map {
            try view.samples(SampleQuery(type: $0)).samples
        }
    }

    /// Overwrites the file's bytes from `offset` to its end with 0xFF, in place (the
    /// same inode, as `dd conv=notrunc` does).
    static func overwrite(_ path: String, from offset: Int) throws {
        let fd = open(path, O_WRONLY)
        #expect(fd >= 0)
        defer { close(fd) }
        var st = stat()
        #expect(fstat(fd, &st) == 0)
        let ones = [UInt8](repeating: 0xFF, count: max(0, Int(st.st_size) - offset))
        #expect(ones.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) } == ones.count)
    }

    /// The file cut to 4 KiB after the state was mapped, before any column block was
    /// read: the first block the reads need (the step-count timeline's) fails with S8,
    /// named as not all in the file — where the mapping raised SIGBUS.
    @Test func aBlockCutOffBeforeItsFirstReadFailsTheReadWithS8NotATrap() async throws {
        let dir = TemporaryDirectory()
        let name = try await MappedSnapshotTests.ledgerWithSnapshot(dir)
        let path = dir.path + "/" + name
        let timelines = try #require(MappedSnapshotTests.place(of: 12, in: try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))))
        #expect(timelines.array > 4096)
        let mapped = try MappedSnapshotTests.load(dir, mapped: true)
        #expect(truncate(path, 4096) == 0)
        let problem = SnapshotProblem.unreadable(
            file: name, reason: "section 12 block 0 is cut short: 0 of its \(timelines.arrayLength) bytes are in the file", rule: "S8")
        #expect(throws: problem) { _ = try Self.readAll(mapped, dir) }
        #expect(mapped.snapshotDamage?.problem == problem)
    }

    /// Every block the reads use checked (read once), then the file overwritten in place
    /// with 0xFF after its first 4 KiB, then cut to 4 KiB: the same reads give the same
    /// answers (the timeline's slot numbers once indexed past the slots: SIGSEGV).
    @Test func aSnapshotChangedAfterItsBlocksWereCheckedChangesNoAnswer() async throws {
        let dir = TemporaryDirectory()
        let name = try await MappedSnapshotTests.ledgerWithSnapshot(dir)
        let path = dir.path + "/" + name
        let mapped = try MappedSnapshotTests.load(dir, mapped: true)
        let expected = try Self.readAll(mapped, dir)
        #expect(expected.map(\.count) == [3_000, 1, 1])
        try Self.overwrite(path, from: 4096)
        #expect(try Self.readAll(mapped, dir) == expected)
        #expect(truncate(path, 4096) == 0)
        #expect(try Self.readAll(mapped, dir) == expected)
        #expect(try mapped.checkIntact() == ())
    }

    /// A damaged UUID-table block: a read resuming after a UUID fails with the block's
    /// S8 problem — the lookup read zeros — instead of calling the cursor unknown.
    @Test func aDamagedUUIDTableBlockFailsACursorReadWithS8NotInvalidCursor() async throws {
        let dir = TemporaryDirectory()
        let name = try await MappedSnapshotTests.ledgerWithSnapshot(dir)
        let path = dir.path + "/" + name
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let buckets = try #require(MappedSnapshotTests.place(of: 11, in: bytes))
        for i in stride(from: buckets.array, to: buckets.array + buckets.arrayLength, by: 8) { bytes[i + 6] ^= 0x10 }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let mapped = try MappedSnapshotTests.load(dir, mapped: true)
        var view = try LedgerReadView(state: mapped, fs: dir.fs, ledgerId: fixedLedgerId, viewer: .owner)
        #expect(throws: SnapshotProblem.unreadable(file: name, reason: "section 11 block 0 fails its check", rule: "S8")) {
            try view.samples(SampleQuery(type: .quantity(.stepCount)), after: fixedUUID(10_005))
        }
    }
}
