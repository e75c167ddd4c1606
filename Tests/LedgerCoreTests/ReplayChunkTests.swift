import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerLog
import TestSupport

/// Replay over several chunks (reused from chunk to chunk) with saves large enough
/// that their full decode runs before a chunk is full (every megabyte of payloads):
/// replay, open and verify fold the same state, and refuse a save that only the
/// full decoder refuses at the same event with the same error, wherever it falls.
struct ReplayChunkTests {
    static let saves = 40, perSave = 2_000  // 80,000 samples: two chunks, about 5 MB of payloads

    /// The records of a ledger: an app granted step counts, then `saves` saves.
    static func records() async throws -> [Record] {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        try await ledger.grant(appA, share: [.quantity(.stepCount)])
        let start = date("2026-01-01T00:00:00Z")
        for s in 0..<saves {
            var samples: [Sample] = []
            samples.reserveCapacity(perSave)
            for i in 0..<perSave {
                let n = s * perSave + i
                let t = start.addingTimeInterval(Double(n) * 60)
                samples.append(.quantity(try QuantitySample(type: .stepCount, quantity: try Quantity(Double(i % 97), .count),
                                                            start: t, end: t, uuid: fixedUUID(1_000_000 + n))))
            }
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: samples))
        }
        try await ledger.close()
        return try LogReader(fs).records(1...UInt64.max - 1).map { Record(kind: $0.kind, version: $0.kindVersion, payload: $0.payload) }
    }

    struct Record {
        let kind: UInt16, version: UInt16
        var payload: [UInt8]
    }

    /// A ledger of `records`, one batch per record.
    static func write(_ records: [Record]) async throws -> SimulatedFileSystem {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, ledgerId: fixedLedgerId, options: testOptions)
        for r in records {
            var batch = RecordBatch()
            batch.append(kind: r.kind, version: r.version, payload: r.payload)
            try await writer.append(batch)
        }
        try await writer.close()
        return fs
    }

    @Test(.tags(.sweep), .disabled(if: Sweeps.leftOut, Sweeps.reason)) func replayOpenAndVerifyAgreeAcrossChunks() async throws {
        let records = try await Self.records()
        let saves = records.indices.filter { records[$0].kind == EventKind.samplesSaved.rawValue }
        #expect(saves.count == Self.saves)
        let intact = try await Self.write(records)
        let replayed = try StateLoader.load(intact, reader: try LogReader(intact), useSnapshots: false).state
        #expect(replayed.samples.count == Self.saves * Self.perSave)
        let report = try LedgerVerifier.verify(intact)
        #expect(report.isIntact && report.eventProblem == nil)
        #expect(report.digest == replayed.digest())

        // A unit the model refuses (the header reader passes it: its value is NaN) in
        // a save before the first megabyte, one after it, and one in the second chunk.
        for target in [saves[2], saves[20], saves[Self.saves - 3]] {
            var changed = records
            var payload = changed[target].payload
            let count = Array("count".utf8)
            let last = try #require((0...(payload.count - count.count)).last { Array(payload[$0..<$0 + count.count]) == count })
            payload.replaceSubrange(last..<last + count.count, with: Array("cnt!t".utf8))
            changed[target].payload = payload
            let expected = payload.withUnsafeBytes { raw in
                Result { () throws(EventDecodingError) -> Event in
                    try EventCodec.decode(kind: changed[target].kind, version: changed[target].version, payload: raw)
                }
            }
            guard case .failure(let error) = expected else {
                Issue.record("the changed save decodes")
                continue
            }
            let fs = try await Self.write(changed)
            let sequence = UInt64(target + 1)
            let offset = try FuzzTests.offset(fs, sequence)
            #expect(throws: ReplayError.undecodable(sequence: sequence, offset: offset, error)) {
                _ = try StateLoader.load(fs, reader: try LogReader(fs), useSnapshots: false)
            }
            let report = try LedgerVerifier.verify(fs)
            #expect(report.eventProblem == .undecodable(sequence: sequence, offset: offset, error))
            #expect(report.events == sequence - 1)
            #expect(throws: LedgerError.self) { _ = try Ledger.open(fs, options: LedgerOptions(log: testOptions)) }
        }
    }
}
