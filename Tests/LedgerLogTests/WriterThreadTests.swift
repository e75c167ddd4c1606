import Foundation
import Synchronization
import Testing
@testable import LedgerLog
#if canImport(Glibc)
import Glibc
#endif

/// The writer does every write and sync on a thread of its own, seals
/// outside its state lock, and publishes only lengths whose bytes are in the file.
struct WriterThreadTests {
    /// Where a write, sync, reservation or truncation of the log ran: which OS thread
    /// (a serial number the thread draws once, `ThreadSerial`: a `pthread_t` is the
    /// address of a thread descriptor, which glibc hands to the next thread once one
    /// exits — under ThreadSanitizer the flusher once got the creating task thread's,
    /// and the test failed), and whether inside a Swift task.
    struct Place: Hashable, Sendable {
        let thread: UInt
        let inTask: Bool
    }

    /// Wraps a file system and notes, for the log file, where each write, sync,
    /// reservation and truncation ran.
    final class ThreadNotingFileSystem: LogFileSystem {
        let inner: SimulatedFileSystem
        let places = Locked<[Place]>([])
        init(_ inner: SimulatedFileSystem) { self.inner = inner }

        func note() {
            let place = Place(thread: ThreadSerial.current, inTask: withUnsafeCurrentTask { $0 != nil })
            places.withLock { $0.append(place) }
        }

        var path: String { inner.path }
        func folderExists() -> Bool { inner.folderExists() }
        func createFolder() throws { try inner.createFolder() }
        func exists(_ name: String) -> Bool { inner.exists(name) }
        func open(_ name: String, _ mode: LogFileOpenMode) throws -> any LogFile {
            let file = try inner.open(name, mode)
            return name == LogWriter.logFileName && mode != .readOnly ? NotingFile(file, self) : file
        }
        func createSubfolder(_ name: String) throws -> Bool { try inner.createSubfolder(name) }
        func syncFolder(_ name: String?) throws { try inner.syncFolder(name) }
        func rename(_ from: String, to: String) throws { try inner.rename(from, to: to) }
        func remove(_ name: String) throws { try inner.remove(name) }
        func list(_ subfolder: String) -> [String] { inner.list(subfolder) }
        func lockExclusive(timeout: Double) throws -> any LogLock { try inner.lockExclusive(timeout: timeout) }

