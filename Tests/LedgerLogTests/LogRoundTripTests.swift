import Foundation
import Testing
@testable import LedgerLog
import TestSupport

struct LogRoundTripTests {
    /// 100,000 records of random sizes from 0 bytes to 64 KiB, exact sequence numbers,
    /// across close and reopen. Sizes are log-uniform over [0, 65536] (both ends
    /// forced in), so every size class is exercised without writing gigabytes.
    @Test(.tags(.sweep), .disabled(if: Sweeps.leftOut, Sweeps.reason)) func hundredThousandRecordsOfRandomSizesRoundTripAcrossReopen() async throws {
        let dir = TemporaryDirectory()
        var rng = SeededRandom(seed: 2026)
        let total = 100_000
        var sizes = (0..<total).map { _ in Int(exp(Double.random(in: 0...log(65_537.0), using: &rng))) - 1 }
        sizes[17] = 0
        sizes[4242] = 65_536
        let writer = try LogWriter.create(dir.fs)
        var next = 0
        while next < total {
            let count = min(Int.random(in: 1...200, using: &rng), total - next)
            var batch = RecordBatch()
            for i in next..<next + count {
                batch.append(kind: UInt16(1 + i % 7), version: 1, payload: payload(seed: UInt64(i), length: sizes[i]))
            }
            let range = try await writer.append(batch, durability: .deferred)
            #expect(range == UInt64(next + 1)...UInt64(next + count))
            next += count
        }
        try await writer.close()

        var seen = 0
        let end = try LogReader(dir.fs).forEachRecord { record in
            let i = Int(record.sequence) - 1
            guard i == seen, record.kind == UInt16(1 + i % 7), record.kindVersion == 1,
                  payloadMatches(record, payload(seed: UInt64(i), length: sizes[i])) else {
                Issue.record("record \(record.sequence) differs")
                return false
            }
            seen += 1
            return true
        }
        #expect(seen == total)
        #expect(end.nextSequence == UInt64(total + 1))
        #expect(end.incompleteTail == nil)

        let reopened = try LogWriter.open(dir.fs)
        #expect(reopened.recovery?.cut == nil)
        #expect(reopened.nextSequence == UInt64(total + 1))
        let more = try await reopened.append([LogRecord(kind: 1, kindVersion: 1, payload: [1, 2, 3])])
        #expect(more == UInt64(total + 1)...UInt64(total + 1))
        try await reopened.close()
        let report = try LogVerifier.verify(dir.fs)
        #expect(report.isIntact)
        #expect(report.records == UInt64(total + 1))
        #expect(report.seals == 2)
    }

