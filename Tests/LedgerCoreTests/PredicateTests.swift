import Foundation
import HealthModel
@testable import LedgerCore
import LedgerLog
import Testing
import TestSupport

/// HealthKit's predicates (`SamplePredicate`): exact semantics per kind, and the read
/// engine applying any combination exactly as a brute-force filter does.
struct PredicateTests {
    static func q(_ type: QuantityType, _ value: Double, _ unit: String, metadata: Metadata = Metadata(), device: Device? = nil,
                  source: String = "com.example.a", n: Int = 1) throws -> Sample {
        let t = date("2026-03-01T08:00:00Z")
        return .quantity(try QuantitySample(type: type, quantity: try Quantity(value, unit: unit), start: t, end: t, uuid: fixedUUID(n),
                                            metadata: metadata, device: device,
                                            source: Source(bundleIdentifier: source, name: "A")))
    }

    @Test func everyKindAlone() throws {
        let hr = try Self.q(.heartRate, 190, "count/min")
        #expect(SamplePredicate.quantity(.greater, try Quantity(3, unit: "count/s")).matches(hr))      // 180 count/min
        #expect(!SamplePredicate.quantity(.greater, try Quantity(200, unit: "count/min")).matches(hr))
        #expect(!SamplePredicate.quantity(.greater, try Quantity(1, unit: "kg")).matches(hr))          // incompatible: no match
        let mass = try Self.q(.bodyMass, 100, "kg", metadata: ["HKWasUserEntered": .bool(true), "note": .string("b"),
                                                                "n": .integer(5), "x": .number(2.5),
                                                                "when": .date(date("2026-01-01T00:00:00Z")),
                                                                "t": .quantity(try Quantity(20, unit: "degC"))],
                              device: Device(name: "Scale", manufacturer: "Acme", model: "S1", localIdentifier: "L1"))
        #expect(SamplePredicate.quantity(.greaterOrEqual, try Quantity(220, unit: "lb")).matches(mass))   // 99.79 kg
        #expect(!SamplePredicate.quantity(.greaterOrEqual, try Quantity(221, unit: "lb")).matches(mass))  // 100.24 kg
        #expect(SamplePredicate.quantity(.equal, try Quantity(100_000, unit: "g")).matches(mass))
        #expect(SamplePredicate.uuids([fixedUUID(1), fixedUUID(2)]).matches(mass))
        #expect(!SamplePredicate.uuids([fixedUUID(2)]).matches(mass))
        #expect(SamplePredicate.sources(["com.example.a"]).matches(mass))
        #expect(!SamplePredicate.sources(["com.example.b"]).matches(mass))
        for (p, v) in [(SamplePredicate.DeviceProperty.name, "Scale"), (.manufacturer, "Acme"), (.model, "S1"), (.localIdentifier, "L1")] {
            #expect(SamplePredicate.device(p, v).matches(mass))
            #expect(!SamplePredicate.device(p, v + "x").matches(mass))
            #expect(!SamplePredicate.device(p, v).matches(hr))  // no device
        }
        #expect(SamplePredicate.metadataExists("note").matches(mass))
        #expect(!SamplePredicate.metadataExists("Note").matches(mass))  // keys verbatim
        #expect(SamplePredicate.metadata("HKWasUserEntered", .equal, .bool(true)).matches(mass))
        #expect(SamplePredicate.metadata("note", .greater, .string("a")).matches(mass))
        #expect(SamplePredicate.metadata("n", .less, .number(5.5)).matches(mass))          // integer vs number
        #expect(SamplePredicate.metadata("x", .greaterOrEqual, .integer(2)).matches(mass))
        #expect(SamplePredicate.metadata("when", .less, .date(date("2026-02-01T00:00:00Z"))).matches(mass))
        #expect(SamplePredicate.metadata("t", .greater, .quantity(try Quantity(60, unit: "degF"))).matches(mass))  // 20 °C = 68 °F
        #expect(!SamplePredicate.metadata("note", .equal, .integer(1)).matches(mass))      // other kind
        #expect(SamplePredicate.metadata("note", .notEqual, .integer(1)).matches(mass))
        #expect(SamplePredicate.metadata("missing", .notEqual, .string("z")).matches(mass))
        #expect(!SamplePredicate.metadata("missing", .equal, .string("z")).matches(mass))
        let t = date("2026-03-01T08:00:00Z")
        let sleep = Sample.category(try CategorySample(type: .sleepAnalysis, value: 3, start: t, end: t))
        #expect(SamplePredicate.categoryValue(.equal, 3).matches(sleep))
        #expect(!SamplePredicate.categoryValue(.less, 3).matches(sleep))
        #expect(!SamplePredicate.categoryValue(.equal, 3).matches(mass))
        let run = Sample.workout(try Workout(activityType: .running, start: t, end: t.addingTimeInterval(1800), duration: 1700,
                                             totalEnergyBurned: try Quantity(300, unit: "kcal"), totalDistance: try Quantity(5, unit: "km")))
        #expect(SamplePredicate.workoutActivity(.running).matches(run))
        #expect(!SamplePredicate.workoutActivity(.walking).matches(run))
        #expect(SamplePredicate.workoutDuration(.greater, 1600).matches(run))
        #expect(SamplePredicate.workoutEnergy(.greaterOrEqual, try Quantity(1255, unit: "kJ")).matches(run))  // 300 kcal = 1255.2 kJ
        #expect(SamplePredicate.workoutDistance(.less, try Quantity(3.2, unit: "mi")).matches(run))           // 5.15 km
        #expect(SamplePredicate.and([.workoutActivity(.running), .not(.workoutDuration(.less, 100))]).matches(run))
        #expect(SamplePredicate.or([.workoutActivity(.walking), .workoutDuration(.equal, 1700)]).matches(run))
        #expect(SamplePredicate.and([]).matches(run))
        #expect(!SamplePredicate.or([]).matches(run))
    }