        final class NotingFile: LogFile {
            let inner: any LogFile
            let owner: ThreadNotingFileSystem
            init(_ inner: any LogFile, _ owner: ThreadNotingFileSystem) {
                self.inner = inner
                self.owner = owner
            }
            func size() throws -> UInt64 { try inner.size() }
            func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
                try inner.read(into: buffer, at: offset)
            }
            func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
                owner.note()
                try inner.write(bytes, at: offset)
            }
            func sync() throws {
                owner.note()
                try inner.sync()
            }
            func truncate(to length: UInt64) throws {
                owner.note()
                try inner.truncate(to: length)
            }
            func allocate(upTo length: UInt64) throws {
                owner.note()
                try inner.allocate(upTo: length)
            }
            func beginWriteback(offset: UInt64, length: UInt64) { inner.beginWriteback(offset: offset, length: length) }
            func lockExclusive() throws { try inner.lockExclusive() }
            func unlock() { inner.unlock() }
            func close() { inner.close() }
        }
    }

    static func record(_ seed: UInt64, length: Int = 40) -> LogRecord {
        LogRecord(kind: 1, kindVersion: 1, payload: payload(seed: seed, length: length))
    }

    /// Durable appends from many tasks, deferred ones past the write-behind mark, a
    /// sync and the close's seal: after the writer is open, every write, sync,
    /// reservation and truncation of the log runs on one thread outside any Swift
    /// task — the writer's own flusher —, never on the task that appended.
    @Test func everyWriteAndSyncRunsOnTheFlusherThread() async throws {
        let fs = ThreadNotingFileSystem(SimulatedFileSystem())
        let writer = try LogWriter.create(fs, options: testOptions)
        let created = fs.places.withLock { $0 }
        #expect(created.count == 2, "create writes the header and syncs it, on the caller's thread")
        #expect(created.allSatisfy { $0.inTask })
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<8 {
                group.addTask {
                    for i in 0..<20 { try await writer.append([Self.record(UInt64(t * 100 + i))]) }
                }
            }
            try await group.waitForAll()
        }
        // 5 MiB of deferred appends: past the write-behind mark, so the flusher writes them unasked.
        for i in 0..<80 {
            try await writer.append([Self.record(UInt64(10_000 + i), length: 64 << 10)], durability: .deferred)
        }
        try await writer.sync()
        try await writer.close()
        let places = fs.places.withLock { Array($0.dropFirst(created.count)) }
        #expect(places.count > 20)
        #expect(places.allSatisfy { !$0.inTask })
        #expect(Set(places.map(\.thread)).count == 1)
        #expect(!Set(places.map(\.thread)).contains(created[0].thread))
        #expect(try allRecords(fs.inner).count == 240)
        #expect(try LogVerifier.verify(fs.inner).isIntact)
    }

    /// A deferred append's bytes stay queued (coalescing) until someone needs them:
    /// `waitUntilWritten` writes them without a sync, `unwrittenEnd` says how far
    /// the queue reaches, and `writtenLength` is what a reader of the file finds.
    @Test func deferredBytesAreWrittenWhenAReaderNeedsThemWithoutASync() async throws {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, options: testOptions)
        try await writer.append([Self.record(1)])
        let durable = writer.durableLength
        let syncs = fs.syncCount
        #expect(writer.unwrittenEnd == nil)
        let ticket = try writer.enqueue(RecordBatch([Self.record(2), Self.record(3)]))
        try await writer.wait(for: ticket, durability: .deferred)
        #expect(writer.unwrittenEnd == ticket.end)
        #expect(writer.writtenLength == durable)
        #expect(UInt64(fs.currentBytes(LogWriter.logFileName).count) >= durable)
        #expect(try LogReader(fs).forEachRecord { _ in true }.nextSequence == 2)

        try await writer.waitUntilWritten(ticket.end)
        #expect(writer.unwrittenEnd == nil)
        #expect(writer.writtenLength == ticket.end)
        #expect(writer.durableLength == durable)
        #expect(fs.syncCount == syncs)
        let end = try LogReader(fs).forEachRecord { _ in true }
        #expect(end.nextSequence == 4)
        #expect(end.endOffset == ticket.end)
        try await writer.close()
    }

    /// The race behind the revert of a81fdf2, at the log's level: eight appenders
    /// (durable single records, deferred batches, large deferred batches past the
    /// write-behind mark, syncs) on a real file, with two threads burning CPU, and
    /// a follower thread that, every time it looks, takes the writer's published
    /// written and durable lengths and reads the file up to them with a reader of
    /// its own. Every byte it is told of must already be in the file: each scan
    /// reaches the published written length, finds no damage, and the records it
    /// finds are dense and exactly the appended ones.
    @Test func aFollowerIsOnlyEverToldOfBytesAlreadyInTheFile() async throws {
        let dir = TemporaryDirectory()
        let writer = try LogWriter.create(dir.fs, options: LogWriterOptions(allocationChunk: 64 << 10))
        let load = CPULoad(threads: 2)
        defer { load.stop() }
        let follower = FollowerThread(fs: dir.fs, writer: writer)

        let appenders = 8, rounds = 60
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<appenders {
                group.addTask {
                    for i in 0..<rounds {
                        let seed = UInt64(t * 1_000 + i)
                        switch t % 4 {
                        case 0, 1:
                            try await writer.append([Self.record(seed, length: 20 + i)])
                        case 2:
                            let records = (0..<(1 + i % 9)).map { Self.record(seed * 16 + UInt64($0), length: 50) }
                            try await writer.append(records, durability: .deferred)
                            if i % 10 == 9 { try await writer.sync() }
                        default:
                            try await writer.append([Self.record(seed, length: 96 << 10)], durability: .deferred)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        try await writer.sync()
        let last = writer.writtenLength
        // Let the follower see the final length once more, then stop it.
        follower.waitUntilSeen(last)
        let report = follower.stop()
        try await writer.close()

        #expect(report.problems.isEmpty, "\(report.problems.prefix(5))")
        #expect(report.looks > 10)
        #expect(report.largestEnd == last)
        let recordsPerAppender = [rounds, rounds, (0..<rounds).reduce(0) { $0 + 1 + $1 % 9 }, rounds]
        let expected = (0..<appenders).reduce(0) { $0 + recordsPerAppender[$1 % 4] }
        #expect(report.records == expected)
        #expect(try LogVerifier.verify(dir.fs).isIntact)
    }
}

/// Follows a writer from a thread of its own: reads the published lengths, then
/// the file up to them, over and over.
final class FollowerThread: Sendable {
    struct Report: Sendable {
        var looks = 0
        var records = 0
        var largestEnd: UInt64 = 0
        var problems: [String] = []
    }
    private let state = Locked(Report())
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    init(fs: any LogFileSystem, writer: LogWriter) {
        let thread = Thread { [self] in
            defer { done.signal() }
            do {
                let reader = try LogReader(fs)
                var position = reader.start
                var nextSequence: UInt64 = 1
                while !stopping.load(ordering: .sequentiallyConsistent) {
                    // What the writer publishes: the bytes a reader may be told of.
                    let durable = writer.durableLength
                    let written = writer.writtenLength
                    var problem: String?
                    if durable > written { problem = "durable \(durable) above written \(written)" }
                    var seen = 0
                    let end: LogReader.ScanEnd
                    do {
                        end = try reader.forEachBatch(position: position) { batch in
                            batch.forEachRecord { record in
                                if record.sequence != nextSequence, problem == nil {
                                    problem = "record \(record.sequence) where \(nextSequence) was next"
                                }
                                nextSequence = record.sequence + 1
                                seen += 1
                            }
                            position = batch.endPosition
                            return true
                        }
                        if end.endOffset < written, problem == nil {
                            problem = "told of \(written) bytes, the file holds valid batches to \(end.endOffset)"
                                + (end.incompleteTail.map { " then \($0)" } ?? "")
                        }
                    } catch {
                        problem = problem ?? "reading up to \(written): \(error)"
                    }
                    state.withLock { r in
                        r.looks += 1
                        r.records += seen
                        r.largestEnd = max(r.largestEnd, written)
                        if let problem { r.problems.append(problem) }
                    }
                }
            } catch {
                state.withLock { $0.problems.append("opening: \(error)") }
            }
        }
        thread.start()
    }

    /// Blocks until the follower was told of `end` bytes (at most 10 minutes: a
    /// limit against a hang only, never reached unless something is broken).
    func waitUntilSeen(_ end: UInt64) {
        let deadline = Date().addingTimeInterval(600)
        while state.withLock({ $0.largestEnd < end && $0.problems.isEmpty }) && Date() < deadline { usleep(1000) }
        // One more full look after it saw the end, so its last scan covered it.
        let looks = state.withLock { $0.looks }
        while state.withLock({ $0.looks < looks + 2 && $0.problems.isEmpty }) && Date() < deadline { usleep(1000) }
    }

    /// Stops the thread, waits for it to end and returns what it found.
    func stop() -> Report {
        stopping.store(true, ordering: .sequentiallyConsistent)
        done.wait()
        return state.withLock { $0 }
    }
}

/// A number per OS thread, never reused within the process: drawn from a counter the
/// first time a thread asks, kept in thread-local storage.
enum ThreadSerial {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create")
        return key
    }()
    private static let next = Locked<UInt>(0)

    /// The calling thread's number (1, 2, … in the order threads first ask).
    static var current: UInt {
        if let stored = pthread_getspecific(key) { return UInt(bitPattern: stored) }
        let serial = next.withLock { n -> UInt in
            n += 1
            return n
        }
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: serial))
        return serial
    }
}
