import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerLog
import TestSupport

struct ProjectionTests {
    @Test func deletingTheLatestSampleRevealsThePreviousOne() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        for (i, day) in ["2026-02-01", "2026-02-03", "2026-02-02"].enumerated() {
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier,
                                           samples: [try quantitySample(.bodyMass, 70 + Double(i), "kg", at: day + "T08:00:00Z", uuid: fixedUUID(i + 1))]))
        }
        let code = ObjectType.quantity(.bodyMass).code
        func latestUUID() async throws -> UUID? {
            let state = await ledger.state
            return try state.samples.latest(typeCode: code).map { try state.samples.uuid($0) }
        }
        #expect(try await latestUUID() == fixedUUID(2))  // 02-03 is the newest start, saved second
        try await ledger.append(.delete(bundleIdentifier: nil, uuids: [fixedUUID(2)], reason: nil))
        #expect(try await latestUUID() == fixedUUID(3))  // 02-02, saved last but older
        try await ledger.append(.delete(bundleIdentifier: nil, uuids: [fixedUUID(3)], reason: nil))
        #expect(try await latestUUID() == fixedUUID(1))
        try await ledger.append(.delete(bundleIdentifier: nil, uuids: [fixedUUID(1)], reason: nil))
        #expect(try await latestUUID() == nil)
    }

    @Test func latestBreaksTiesByEndThenSequence() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.stepCount)])
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [
            try quantitySample(.stepCount, 10, "count", at: "2026-02-01T08:00:00Z", to: "2026-02-01T09:00:00Z", uuid: fixedUUID(1)),
            try quantitySample(.stepCount, 20, "count", at: "2026-02-01T08:00:00Z", to: "2026-02-01T08:30:00Z", uuid: fixedUUID(2)),
        ]))
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [
            try quantitySample(.stepCount, 30, "count", at: "2026-02-01T08:00:00Z", to: "2026-02-01T09:00:00Z", uuid: fixedUUID(3)),
        ]))
        let state = await ledger.state
        let code = ObjectType.quantity(.stepCount).code
        #expect(try state.samples.uuid(state.samples.latest(typeCode: code)!) == fixedUUID(3))
    }

    /// [S, E) = [10:00, 11:00); samples placed exactly on the boundaries.
    @Test func datePredicatesAtTheirExactBoundaries() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.heartRate)], read: [.quantity(.heartRate)])
        let samples: [(Int, String, String)] = [
            (1, "2026-02-01T09:00:00Z", "2026-02-01T10:00:00Z"),  // ends exactly at S
            (2, "2026-02-01T09:30:00Z", "2026-02-01T10:30:00Z"),  // straddles S
            (3, "2026-02-01T10:00:00Z", "2026-02-01T10:00:00Z"),  // instant at S
            (4, "2026-02-01T10:30:00Z", "2026-02-01T11:00:00Z"),  // ends exactly at E
            (5, "2026-02-01T11:00:00Z", "2026-02-01T11:00:00Z"),  // instant at E
            (6, "2026-02-01T10:59:59Z", "2026-02-01T11:30:00Z"),  // straddles E
            (7, "2026-02-01T08:00:00Z", "2026-02-01T09:59:59Z"),  // entirely before
        ]
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: try samples.map {
            try quantitySample(.heartRate, 60, "count/min", at: $0.1, to: $0.2, uuid: fixedUUID($0.0))
        }))
        func ids(_ strictStart: Bool, _ strictEnd: Bool) async throws -> [Int] {
            let q = SampleQuery(type: .quantity(.heartRate), predicate: DatePredicate(
                start: date("2026-02-01T10:00:00Z"), end: date("2026-02-01T11:00:00Z"),
                strictStartDate: strictStart, strictEndDate: strictEnd))
            return try await ledger.samples(q, visibility: .everything).map { s in
                samples.first { fixedUUID($0.0) == s.uuid }!.0
            }.sorted()
        }
        #expect(try await ids(false, false) == [1, 2, 3, 4, 6])  // overlap: end ≥ S and start < E
        #expect(try await ids(true, false) == [3, 4, 6])  // S ≤ start < E
        #expect(try await ids(false, true) == [1, 2, 3])  // S ≤ end < E
        #expect(try await ids(true, true) == [3])
    }

    @Test func sortLimitAndMostRecentExcludeTheFuture() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.bodyMass)], read: [.quantity(.bodyMass)])
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [
            try quantitySample(.bodyMass, 70, "kg", at: "2026-01-01T08:00:00Z", uuid: fixedUUID(1)),
            try quantitySample(.bodyMass, 71, "kg", at: "2026-02-01T08:00:00Z", uuid: fixedUUID(2)),
            try quantitySample(.bodyMass, 72, "kg", at: "2027-01-01T08:00:00Z", uuid: fixedUUID(3)),  // future
        ]))
        let recent = try await ledger.samples(.mostRecent(.quantity(.bodyMass), now: date("2026-03-01T00:00:00Z")),
                                              visibility: .everything)
        #expect(recent.map(\.uuid) == [fixedUUID(2)])
        let all = try await ledger.samples(SampleQuery(type: .quantity(.bodyMass), sort: [SampleSortDescriptor(.endDate, ascending: false)]),
                                           visibility: .everything)
        #expect(all.map(\.uuid) == [fixedUUID(3), fixedUUID(2), fixedUUID(1)])
        let two = try await ledger.samples(SampleQuery(type: .quantity(.bodyMass), limit: 2), visibility: .everything)
        #expect(two.map(\.uuid) == [fixedUUID(1), fixedUUID(2)])
    }

    @Test func withoutReadPermissionAnAppSeesOnlyItsOwnSamples() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        try await ledger.grant(appB, share: [.quantity(.bodyMass)], read: [.quantity(.bodyMass)])
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier,
                                       samples: [try quantitySample(.bodyMass, 70, "kg", at: "2026-02-01T08:00:00Z", uuid: fixedUUID(1))]))
        try await ledger.append(.save(bundleIdentifier: appB.bundleIdentifier,
                                       samples: [try quantitySample(.bodyMass, 71, "kg", at: "2026-02-02T08:00:00Z", uuid: fixedUUID(2))]))
        let state = await ledger.state
        let a = state.registry.ordinal(of: appA.bundleIdentifier)!, b = state.registry.ordinal(of: appB.bundleIdentifier)!
        let q = SampleQuery(type: .quantity(.bodyMass))
        #expect(try await ledger.samples(q, visibility: state.visibility(app: a, type: q.type)).map(\.uuid) == [fixedUUID(1)])
        #expect(try await ledger.samples(q, visibility: state.visibility(app: b, type: q.type)).map(\.uuid) == [fixedUUID(1), fixedUUID(2)])
        #expect(try await ledger.samples(q, visibility: state.visibility(app: nil, type: q.type)).count == 2)
        let sourced = SampleQuery(type: .quantity(.bodyMass), sources: [appB.bundleIdentifier])
        #expect(try await ledger.samples(sourced, visibility: .everything).map(\.uuid) == [fixedUUID(2)])
        // samples come back stamped with their source
        let s = try await ledger.samples(q, visibility: .everything)
        #expect(s.map { $0.common.source?.bundleIdentifier } == [appA.bundleIdentifier, appB.bundleIdentifier])
    }

    @Test func replayAsOfBeforeAndAfterARevocation() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        try await ledger.grant(appA, share: [.quantity(.bodyMass)], read: [.quantity(.bodyMass)])
        try await ledger.grant(appB, share: [.quantity(.bodyMass)])
        try await ledger.append(.save(bundleIdentifier: appB.bundleIdentifier,
                                       samples: [try quantitySample(.bodyMass, 71, "kg", at: "2026-02-02T08:00:00Z")]))
        let beforeRevocation = await ledger.state.lastRecordedAt
        try await ledger.append(.decideAuthorization(bundleIdentifier: appA.bundleIdentifier,
                                                      decisions: [(.quantity(.bodyMass), nil, .denied)], basis: .owner))
        let afterRevocation = await ledger.state.lastRecordedAt
        try await ledger.close()
        let reader = try LogReader(fs)
        var before = try StateLoader.load(fs, reader: reader, limit: .instant(beforeRevocation)).state
        var after = try StateLoader.load(fs, reader: reader, limit: .instant(afterRevocation)).state
        let a = before.registry.ordinal(of: appA.bundleIdentifier)!
        let q = SampleQuery(type: .quantity(.bodyMass))
        #expect(before.slots(matching: q, visibility: before.visibility(app: a, type: q.type)).count == 1)
        #expect(after.slots(matching: q, visibility: after.visibility(app: a, type: q.type)).isEmpty)
        // and one nanosecond before the revocation is the same as the last instant before it
        var justBefore = try StateLoader.load(fs, reader: reader, limit: .instant(afterRevocation - 1)).state
        #expect(justBefore.digest() == before.digest())
        #expect(justBefore.slots(matching: q, visibility: justBefore.visibility(app: a, type: q.type)).count == 1)
    }
}
