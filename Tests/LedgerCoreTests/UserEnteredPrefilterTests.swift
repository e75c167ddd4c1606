import Foundation
import HealthModel
@testable import LedgerCore
import LedgerLog
import Testing
import TestSupport

/// `metadata.HKWasUserEntered = true` on a quantity type is answered from the
/// statistics flags first (a metadata predicate without decoding every
/// sample): the answer is exactly the brute-force filter's, for every way the key can
/// be written — a boolean either way, missing, a number, duplicated with the first
/// value deciding (as `Metadata`'s subscript reads it) — in the live state, in a
/// replay without a snapshot and from a snapshot; and the flags agree across the three.
struct UserEnteredPrefilterTests {
    static let key = Metadata.WellKnownKey.wasUserEntered

    @Test func userEnteredFilterMatchesTheBruteForceAnswerLiveReplayedAndFromASnapshot() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        let steps = ObjectType.quantity(.stepCount)
        try await ledger.grant(appA, share: [steps])
        let forms: [Metadata] = [
            Metadata([MetadataEntry(key: Self.key, value: .bool(true))]),
            Metadata([MetadataEntry(key: Self.key, value: .bool(false))]),
            Metadata(),
            Metadata([MetadataEntry(key: "note", value: .string("b"))]),
            Metadata([MetadataEntry(key: Self.key, value: .integer(1))]),
            Metadata([MetadataEntry(key: Self.key, value: .bool(false)), MetadataEntry(key: Self.key, value: .bool(true))]),
            Metadata([MetadataEntry(key: Self.key, value: .bool(true)), MetadataEntry(key: Self.key, value: .bool(false)),
                      MetadataEntry(key: "note", value: .string("b"))]),
        ]
        var saved: [Sample] = []
        for r in 0..<6 {
            var batch: [Sample] = []
            for i in 0..<35 {
                let n = r * 35 + i
                let t = date("2026-03-01T00:00:00Z").addingTimeInterval(Double((n * 7919) % 500) * 60)
                batch.append(.quantity(try QuantitySample(type: .stepCount, quantity: try Quantity(Double(n), unit: "count"),
                                                          start: t, end: t, uuid: fixedUUID(n + 1), metadata: forms[n % forms.count])))
            }
            saved += batch
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: batch))
        }
        let userEntered = SamplePredicate.metadata(Self.key, .equal, .bool(true))
        let predicates: [SamplePredicate] = [
            userEntered,
            .and([.metadata("note", .equal, .string("b")), userEntered]),
            .or([userEntered, .metadata("note", .equal, .string("b"))]),  // not ruled by the flags
            .not(userEntered),
        ]
        func answers(_ state: inout LedgerState) throws -> [[UUID]] {
            try predicates.map { p in
                let q = SampleQuery(type: steps, sort: [SampleSortDescriptor(.startDate, ascending: true)], filter: p)
                return try SampleReader(fs, chunkSize: 4, tableBudget: 64).page(q, visibility: .everything, in: &state).samples.map(\.uuid)
            }
        }
        // brute force: every saved sample through the predicate, in (start, save order)
        let ordered = saved.indices.sorted { a, b in
            saved[a].startDate != saved[b].startDate ? saved[a].startDate < saved[b].startDate : a < b
        }.map { saved[$0] }
        let expected = predicates.map { p in ordered.filter { p.matches($0) }.map(\.uuid) }
        #expect(expected[0].count == 60)  // forms 0 and 6 (an integer 1 says yes to the flag, but is not `true`)
        let saysTrueFirst = ordered.filter { (sample: Sample) -> Bool in
            if case .bool(true)? = sample.common.metadata[Self.key] { return true }
            return false
        }
        #expect(expected[0] == saysTrueFirst.map(\.uuid))
        var live = await ledger.state
        #expect(try answers(&live) == expected)
        try await ledger.snapshot()
        try await ledger.close()
        let reader = try LogReader(fs)
        var replayed = try StateLoader.load(fs, reader: reader, useSnapshots: false).state
        var loaded = try StateLoader.load(fs, reader: reader)
        #expect(loaded.snapshot != nil)
        #expect(try answers(&replayed) == expected)
        #expect(try answers(&loaded.state) == expected)
        // the flags: the first value under the key says yes — the same live, replayed and loaded
        let flags = { (s: LedgerState) in (0..<s.samples.slots.count).map { s.statistics.userEntered[$0] != 0 } }
        let firstSaysYes = saved.map { $0.common.metadata[Self.key].map(SampleCodec.saysYes) ?? false }
        #expect(flags(live) == firstSaysYes)
        #expect(flags(replayed) == firstSaysYes)
        #expect(flags(loaded.state) == firstSaysYes)
    }
}