    /// Seeded random predicate trees over seeded samples: the engine's answer (small
    /// chunks, both directions) equals filtering every saved sample with `Naive`, an
    /// evaluator written apart from `matches`, so a wrong `matches` fails here.
    @Test func anyCombinationAgainstBruteForce() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        let mass = ObjectType.quantity(.bodyMass)
        try await ledger.grant(appA, share: [mass])
        try await ledger.grant(appB, share: [mass])
        var rng = SeededGenerator(seed: 2026)
        func pick<T>(_ xs: [T]) -> T { xs[Int(rng.next() % UInt64(xs.count))] }
        let keys = ["note", "n", "x", "HKWasUserEntered"]
        var uuids: [UUID] = []
        // what was saved, in save order, with its saving app: the naive evaluator's input
        var saved: [(sample: Sample, source: String)] = []
        for r in 0..<12 {
            var batch: [Sample] = []
            for _ in 0..<25 {
                var m = Metadata()
                for key in keys where rng.next() % 2 == 0 {
                    switch key {
                    case "note": m.append(key, .string(pick(["a", "b", "c"])))
                    case "n": m.append(key, .integer(Int64(rng.next() % 10)))
                    case "x": m.append(key, .quantity(try Quantity(Double(rng.next() % 40), unit: pick(["degC", "degF"]))))
                    default: m.append(key, .bool(rng.next() % 2 == 0))
                    }
                }
                let device = rng.next() % 3 == 0 ? nil : Device(name: pick(["Scale", "Watch"]), manufacturer: pick(["Acme", "Apple"]),
                                                                model: pick(["S1", "S2"]), localIdentifier: pick(["L1", "L2"]))
                let t = date("2026-03-01T00:00:00Z").addingTimeInterval(Double(rng.next() % 1000) * 60)
                let uuid = UUID()
                uuids.append(uuid)
                batch.append(.quantity(try QuantitySample(type: .bodyMass, quantity: try Quantity(Double(40 + rng.next() % 80), unit: pick(["kg", "lb"])),
                                                          start: t, end: t, uuid: uuid, metadata: m, device: device)))
            }
            let app = (r % 2 == 0 ? appA : appB).bundleIdentifier
            saved += batch.map { ($0, app) }
            try await ledger.append(.save(bundleIdentifier: app, samples: batch))
        }
        func leaf() throws -> SamplePredicate {
            let op = pick(Comparison.allCases)
            switch rng.next() % 7 {
            case 0: return .uuids(Set((0..<5).map { _ in pick(uuids) }))
            case 1: return .sources([pick([appA.bundleIdentifier, appB.bundleIdentifier])])
            case 2: return .device(pick(SamplePredicate.DeviceProperty.allCases), pick(["Scale", "Acme", "S1", "L2", "Apple"]))
            case 3: return .metadataExists(pick(keys))
            case 4:
                let operand: MetadataValue = pick([.string("b"), .integer(Int64(rng.next() % 10)), .number(4.5), .bool(true),
                                                   .quantity(try Quantity(Double(rng.next() % 100), unit: "degF"))])
                return .metadata(pick(keys), op, operand)
            default: return .quantity(op, try Quantity(Double(rng.next() % 250), unit: pick(["kg", "lb", "g", "kg", "lb", "g", "count"])))
            }
        }
        func tree(_ depth: Int) throws -> SamplePredicate {
            guard depth > 0, rng.next() % 3 != 0 else { return try leaf() }
            switch rng.next() % 3 {
            case 0: return .and([try tree(depth - 1), try tree(depth - 1)])
            case 1: return .or([try tree(depth - 1), try tree(depth - 1)])
            default: return .not(try tree(depth - 1))
            }
        }
        // what was saved in ascending order: start (= end), then save order
        let all = saved.indices.sorted { a, b in
            let x = saved[a].sample.startDate, y = saved[b].sample.startDate
            return x != y ? x < y : a < b
        }.map { saved[$0] }
        #expect(all.count == 300)
        var nonEmpty = 0
        for _ in 0..<300 {
            let predicate = try tree(3)
            let ascending = rng.next() % 2 == 0
            let limit = pick([0, 0, 5])
            var expected = all.filter { Naive.holds(predicate, $0.sample, source: $0.source) }.map(\.sample.uuid)
            if !ascending { expected.reverse() }
            if limit > 0 { expected = Array(expected.prefix(limit)) }
            let q = SampleQuery(type: mass, limit: limit, sort: [SampleSortDescriptor(.startDate, ascending: ascending)], filter: predicate)
            let got = try await ledger.read { state in
                try SampleReader(fs, chunkSize: 7, tableBudget: 64).page(q, visibility: .everything, in: &state).samples.map(\.uuid)
            }
            #expect(got == expected, "\(predicate)")
            if !expected.isEmpty { nonEmpty += 1 }
        }
        #expect(nonEmpty > 100)  // the generator makes predicates that select something
    }
}

