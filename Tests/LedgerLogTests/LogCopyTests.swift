import Foundation
import Testing
import LedgerChecksums
@testable import LedgerLog

/// `LogCopy` between folders (the PostgreSQL store has its own tests, run by tools/pg_test.sh).
struct LogCopyTests {
    static func filled(_ dir: TemporaryDirectory, batches: Int) async throws {
        let writer = try LogWriter.create(dir.fs)
        for i in 0..<batches {
            try await writer.append([LogRecord(kind: 1, kindVersion: 1, payload: payload(seed: UInt64(i), length: 20 + i * 13))])
        }
        try await writer.close()
    }

    // P1: copy moves exactly the log's bytes, batch by batch.
    @Test func aCopyIsByteIdenticalAndVerified() async throws {
        let source = TemporaryDirectory(), copy = TemporaryDirectory()
        try await Self.filled(source, batches: 25)
        let report = try LogCopy.copy(from: source.fs, to: copy.fs)
        let a = try Data(contentsOf: source.url.appendingPathComponent("ledger.log"))
        let b = try Data(contentsOf: copy.url.appendingPathComponent("ledger.log"))
        #expect(a == b)
        #expect(report.bytes == UInt64(a.count))
        #expect(report.batches == 26)  // and the seal
        #expect(report.records == 25)
        #expect(report.chainHead == SHA256Digest(Array(a.suffix(32))))
        // The copy is a ledger a writer continues.
        let writer = try LogWriter.open(copy.fs)
        #expect(try await writer.append([LogRecord(kind: 1, kindVersion: 1, payload: [1])]) == 26...26)
        try await writer.close()
    }

    @Test func aDamagedSourceOrAnOccupiedDestinationIsRefusedAndNothingWritten() async throws {
        let source = TemporaryDirectory(), other = TemporaryDirectory(), copy = TemporaryDirectory()
        try await Self.filled(source, batches: 5)
        try await Self.filled(other, batches: 2)
        let otherBytes = try Data(contentsOf: other.url.appendingPathComponent("ledger.log"))
        #expect(throws: LogError.ledgerExists(path: other.path)) { try LogCopy.copy(from: source.fs, to: other.fs) }
        #expect(try Data(contentsOf: other.url.appendingPathComponent("ledger.log")) == otherBytes)
        let log = source.url.appendingPathComponent("ledger.log")
        var bytes = try Data(contentsOf: log)
        bytes[64 + 40 + 32 + 3] ^= 1  // a payload byte of record 1
        try bytes.write(to: log)
        do {
            _ = try LogCopy.copy(from: source.fs, to: copy.fs)
            Issue.record("a damaged log was copied")
        } catch LogError.damaged(let damage) {
            #expect(damage.kind == .recordChecksum)
            #expect(damage.offset == 104)
        }
        #expect(!FileManager.default.fileExists(atPath: copy.path))
    }
}