    @Test func randomAccessBySequenceAndOffset() async throws {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, options: testOptions)
        var rng = SeededRandom(seed: 5)
        var sequence: UInt64 = 1
        for _ in 0..<300 {
            let count = Int.random(in: 1...20, using: &rng)
            let records = (0..<count).map { i in
                LogRecord(kind: 2, kindVersion: 3, payload: payload(seed: sequence + UInt64(i), length: Int.random(in: 0...3000, using: &rng)))
            }
            let range = try await writer.append(records, durability: .deferred)
            #expect(range.lowerBound == sequence)
            sequence = range.upperBound + 1
        }
        try await writer.close()
        let reader = try LogReader(fs)
        for probe: UInt64 in [1, 2, 57, 1000, sequence - 1] {
            let record = try reader.record(sequence: probe)
            #expect(record.sequence == probe)
            #expect(record.kind == 2 && record.kindVersion == 3)
            #expect(record.payload == payload(seed: probe, length: record.payload.count))
            #expect(try reader.record(atOffset: record.offset) == record)
        }
        #expect(throws: LogError.sequenceNotFound(sequence)) { try reader.record(sequence: sequence) }
        let slice = try reader.records(100...120)
        #expect(slice.map(\.sequence) == Array(100...120))
    }

    // W2/R4: recordedAt is the writer's clock, raised to the previous record's when it went back.
    @Test func recordTimesNeverDecreaseEvenWhenTheClockGoesBack() async throws {
        let fs = SimulatedFileSystem()
        let times: [Int64] = [5_000, 3_000, 9_000, 1_000]
        let box = Mutex4Test(0)
        let writer = try LogWriter.create(fs, options: LogWriterOptions(clock: {
            box.with { i in i += 1; return times[min(i - 1, times.count - 1)] }
        }))
        for _ in 0..<3 { try await writer.append([LogRecord(kind: 1, kindVersion: 1, payload: [])]) }
        let stamps = try allRecords(fs).map(\.recordedAt)
        #expect(stamps == [5_000, 9_000, 9_000])  // never before the header's 5,000, never backwards
        _ = writer
    }

    @Test func invalidAppendsAreRefusedBeforeAnythingIsWritten() async throws {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, options: testOptions)
        await #expect(throws: LogError.emptyBatch) { try await writer.append([LogRecord]()) }
        await #expect(throws: LogError.invalidKind(kind: 0, version: 1)) {
            try await writer.append([LogRecord(kind: 0, kindVersion: 1, payload: [])])
        }
        await #expect(throws: LogError.tooLarge(bytes: LogFormat.payloadLengthMax + 1, limit: LogFormat.payloadLengthMax)) {
            try await writer.append([LogRecord(kind: 1, kindVersion: 1, payload: [UInt8](repeating: 0, count: LogFormat.payloadLengthMax + 1))])
        }
        #expect(writer.nextSequence == 1)
        #expect(fs.currentBytes(LogWriter.logFileName).count == LogFormat.fileHeaderLength)
    }

    /// Concurrent durable appends share syncs. The appenders run on their own
    /// executor (8 OS threads, like a server's event loops), so the test does not
    /// depend on how busy the shared pool is with other tests; the 10 ms sync is
    /// long enough for the other threads to queue up behind it even when the
    /// machine is loaded.
    // W3: appends from many callers share one fdatasync (group commit).
    @Test func groupCommitSharesSyncs() async throws {
        let fs = SimulatedFileSystem()
        fs.syncDelay = 10_000  // a slow disk's sync latency, during which appends queue up
        let writer = try LogWriter.create(fs, options: testOptions)
        let before = fs.syncCount
        let executor = ThreadPoolTaskExecutor()
        defer { executor.shutdown() }
        try await withTaskExecutorPreference(executor) {
            try await withThrowingTaskGroup(of: ClosedRange<UInt64>.self) { group in
                for i in 0..<200 {
                    group.addTask {
                        try await writer.append([LogRecord(kind: 1, kindVersion: 1, payload: payload(seed: UInt64(i), length: 40))])
                    }
                }
                var ranges: [ClosedRange<UInt64>] = []
                for try await r in group { ranges.append(r) }
                #expect(Set(ranges.map(\.lowerBound)) == Set(1...200))
            }
        }
        let syncs = fs.syncCount - before
        #expect(syncs >= 1)
        #expect(syncs <= 40, "200 concurrent durable appends took \(syncs) syncs")
        #expect(try allRecords(fs).count == 200)
    }

    @Test func filesAreCreatedPrivate() throws {
        let dir = TemporaryDirectory()
        let writer = try LogWriter.create(dir.fs)
        let folder = try FileManager.default.attributesOfItem(atPath: dir.path)
        let log = try FileManager.default.attributesOfItem(atPath: dir.path + "/" + LogWriter.logFileName)
        #expect((folder[.posixPermissions] as? Int) == 0o700)
        #expect((log[.posixPermissions] as? Int) == 0o600)
        _ = writer
    }

    @Test func createRefusesAnExistingLedgerAndOpenAMissingOne() throws {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, options: testOptions)
        #expect(throws: LogError.ledgerLocked(path: fs.path)) { try LogWriter.create(fs, options: testOptions) }
        writer.closeForTesting()
        #expect(throws: LogError.ledgerExists(path: fs.path)) { try LogWriter.create(fs, options: testOptions) }
        #expect(throws: LogError.ledgerNotFound(path: "/sim/other")) { try LogWriter.open(SimulatedFileSystem(path: "/sim/other")) }
    }
}

extension LogWriter {
    /// Releases the lock without sealing (as a crashed process would).
    func closeForTesting() {
        abandon()
    }
}
