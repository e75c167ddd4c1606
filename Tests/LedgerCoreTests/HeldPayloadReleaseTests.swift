import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerReporting
import TestSupport

/// A query walking samples in chunks in the order they were saved lets each record go
/// once it has handed out all of its samples (`RecordReads.visit`): it holds a record or
/// two at a time, not the log, and prints what the decoded read prints.
struct HeldPayloadReleaseTests {
    static let records = 12, perRecord = 50

    /// A ledger of `records` saves of `perRecord` step samples each, starts rising with
    /// the log (`inOrder`) or shuffled over all saves.
    static func ledger(_ fs: SimulatedFileSystem, inOrder: Bool) async throws -> Ledger {
        let ledger = try makeLedger(fs)
        try await ledger.grant(appA, share: [QueryEngineTests.steps])
        let base = date("2026-01-01T00:00:00Z")
        var minutes = Array(0..<(records * perRecord))
        if !inOrder {
            var rng = SeededGenerator(seed: 11)
            minutes.shuffle(using: &rng)
        }
        for r in 0..<records {
            let samples: [Sample] = try (0..<perRecord).map { i in
                let start = base.addingTimeInterval(Double(minutes[r * perRecord + i]) * 60)
                return .quantity(try QuantitySample(type: .stepCount, quantity: try Quantity(Double(i), unit: "count"),
                                                    start: start, end: start.addingTimeInterval(30), uuid: UUID()))
            }
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: samples))
        }
        return ledger
    }

    /// The query's lines through the plain path, the peak of held payload bytes, and the
    /// lines the decoded read gives.
    static func read(_ ledger: Ledger, _ fs: SimulatedFileSystem, ascending: Bool) async throws -> ([String], Int, [String]) {
        let q = SampleQuery(type: QueryEngineTests.steps, sort: [SampleSortDescriptor(.startDate, ascending: ascending)])
        return try await ledger.read { state throws -> ([String], Int, [String]) in
            var got: [String] = [], expected: [String] = []
            // The walk in chunks (a walk over a whole type for a writer of lines goes in
            // windows, which hold no payload: `QueryWindowTests`).
            let reader = try SampleReader(fs, chunkSize: 16, tableBudget: 1 << 20, windowBytes: 0)
            try reader.forEach(q, visibility: .everything, in: &state, plain: { s in
                var bytes: [UInt8] = []
                SampleJSONWriter.append(s, to: &bytes)
                got.append(String(decoding: bytes, as: UTF8.self))
            }) { got.append(PlainQuantityReadTests.line($0)) }
            try SampleReader(fs, chunkSize: 16, tableBudget: 1 << 20).forEach(q, visibility: .everything, in: &state) {
                expected.append(PlainQuantityReadTests.line($0))
            }
            return (got, reader.reads.peakPayloadBytes, expected)
        }
    }

    @Test func aWalkInSavedOrderHoldsARecordOrTwo() async throws {
        // Shuffled, every record has samples left until near the end: all are held.
        let shuffledFS = SimulatedFileSystem()
        let shuffled = try await Self.ledger(shuffledFS, inOrder: false)
        let (shuffledGot, everything, shuffledExpected) = try await Self.read(shuffled, shuffledFS, ascending: true)
        #expect(shuffledGot == shuffledExpected)
        let oneRecord = everything / Self.records
        #expect(oneRecord > 1000)  // 50 samples of ~60 bytes
        let fs = SimulatedFileSystem()
        let ledger = try await Self.ledger(fs, inOrder: true)
        for ascending in [true, false] {
            let (got, peak, expected) = try await Self.read(ledger, fs, ascending: ascending)
            #expect(got.count == Self.records * Self.perRecord)
            #expect(got == expected, "ascending \(ascending)")
            // A chunk of 16 samples spans at most two records of 50: two held at once.
            #expect(peak > 0 && peak <= 2 * oneRecord + oneRecord / 10, "ascending \(ascending): peak \(peak), a record \(oneRecord)")
        }
    }
}