/// An evaluator written apart from `SamplePredicate.matches`, straight over the saved
/// model values, for the property test: masses in exact integer micrograms,
/// temperatures in exact fifths of a °F, numbers compared as fractions, so that it
/// cannot share a mistake (or a rounding) with the engine's.
enum Naive {
    /// An exact value with its dimension; nil: a unit the test does not use.
    enum Exact: Equatable { case mass(Int64), temperature(Int64), count(Int64) }

    static func exact(_ value: Double, _ unit: String) -> Exact? {
        guard value == value.rounded(), abs(value) < 1e6 else { return nil }
        let v = Int64(value)
        switch unit {
        case "kg": return .mass(v * 1_000_000_000)
        case "g": return .mass(v * 1_000_000)
        case "lb": return .mass(v * 453_592_370)          // 1 lb = 0.45359237 kg exactly
        case "degF": return .temperature(v * 5)           // 5 °F units
        case "degC": return .temperature(v * 9 + 160)     // F = 9C/5 + 32 → 5F = 9C + 160
        case "count": return .count(v)
        default: return nil
        }
    }

    /// −1, 0, 1, or nil when the two do not compare.
    static func order(_ a: Exact?, _ b: Exact?) -> Int? {
        func sign(_ x: Int64, _ y: Int64) -> Int { x < y ? -1 : (x == y ? 0 : 1) }
        switch (a, b) {
        case (.mass(let x)?, .mass(let y)?), (.temperature(let x)?, .temperature(let y)?), (.count(let x)?, .count(let y)?):
            return sign(x, y)
        default: return nil
        }
    }

    static func apply(_ op: Comparison, _ order: Int) -> Bool {
        switch op.rawValue {
        case "=": return order == 0
        case "!=": return order != 0
        case "<": return order < 0
        case "<=": return order <= 0
        case ">": return order > 0
        default: return order >= 0
        }
    }

    static func metadataOrder(_ value: MetadataValue, _ operand: MetadataValue) -> Int? {
        switch (value, operand) {
        case (.string(let x), .string(let y)): return x == y ? 0 : (Array(x.unicodeScalars.map(\.value)).lexicographicallyPrecedes(y.unicodeScalars.map(\.value)) ? -1 : 1)
        case (.integer(let x), .integer(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.integer(let x), .number(let y)):
            // y is a multiple of 0.5 in this test: compare 2x with 2y
            let twice = Int64(y * 2)
            return 2 * x == twice ? 0 : (2 * x < twice ? -1 : 1)
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (y ? -1 : 1)
        case (.quantity(let x), .quantity(let y)):
            return order(exact(x.value, x.unit.canonicalString), exact(y.value, y.unit.canonicalString))
        default: return nil
        }
    }

    static func holds(_ p: SamplePredicate, _ sample: Sample, source: String) -> Bool {
        guard case .quantity(let q) = sample else { return false }
        switch p {
        case .uuids(let set): return set.contains(q.common.uuid)
        case .sources(let set): return set.contains(source)
        case .device(let property, let value):
            guard let d = q.common.device else { return false }
            let field: String? = switch property {
            case .name: d.name
            case .manufacturer: d.manufacturer
            case .model: d.model
            case .localIdentifier: d.localIdentifier
            }
            return field == value
        case .metadataExists(let key): return q.common.metadata[key] != nil
        case .metadata(let key, let op, let operand):
            guard let value = q.common.metadata[key], let o = metadataOrder(value, operand) else { return op == .notEqual }
            return apply(op, o)
        case .quantity(let op, let operand):
            guard let o = order(exact(q.quantity.value, q.quantity.unit.canonicalString),
                                exact(operand.value, operand.unit.canonicalString)) else { return false }
            return apply(op, o)
        case .and(let all):
            for x in all where !holds(x, sample, source: source) { return false }
            return true
        case .or(let any):
            for x in any where holds(x, sample, source: source) { return true }
            return false
        case .not(let x): return !holds(x, sample, source: source)
        case .categoryValue, .workoutActivity, .workoutDuration, .workoutEnergy, .workoutDistance: return false
        }
    }
}
