import Foundation
import HealthModel
@testable import LedgerCore
import LedgerLog
import Testing
import TestSupport

/// HKCorrelationQuery: a correlation matches when its own predicates and, per member
/// type given, at least one member of that type match; apps see members as their
/// read permission allows.
struct CorrelationQueryTests {
    static let sys = QuantityType.bloodPressureSystolic, dia = QuantityType.bloodPressureDiastolic
    static let appC = AppRegistration(bundleIdentifier: "com.example.c", name: "C", readPurpose: "read", sharePurpose: "share")

    static func bp(_ n: Int, _ systolic: Double, _ diastolic: Double, at: String) throws -> Sample {
        let t = date(at)
        return .correlation(try Correlation(type: .bloodPressure, start: t, end: t, objects: [
            try QuantitySample(type: sys, quantity: try Quantity(systolic, unit: "mmHg"), start: t, end: t, uuid: fixedUUID(n + 1)),
            try QuantitySample(type: dia, quantity: try Quantity(diastolic, unit: "mmHg"), start: t, end: t, uuid: fixedUUID(n + 2)),
        ], uuid: fixedUUID(n)))
    }

    /// A saves 10 (120/80) and 30 (135/85), B saves 20 (150/95); B may read systolic
    /// only, A no member type, C nothing. A also saves food 40 (600 kcal, 20 g protein)
    /// and 50 (300 kcal, no protein).
    static func ledger(_ fs: SimulatedFileSystem) async throws -> Ledger {
        let ledger = try makeLedger(fs)
        let food: [ObjectType] = [.quantity(.dietaryEnergyConsumed), .quantity(.dietaryProtein)]
        try await ledger.grant(appA, share: [.quantity(sys), .quantity(dia)] + food)
        try await ledger.grant(appB, share: [.quantity(sys), .quantity(dia)], read: [.quantity(sys)])
        try await ledger.grant(appC, share: [], read: [.quantity(.bodyMass)])
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [
            try bp(10, 120, 80, at: "2026-03-01T08:00:00Z")]))
        try await ledger.append(.save(bundleIdentifier: appB.bundleIdentifier, samples: [
            try bp(20, 150, 95, at: "2026-03-02T08:00:00Z")]))
        let t = date("2026-03-04T12:00:00Z")
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [
            try bp(30, 135, 85, at: "2026-03-03T08:00:00Z"),
            .correlation(try Correlation(type: .food, start: t, end: t, objects: [
                try QuantitySample(type: .dietaryEnergyConsumed, quantity: try Quantity(600, unit: "kcal"), start: t, end: t,
                                   uuid: fixedUUID(41)),
                try QuantitySample(type: .dietaryProtein, quantity: try Quantity(20, unit: "g"), start: t, end: t,
                                   uuid: fixedUUID(42))], uuid: fixedUUID(40))),
            .correlation(try Correlation(type: .food, start: t, end: t, objects: [
                try QuantitySample(type: .dietaryEnergyConsumed, quantity: try Quantity(300, unit: "kcal"), start: t, end: t,
                                   uuid: fixedUUID(51))], uuid: fixedUUID(50))),
        ]))
        return ledger
    }

    /// Each result as [correlation UUID, member UUIDs…].
    static func run(_ ledger: Ledger, _ fs: SimulatedFileSystem, _ q: CorrelationQuery, as app: AppRegistration?,
                    after: UUID? = nil) async throws -> (ids: [[Int]], next: UUID?) {
        try await ledger.read { state throws -> ([[Int]], UUID?) in
            let visibility = app.map { state.visibility(app: state.registry.ordinal(of: $0.bundleIdentifier), type: .correlation(q.type)) }
                ?? .everything
            let page = try SampleReader(fs, chunkSize: 1, tableBudget: 4).page(q, visibility: visibility, after: after, in: &state)
            let ids = page.samples.map { s -> [Int] in
                guard case .correlation(let c) = s else { return [-1] }
                return ([c.uuid] + c.objects.map(\.uuid)).map { u in (1...60).first { fixedUUID($0) == u } ?? 0 }
            }
            return (ids, page.next)
        }
    }

    static let ascending = [SampleSortDescriptor(.startDate, ascending: true)]

    static func bpQuery(_ members: [QuantityType: SamplePredicate], filter: SamplePredicate? = nil,
                        limit: Int = 0) -> CorrelationQuery {
        CorrelationQuery(type: .bloodPressure, filter: filter, memberPredicates: members, limit: limit, sort: ascending)
    }

    static func mmHg(_ op: Comparison, _ v: Double) throws -> SamplePredicate { .quantity(op, try Quantity(v, unit: "mmHg")) }

    @Test func theOwnerSeesEveryMember() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try await Self.ledger(fs)
        func ids(_ q: CorrelationQuery) async throws -> [[Int]] { try await Self.run(ledger, fs, q, as: nil).ids }
        // no member predicate: every correlation of the type, whole
        #expect(try await ids(Self.bpQuery([:])) == [[10, 11, 12], [20, 21, 22], [30, 31, 32]])
        #expect(try await ids(Self.bpQuery([Self.sys: try Self.mmHg(.greater, 130)])) == [[20, 21, 22], [30, 31, 32]])
        // every member predicate must hold
        #expect(try await ids(Self.bpQuery([Self.sys: try Self.mmHg(.greater, 130), Self.dia: try Self.mmHg(.less, 90)]))
                == [[30, 31, 32]])
        // a predicate in another compatible unit (16.5 kPa ≈ 123.8 mmHg)
        #expect(try await ids(Self.bpQuery([Self.sys: .quantity(.greater, try Quantity(16.5, unit: "kPa"))])) == [[20, 21, 22], [30, 31, 32]])
        // the correlation's own predicate too
        #expect(try await ids(Self.bpQuery([Self.sys: try Self.mmHg(.greater, 130)], filter: .sources([appA.bundleIdentifier])))
                == [[30, 31, 32]])
        // a predicate no member meets
        #expect(try await ids(Self.bpQuery([Self.dia: try Self.mmHg(.greater, 100)])).isEmpty)
        // food: a member type the correlation does not hold does not match
        let energy: SamplePredicate = .quantity(.greater, try Quantity(200, unit: "kcal"))
        #expect(try await ids(CorrelationQuery(type: .food, memberPredicates: [.dietaryEnergyConsumed: energy], sort: Self.ascending))
                == [[40, 41, 42], [50, 51]])
        #expect(try await ids(CorrelationQuery(type: .food, memberPredicates: [
            .dietaryEnergyConsumed: energy, .dietaryProtein: .quantity(.greaterOrEqual, try Quantity(0, unit: "g"))],
                                               sort: Self.ascending)) == [[40, 41, 42]])
        // paging: limit 1 resumes after the cursor
        let first = try await Self.run(ledger, fs, Self.bpQuery([Self.sys: try Self.mmHg(.greater, 130)], limit: 1), as: nil)
        #expect(first.ids == [[20, 21, 22]])
        #expect(first.next == fixedUUID(20))
        let second = try await Self.run(ledger, fs, Self.bpQuery([Self.sys: try Self.mmHg(.greater, 130)], limit: 1), as: nil,
                                        after: first.next)
        #expect(second.ids == [[30, 31, 32]])
        #expect(second.next == nil)
    }

    /// An app sees others' correlations through the member types it may read, holding
    /// only those members, and its member predicates see only them; its own whole.
    @Test func anAppWithPartialReadPermission() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try await Self.ledger(fs)
        func ids(_ q: CorrelationQuery, _ app: AppRegistration) async throws -> [[Int]] {
            try await Self.run(ledger, fs, q, as: app).ids
        }
        // B reads systolic: A's correlations with their systolic member only, its own whole
        #expect(try await ids(Self.bpQuery([:]), appB) == [[10, 11], [20, 21, 22], [30, 31]])
        #expect(try await ids(Self.bpQuery([Self.sys: try Self.mmHg(.greater, 130)]), appB) == [[20, 21, 22], [30, 31]])
        // diastolic: B cannot see A's diastolic members, so only its own can match
        #expect(try await ids(Self.bpQuery([Self.dia: try Self.mmHg(.less, 100)]), appB) == [[20, 21, 22]])
        #expect(try await ids(Self.bpQuery([Self.dia: try Self.mmHg(.less, 90)]), appB).isEmpty)
        // A reads no member type: its own correlations only, whole
        #expect(try await ids(Self.bpQuery([Self.dia: try Self.mmHg(.less, 90)]), appA) == [[10, 11, 12], [30, 31, 32]])
        #expect(try await ids(Self.bpQuery([Self.sys: try Self.mmHg(.greater, 130)]), appA) == [[30, 31, 32]])
        // C: nothing
        #expect(try await ids(Self.bpQuery([:]), Self.appC).isEmpty)
    }
}
