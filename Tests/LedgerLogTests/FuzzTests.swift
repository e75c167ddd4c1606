import Foundation
import Testing
@testable import LedgerLog

/// Random bytes and mutated valid logs never crash the reader, the verifier or
/// recovery: they give typed errors or reports.
struct FuzzTests {
    @Test func malformedLogsGiveTypedErrorsNeverCrashes() async throws {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, options: testOptions)
        var rng = SeededRandom(seed: 12)
        for b in 0..<30 {
            try await writer.append((0..<Int.random(in: 1...5, using: &rng)).map { i in
                LogRecord(kind: UInt16(b % 3 + 1), kindVersion: 1, payload: payload(seed: UInt64(b * 7 + i), length: Int.random(in: 0...300, using: &rng)))
            })
        }
        try await writer.close()
        let valid = fs.currentBytes(LogWriter.logFileName)

        var outcomes: [String: Int] = [:]
        for iteration in 0..<3000 {
            var bytes = valid
            switch iteration % 6 {
            case 0:  // random bytes, sometimes behind a valid header
                let n = Int.random(in: 0...4000, using: &rng)
                let noise = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
                bytes = iteration % 12 == 0 ? noise : Array(valid[0..<64]) + noise
            case 1:  // flip several bytes
                for _ in 0..<Int.random(in: 1...8, using: &rng) { bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng) }
            case 2:  // truncate
                bytes = Array(bytes[0..<Int.random(in: 0..<bytes.count, using: &rng)])
            case 3:  // insert garbage
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                bytes.insert(contentsOf: (0..<Int.random(in: 1...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }, at: at)
            case 4:  // remove a range
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...200, using: &rng)))
            default:  // duplicate a range (replayed or reordered batches)
                let at = Int.random(in: 64..<bytes.count, using: &rng)
                let len = min(bytes.count - at, Int.random(in: 1...600, using: &rng))
                bytes.insert(contentsOf: bytes[at..<at + len], at: Int.random(in: 64..<bytes.count, using: &rng))
            }
            let trial = SimulatedFileSystem()
            trial.setBytes(LogWriter.logFileName, bytes)
            do {
                _ = try LogVerifier.verify(trial)
                _ = try? LogReader(trial).forEachRecord { _ in true }
                let w = try LogWriter.open(trial, options: testOptions)
                try await w.close()
                outcomes["opened", default: 0] += 1
            } catch let error as LogError {
                switch error {
                case .damaged: outcomes["damaged", default: 0] += 1
                case .notALedgerLog: outcomes["notALedgerLog", default: 0] += 1
                case .unsupportedFormatVersion: outcomes["unsupported", default: 0] += 1
                default: outcomes["other LogError", default: 0] += 1
                }
            }
        }
        #expect(outcomes.values.reduce(0, +) == 3000)
        #expect(outcomes["damaged", default: 0] > 0 && outcomes["opened", default: 0] > 0)
        #expect(outcomes["other LogError", default: 0] == 0, "\(outcomes)")
    }
}
