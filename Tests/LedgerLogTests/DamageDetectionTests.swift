import Foundation
import Testing
@testable import LedgerLog

/// A 1,000-record log is changed one byte at a time, at every byte position, and
/// every change is found, at the damaged unit.
struct DamageDetectionTests {
    /// A sealed log of 1,000 records (small payloads, 40 batches), in memory.
    static func makeLog() async throws -> [UInt8] {
        let fs = SimulatedFileSystem()
        let clock = SteppingClock()
        let writer = try LogWriter.create(fs, ledgerId: fixedLedgerId, options: clock.options)
        var rng = SeededRandom(seed: 99)
        for b in 0..<40 {
            let records = (0..<25).map { i in
                LogRecord(kind: 1, kindVersion: 1, payload: payload(seed: UInt64(b * 25 + i), length: Int.random(in: 0...12, using: &rng)))
            }
            try await writer.append(records)
        }
        try await writer.close()
        return fs.currentBytes(LogWriter.logFileName)
    }

    @Test(.tags(.sweep), .disabled(if: Sweeps.leftOut, Sweeps.reason))
    func everySingleByteChangeIsDetectedAtTheDamagedUnit() async throws {
        let original = try await Self.makeLog()
        let clean = SimulatedFileSystem()
        clean.setBytes(LogWriter.logFileName, original)
        let baseline = try LogVerifier.verify(clean)
        #expect(baseline.isIntact && baseline.records == 1000 && baseline.seals == 1)
        let sealOffset = original.count - LogFormat.batchLengthMin
        var rng = SeededRandom(seed: 1)
        var undetected: [Int] = []
        var misplaced: [Int] = []
        for position in 0..<original.count {
            var damaged = original
            damaged[position] ^= UInt8.random(in: 1...255, using: &rng)
            let fs = SimulatedFileSystem()
            fs.setBytes(LogWriter.logFileName, damaged)
            let report = try LogVerifier.verify(fs)
            guard let damage = report.damage else {
                undetected.append(position)
                continue
            }
            let start = Int(damage.offset)
            let end = damage.length.map { start + Int($0) } ?? start + 1
            if !(start..<end).contains(position) { misplaced.append(position) }
            // Damage before the seal is proven durable by the seal.
            if position < sealOffset, position >= LogFormat.fileHeaderLength, !damage.inDurablePrefix { misplaced.append(position) }
        }
        #expect(undetected.isEmpty, "undetected changes at \(undetected.prefix(20))")
        #expect(misplaced.isEmpty, "reported at the wrong place for \(misplaced.prefix(20))")
    }

    @Test func openingForWritingRefusesDamageBeforeTheTail() async throws {
        let original = try await Self.makeLog()
        // a byte in the middle of a record payload, inside batch 10
        var damaged = original
        let position = original.count / 4
        damaged[position] ^= 0x40
        let fs = SimulatedFileSystem()
        fs.setBytes(LogWriter.logFileName, damaged)
        let verified = try #require(try LogVerifier.verify(fs).damage)
        #expect(verified.inDurablePrefix)
        #expect(throws: LogError.damaged(verified)) { try LogWriter.open(fs, options: testOptions) }
        // Nothing was changed by the refusal.
        #expect(fs.currentBytes(LogWriter.logFileName) == damaged)
        // A reader refuses too, naming the same place.
        #expect(throws: LogError.damaged(verified)) { try LogReader(fs).forEachRecord { _ in true } }
    }

    @Test func flippingTheSealItselfIsATornTail() async throws {
        let original = try await Self.makeLog()
        var damaged = original
        damaged[original.count - 5] ^= 1
        let fs = SimulatedFileSystem()
        fs.setBytes(LogWriter.logFileName, damaged)
        let writer = try LogWriter.open(fs, options: testOptions)
        let cut = try #require(writer.recovery?.cut)
        #expect(cut.offset == UInt64(original.count - LogFormat.batchLengthMin))
        #expect(cut.length == UInt64(LogFormat.batchLengthMin))
        #expect(cut.damage.kind == .chainMismatch)
        #expect(writer.nextSequence == 1001)
        // the cut bytes are kept, not destroyed
        #expect(fs.currentBytes(cut.quarantineFile) == Array(damaged[(original.count - LogFormat.batchLengthMin)...]))
    }
}
