import Foundation
import Testing
@testable import LedgerLog
#if canImport(Glibc)
import Glibc
#endif

/// The log layer's durability defects: each test fails on the code before the fix.
struct DurabilityTests {
    static func record(_ seed: UInt64, length: Int = 40) -> LogRecord {
        LogRecord(kind: 1, kindVersion: 1, payload: payload(seed: seed, length: length))
    }

    // MARK: One writer, even when LOCK is deleted

    /// `rm LOCK` under a running writer let a second writer open and both write at
    /// the same offset. The writer also locks the log itself, so the second is refused.
    @Test func deletingLockDoesNotLetASecondWriterIn() async throws {
        let dir = TemporaryDirectory()
        let first = try LogWriter.create(dir.fs, options: testOptions)
        try await first.append([Self.record(1)])
        try FileManager.default.removeItem(atPath: dir.path + "/LOCK")
        #expect(throws: LogError.ledgerLocked(path: dir.path + "/ledger.log")) {
            _ = try LogWriter.open(dir.fs, options: testOptions)
        }
        // The first writer goes on, unharmed, and everything acknowledged is there.
        try await first.append([Self.record(2)])
        try await first.close()
        #expect(try allRecords(dir.fs).map(\.payload) == [payload(seed: 1, length: 40), payload(seed: 2, length: 40)])
        #expect(try LogVerifier.verify(dir.fs).isIntact)
        // Closed, the log's lock is released: the next writer opens.
        let next = try LogWriter.open(dir.fs, options: testOptions)
        try await next.close()
    }

    /// A log that changed under the writer (another writer, a truncation) poisons the
    /// writer before it writes anything: it never overwrites.
    // W7: the writer checks the log's size before each write and stops, overwriting nothing.
    @Test func aLogChangedUnderTheWriterPoisonsItAndNothingIsOverwritten() async throws {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, options: testOptions)
        try await writer.append([Self.record(1)])
        let physical = fs.currentBytes(LogWriter.logFileName).count
        // Someone else cuts the space reserved ahead of the log (or appends there).
        let cut = Array(fs.currentBytes(LogWriter.logFileName)[0..<Int(writer.durableLength)])
        fs.setBytes(LogWriter.logFileName, cut)
        let expected = LogError.exclusiveAccessLost(
            path: "/sim/ledger/ledger.log", reason: "the log is \(cut.count) bytes where this writer left \(physical)")
        await #expect(throws: expected) { try await writer.append([Self.record(2)]) }
        #expect(fs.currentBytes(LogWriter.logFileName) == cut)
        await #expect(throws: LogError.writerPoisoned(cause: expected)) { try await writer.append([Self.record(3)]) }
        try await writer.close()
        #expect(fs.currentBytes(LogWriter.logFileName) == cut)
    }

    // MARK: A cut below a length known durable is damage

    /// A ledger closed cleanly (index covering the seal), then cut 10 bytes into its
    /// last acknowledged record. Before: recovery cut the rest as a torn tail and the
    /// acknowledged record was gone for good.
    static func cutLedger() async throws -> (fs: SimulatedFileSystem, cutBytes: [UInt8], covered: UInt64) {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, options: testOptions)
        for i in 0..<3 { try await writer.append([Self.record(UInt64(i), length: 100)]) }
        let lastEnd = writer.durableLength
        try await writer.close()
        let full = fs.currentBytes(LogWriter.logFileName)
        // The last batch's record ends 32 bytes (the link) before the batch's end.
        let cutAt = Int(lastEnd) - LogFormat.linkLength - 10
        let cut = Array(full[0..<cutAt])
        fs.setBytes(LogWriter.logFileName, cut)
        return (fs, cut, UInt64(full.count))
    }

    @Test func aLogCutBelowTheIndexedLengthIsDamageNotATornTail() async throws {
        let (fs, cut, covered) = try await Self.cutLedger()
        let damage = LogError.damaged(LogDamage(kind: .truncatedBelowDurable, offset: UInt64(cut.count),
                                                length: covered - UInt64(cut.count), sequence: nil, inDurablePrefix: true))
        #expect(throws: damage) { _ = try LogWriter.open(fs, options: testOptions) }
        #expect(damage.description == "damaged: truncatedBelowDurable at byte \(cut.count): the log ends there but "
                + "index/log.idx proves \(covered) bytes were durable; acknowledged bytes are missing: damage [I3]")
        // Nothing touched: no cut, no quarantine.
        #expect(fs.currentBytes(LogWriter.logFileName) == cut)
        #expect(fs.list("quarantine") == [])
        // Readers say the same instead of reading a shorter log silently.
        #expect(throws: damage) { try LogReader(fs).forEachRecord { _ in true } }
        #expect(try LogVerifier.verify(fs).damage?.inDurablePrefix == true)
    }

    /// Without an index, the same cut is indistinguishable from a torn write: the
    /// reader stops there and says so (`stoppedShort`), and recovery cuts it.
    @Test func aReaderThatStopsShortSaysWhere() async throws {
        let (fs, cut, _) = try await Self.cutLedger()
        try fs.remove("index/log.idx")
        let reader = try LogReader(fs)
        #expect(reader.stoppedShort == nil)
        var seen = 0
        let end = try reader.forEachRecord { _ in seen += 1; return true }
        #expect(seen == 2)
        let tail = try #require(end.incompleteTail)
        #expect(reader.stoppedShort == tail)
        #expect(tail.kind == .batchTruncated)
        #expect(end.endOffset < UInt64(cut.count))
    }

    // MARK: A nearly full disk

    /// The space reservation failing (ENOSPC with under 4 MiB free) used to poison the
    /// writer; now appends go on without it.
    @Test func aFailedReservationFallsBackToPlainAppends() async throws {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, options: testOptions)
        fs.allocateFails = ENOSPC
        for i in 0..<5 { try await writer.append([Self.record(UInt64(i))]) }
        // No reserved zeros: the file ends at the log's end.
        #expect(UInt64(fs.currentBytes(LogWriter.logFileName).count) == writer.durableLength)
        try await writer.close()
        #expect(try allRecords(fs).count == 5)
        #expect(try LogVerifier.verify(fs).isIntact)
    }

    /// A write that fails for lack of space says so first, not "writerPoisoned … fallocate".
    @Test func aFullDiskIsNamedAsSuch() async throws {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, options: testOptions)
        fs.allocateFails = ENOSPC
        fs.writesFail = ENOSPC
        await #expect(throws: LogError.noSpace(operation: "pwrite", path: "ledger.log")) {
            try await writer.append([Self.record(1)])
        }
        #expect(LogError.noSpace(operation: "pwrite", path: "ledger.log").description
                == "noSpace: no space left on device (pwrite ledger.log)")
        try await writer.close()
    }

    /// Recovery on a full disk: the quarantine copy fails, so the log is left uncut
    /// and no empty quarantine file stays behind.
    @Test func aFullDiskDuringRecoveryLeavesNoEmptyQuarantineFile() async throws {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, options: testOptions)
        try await writer.append([Self.record(1)])
        let end = Int(writer.durableLength)
        writer.abandon()
        var torn = Array(fs.currentBytes(LogWriter.logFileName)[0..<end])
        torn += Array(torn[LogFormat.fileHeaderLength..<(LogFormat.fileHeaderLength + 50)])  // half a batch
        fs.setBytes(LogWriter.logFileName, torn)
        fs.writesFail = ENOSPC
        #expect(throws: LogError.self) { _ = try LogWriter.open(fs, options: testOptions) }
        #expect(fs.list("quarantine") == [])
        #expect(fs.currentBytes(LogWriter.logFileName) == torn)
        fs.writesFail = nil
        let reopened = try LogWriter.open(fs, options: testOptions)
        let cut = try #require(reopened.recovery?.cut)
        #expect(fs.list("quarantine").count == 1)
        #expect(fs.currentBytes(cut.quarantineFile) == Array(torn[end...]))
        try await reopened.close()
    }

    // MARK: Quarantine survives a crash

    /// Power lost at every sync (file or folder) of a recovery that cuts a torn tail:
    /// after the reboot, the tail is either still in the log or whole in quarantine.
    /// Before, `quarantine/`'s own entry was never synced, so the cut could survive
    /// a crash that lost the quarantined bytes.
    @Test func aCutTailIsNeverLostToACrash() async throws {
        let base = SimulatedFileSystem()
        let writer = try LogWriter.create(base, options: testOptions)
        try await writer.append([Self.record(1)])
        let end = Int(writer.durableLength)
        writer.abandon()
        var torn = Array(base.currentBytes(LogWriter.logFileName)[0..<end])
        let tail = Array(torn[LogFormat.fileHeaderLength..<(LogFormat.fileHeaderLength + 50)])
        torn += tail
        var lostBefore = 0
        for seed in UInt64(1)...40 {
            for crash in 0..<8 {
                let fs = SimulatedFileSystem(seed: seed)
                fs.setBytes(LogWriter.logFileName, torn)
                if crash < 4 { fs.crashAtSync = crash + 1 } else { fs.crashAtFolderSync = crash - 3 }
                _ = try? LogWriter.open(fs, options: testOptions)
                let after = fs.rebooted(seed: seed &* 31 &+ UInt64(crash))
                let log = after.durableBytes(LogWriter.logFileName)
                if log.count >= torn.count && Array(log[end..<torn.count]) == tail { continue }
                let kept = after.list("quarantine").map { after.durableBytes("quarantine/" + $0) }
                if !kept.contains(tail) { lostBefore += 1 }
            }
        }
        #expect(lostBefore == 0)
    }

    /// The simulated disk itself: entries need their folder synced, data its file synced.
    // W8: an entry is durable once its folder is synced.
    @Test func simulatedFolderEntriesAreDurableOnlyOnceTheFolderIsSynced() throws {
        let fs = SimulatedFileSystem(seed: 5)
        try fs.createFolder()
        try fs.createSubfolder("q")
        let file = try fs.open("q/a", .createNew)
        try [UInt8]([1, 2, 3]).withUnsafeBytes { try file.write($0, at: 0) }
        try file.sync()
        #expect(fs.entryIsDurable("q/a") == false)
        try fs.syncFolder("q")
        #expect(fs.entryIsDurable("q/a") == false)  // q itself is not yet durable in the ledger folder
        try fs.syncFolder(nil)
        #expect(fs.entryIsDurable("q/a"))
        #expect(fs.rebooted().durableBytes("q/a") == [1, 2, 3])
    }

    // MARK: The ledger's folder is private and never followed out of

    @Test func initIntoAnExistingFolderMakesItPrivate() async throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o777])
        chmod(dir.path, 0o777)
        let writer = try LogWriter.create(dir.fs, options: testOptions)
        try await writer.close()
        let mode = try FileManager.default.attributesOfItem(atPath: dir.path)[.posixPermissions] as? Int
        #expect(mode == 0o700)
    }

    // W8: the ledger's folders are never followed through a symbolic link.
    @Test func aSymlinkedQuarantineIsRefusedNotFollowed() async throws {
        let dir = TemporaryDirectory()
        let outside = TemporaryDirectory("outside")
        try FileManager.default.createDirectory(atPath: outside.path, withIntermediateDirectories: true)
        let writer = try LogWriter.create(dir.fs, options: testOptions)
        try await writer.append([Self.record(1)])
        let end = writer.durableLength
        writer.abandon()
        // A torn tail to quarantine, and quarantine/ pointing out of the ledger.
        let log = try #require(FileHandle(forUpdatingAtPath: dir.path + "/ledger.log"))
        try log.truncate(atOffset: end)
        try log.seekToEnd()
        log.write(Data(repeating: 0x48, count: 30))
        try log.close()
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/quarantine", withDestinationPath: outside.path)
        let before = try Data(contentsOf: URL(fileURLWithPath: dir.path + "/ledger.log"))
        #expect(throws: LogError.unsafePath(path: dir.path + "/quarantine", reason: "is a symbolic link")) {
            _ = try LogWriter.open(dir.fs, options: testOptions)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path) == [])
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.path + "/ledger.log")) == before)
    }

    @Test func symlinkedSnapshotsAndIndexFoldersAreRefused() throws {
        let dir = TemporaryDirectory()
        let outside = TemporaryDirectory("outside")
        try FileManager.default.createDirectory(atPath: outside.path, withIntermediateDirectories: true)
        try dir.fs.createFolder()
        for name in ["snapshots", "index"] {
            try FileManager.default.createSymbolicLink(atPath: dir.path + "/" + name, withDestinationPath: outside.path)
            let refusal = LogError.unsafePath(path: dir.path + "/" + name, reason: "is a symbolic link")
            #expect(throws: refusal) { try dir.fs.createSubfolder(name) }
            #expect(throws: refusal) { _ = try dir.fs.open(name + "/x.tmp", .replace) }
            #expect(throws: refusal) { try dir.fs.rename(name + "/x.tmp", to: name + "/x") }
            #expect(dir.fs.list(name) == [])
        }
        // A ledger file that is a symbolic link is not followed either.
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/ledger.log", withDestinationPath: outside.path + "/log")
        #expect(throws: LogError.unsafePath(path: dir.path + "/ledger.log", reason: "is a symbolic link")) {
            _ = try dir.fs.open("ledger.log", .readWrite)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path) == [])
    }
}
