import Foundation
import Testing
@testable import LedgerLog

/// An unclean stop leaves a torn last batch; opening for writing cuts back to the
/// last complete batch, reports the cut and quarantines the bytes.
struct TornTailTests {
    @Test func truncationAtEveryOffsetOfTheLastThreeBatchesRecoversTheCompleteBatches() async throws {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, ledgerId: fixedLedgerId, options: SteppingClock().options)
        var batchEnds: [Int] = [LogFormat.fileHeaderLength]
        var batchLastSequence: [UInt64] = [0]
        var rng = SeededRandom(seed: 3)
        for b in 0..<12 {
            let records = (0..<Int.random(in: 1...6, using: &rng)).map { i in
                LogRecord(kind: 1, kindVersion: 1, payload: payload(seed: UInt64(b * 10 + i), length: Int.random(in: 0...90, using: &rng)))
            }
            let range = try await writer.append(records)
            batchEnds.append(Int(writer.durableLength))
            batchLastSequence.append(range.upperBound)
        }
        writer.abandon()  // an unclean stop: no seal
        let file = fs.currentBytes(LogWriter.logFileName)
        // space reserved ahead of the log reads as zeros
        #expect(file.count > batchEnds.last! && file[batchEnds.last!...].allSatisfy { $0 == 0 })
        let log = Array(file[0..<batchEnds.last!])
        let firstCut = batchEnds[batchEnds.count - 4]
        for length in firstCut..<log.count {
            let trial = SimulatedFileSystem()
            trial.setBytes(LogWriter.logFileName, Array(log[0..<length]))
            let complete = batchEnds.lastIndex { $0 <= length }!
            let reopened = try LogWriter.open(trial, options: testOptions)
            #expect(reopened.nextSequence == batchLastSequence[complete] + 1, "truncated at \(length)")
            if length == batchEnds[complete] {
                #expect(reopened.recovery?.cut == nil)
            } else {
                let cut = try #require(reopened.recovery?.cut, "truncated at \(length)")
                #expect(cut.offset == UInt64(batchEnds[complete]))
                #expect(cut.length == UInt64(length - batchEnds[complete]))
                #expect(trial.currentBytes(cut.quarantineFile) == Array(log[batchEnds[complete]..<length]))
            }
            #expect(trial.currentBytes(LogWriter.logFileName) == Array(log[0..<batchEnds[complete]]))
            let records = try allRecords(trial)
            #expect(records.count == Int(batchLastSequence[complete]))
            // and the recovered log takes new appends and verifies
            try await reopened.append([LogRecord(kind: 9, kindVersion: 1, payload: [9])])
            try await reopened.close()
            #expect(try LogVerifier.verify(trial).isIntact, "truncated at \(length)")
        }
    }

    @Test func aConcurrentReaderSeesAConsistentPrefix() async throws {
        let dir = TemporaryDirectory()
        let writer = try LogWriter.create(dir.fs)
        let fs = dir.fs
        let total = 3000
        let reading = Task.detached { () -> (scans: Int, problems: [String]) in
            var scans = 0
            var problems: [String] = []
            while scans < 100_000 {
                var expected: UInt64 = 1
                do {
                    let end = try LogReader(fs).forEachRecord { r in
                        if r.sequence != expected || !payloadMatches(r, payload(seed: r.sequence, length: Int(r.sequence % 300))) {
                            problems.append("record \(r.sequence) at scan \(scans)")
                            return false
                        }
                        expected += 1
                        return true
                    }
                    if end.nextSequence != expected { problems.append("end \(end.nextSequence) vs \(expected)") }
                    scans += 1
                    if expected > UInt64(total) { break }
                } catch {
                    problems.append("scan \(scans): \(error)")
                    break
                }
            }
            return (scans, problems)
        }
        var sequence: UInt64 = 1
        while sequence <= UInt64(total) {
            if sequence % 100 == 1 { try await Task.sleep(nanoseconds: 1_000_000) }  // let scans interleave
            let count = min(Int(sequence % 17) + 1, total - Int(sequence) + 1)
            let records = (0..<count).map { i in
                let s = sequence + UInt64(i)
                return LogRecord(kind: 1, kindVersion: 1, payload: payload(seed: s, length: Int(s % 300)))
            }
            let range = try await writer.append(records)
            sequence = range.upperBound + 1
        }
        try await writer.close()
        let result = await reading.value
        #expect(result.problems.isEmpty, "\(result.problems.prefix(5))")
        #expect(result.scans > 1, "the reader should have seen the log grow")
    }
}
