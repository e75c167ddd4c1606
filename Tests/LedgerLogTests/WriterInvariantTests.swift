import Foundation
import Testing
@testable import LedgerLog
import LedgerChecksums
#if canImport(Glibc)
import Glibc
#endif

/// Invariants as code, the writer's: a writer breaks none through its
/// life (appends durable and deferred, a reopen, a failure, a close), and each
/// invariant broken on purpose in otherwise sound facts is named — exactly that one.
struct WriterInvariantTests {
    static func record(_ seed: UInt64, length: Int = 40) -> LogRecord {
        LogRecord(kind: 1, kindVersion: 1, payload: payload(seed: seed, length: length))
    }

    @Test func aWriterBreaksNoInvariantThroughItsLife() async throws {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, ledgerId: fixedLedgerId, options: testOptions)
        #expect(writer.checkInvariants() == [])
        for i in 0..<20 {
            try await writer.append([Self.record(UInt64(i))], durability: i % 2 == 0 ? .durable : .deferred)
            #expect(writer.checkInvariants() == [])
        }
        // Concurrent appends sharing syncs: checked while they run, and after.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<16 {
                group.addTask { try await writer.append([Self.record(UInt64(100 + i), length: 5_000)]) }
                group.addTask { #expect(writer.checkInvariants() == []) }
            }
            try await group.waitForAll()
        }
        #expect(writer.checkInvariants() == [])
        try await writer.sync()
        #expect(writer.checkInvariants() == [])
        try await writer.close()
        #expect(writer.checkInvariants() == [])

        let reopened = try LogWriter.open(fs, options: testOptions)
        #expect(reopened.checkInvariants() == [])
        try await reopened.append([Self.record(200)])
        #expect(reopened.checkInvariants() == [])
        // A failed sync poisons the writer: quiet, and still within its invariants.
        fs.fault = .failSync(number: fs.syncCount + 1, errno: EIO)
        await #expect(throws: LogError.self) { try await reopened.append([Self.record(201)]) }
        #expect(reopened.checkInvariants() == [])
        try await reopened.close()
        #expect(reopened.checkInvariants() == [])
    }

    /// Sound facts: 3 records in 200 bytes, all durable, the file reserved to 4 MiB.
    static func sound() -> LogWriter.StateFacts {
        LogWriter.StateFacts(nextSequence: 4, lastRecordedAt: 1_000, encodedLength: 264, writtenLength: 264, durableLength: 264,
                             physicalLength: 4 << 20, pendingBytes: 0, pendingBufferBytes: 0, waiters: [], flushing: false,
                             poisoned: false, closed: false,
                             checkpoint: LogCheckpoint(coveredLength: 64, nextSequence: 1, lastRecordedAt: 500,
                                                       link: SHA256.hash([]), entries: [.init(firstSequence: 1, offset: 64)]))
    }

    static func broken(_ change: (inout LogWriter.StateFacts) -> Void) -> [String] {
        var facts = sound()
        change(&facts)
        return facts.violations().map(\.invariant)
    }

    @Test func soundFactsBreakNoInvariant() {
        #expect(Self.sound().violations() == [])
        // Mid-flush: bytes taken from the queue, not yet written; a waiter for them.
        #expect(Self.broken {
            $0.encodedLength = 400
            $0.flushing = true
            $0.waiters = [.init(end: 400, durable: true)]
        } == [])
        // Deferred bytes pending, a flush not yet started.
        #expect(Self.broken {
            $0.encodedLength = 400
            $0.pendingBytes = 136
            $0.pendingBufferBytes = 136
        } == [])
        // Poisoned and then closed: both at once is how a poisoned writer is closed.
        #expect(Self.broken {
            $0.poisoned = true
            $0.closed = true
            $0.encodedLength = 400
        } == [])
    }

    @Test func eachInvariantBrokenIsNamed() {
        #expect(Self.broken { $0.durableLength = 300 } == ["LogWriter.lengthsOrdered"])
        #expect(Self.broken { $0.encodedLength = 250; $0.flushing = true } == ["LogWriter.lengthsOrdered"])  // written past encoded
        #expect(Self.broken { $0.durableLength = 0 } == ["LogWriter.lengthsOrdered"])  // inside the file header
        #expect(Self.broken { $0.physicalLength = 200 } == ["LogWriter.fileCoversWritten"])
        #expect(Self.broken { $0.pendingBufferBytes = 8; $0.pendingBytes = 0; $0.flushing = true } == ["LogWriter.pendingBytesCounted"])
        #expect(Self.broken { $0.encodedLength = 400 } == ["LogWriter.encodedIsWrittenOrPending"])
        #expect(Self.broken { $0.poisoned = true; $0.waiters = [.init(end: 300, durable: true)]; $0.encodedLength = 300 }
                == ["LogWriter.poisonedIsQuiet"])
        #expect(Self.broken { $0.poisoned = true; $0.flushing = true } == [])  // the flusher on its way back to sleep
        #expect(Self.broken { $0.waiters = [.init(end: 264, durable: true)] } == ["LogWriter.waitersUncovered"])  // covered
        #expect(Self.broken { $0.waiters = [.init(end: 500, durable: false)]; $0.flushing = true } == ["LogWriter.waitersUncovered"])
        #expect(Self.broken { $0.nextSequence = 0; $0.checkpoint.nextSequence = 0; $0.checkpoint.entries = [] }
                == ["LogWriter.sequencesFitTheLog"])
        #expect(Self.broken { $0.nextSequence = 8 } == ["LogWriter.sequencesFitTheLog"])  // 7 records in 200 bytes
        #expect(Self.broken { $0.checkpoint.nextSequence = 5 } == ["LogWriter.checkpointBehindWriter"])
        #expect(Self.broken { $0.checkpoint.coveredLength = 300 } == ["LogWriter.checkpointBehindWriter"])
        #expect(Self.broken { $0.checkpoint.lastRecordedAt = 2_000 } == ["LogWriter.checkpointBehindWriter"])
        #expect(Self.broken { $0.checkpoint.entries.append(.init(firstSequence: 1, offset: 200)) } == ["LogWriter.checkpointBehindWriter"])
        #expect(Self.broken { $0.checkpoint.entries = [.init(firstSequence: 4, offset: 64)] } == ["LogWriter.checkpointBehindWriter"])
    }
}
