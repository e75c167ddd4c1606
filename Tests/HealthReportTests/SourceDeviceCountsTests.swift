import Foundation
import HealthLedger
import HealthModel
import LedgerCore
import Testing
import TestSupport
@testable import HealthReport

/// "Where the data came from" counts samples per (type, source, device) from the
/// sample index and each sample's device bytes: the rows equal a brute force over the
/// decoded samples of every type — quantities and categories with every kind of
/// metadata value and sync identities, correlations and their members, workouts,
/// deleted samples — for the owner, for an app that reads only its own, and in a period.
@Suite struct SourceDeviceCountsTests {
    static let watch = AppRegistration(bundleIdentifier: "com.example.watch", name: "Watch", readPurpose: "r", sharePurpose: "s")
    static let cuff = AppRegistration(bundleIdentifier: "com.example.cuff", name: "Cuff", readPurpose: "r", sharePurpose: "s")
    static let types: [ObjectType] = [.quantity(.heartRate), .quantity(.stepCount), .quantity(.bloodPressureSystolic),
                                      .quantity(.bloodPressureDiastolic), .category(.sleepAnalysis), .workout]
    static let devices: [Device?] = [nil, Device(name: "Apple Watch", manufacturer: "Apple Inc.", model: "Watch"),
                                     Device(name: "Cuff", model: "BP7"), Device(name: "Apple Watch", model: "Watch", softwareVersion: "11.2"),
                                     Device(localIdentifier: "x-1")]

    static func metadata(_ i: Int) throws -> Metadata {
        var m = Metadata()
        guard i % 2 == 0 else { return m }
        m.append("s", .string("v\(i)"))
        m.append("i", .integer(Int64(i)))
        m.append("n", .number(Double(i) / 3))
        m.append("b", .bool(i % 4 == 0))
        m.append("d", .date(Date(timeIntervalSince1970: 1_750_000_000 + Double(i))))
        m.append("q", .quantity(try Quantity(Double(i), unit: "kg")))
        if i % 6 == 0 {
            m.append("HKMetadataKeySyncIdentifier", .string("sync-\(i)"))
            m.append("HKMetadataKeySyncVersion", .integer(1))
        }
        return m
    }

    static func samples(_ n: Int, offset: Int) throws -> [Sample] {
        try (0..<n).map { k in
            let i = k + offset
            let t = Date(timeIntervalSince1970: 1_748_736_000 + Double(i) * 3_600)
            let device = devices[i % devices.count]
            let m = try metadata(i)
            switch i % 4 {
            case 0:
                return .quantity(try QuantitySample(type: .heartRate, quantity: try Quantity(60 + Double(i % 50), unit: "count/min"),
                                                    start: t, end: t, metadata: m, device: device))
            case 1:
                return .quantity(try QuantitySample(type: .stepCount, quantity: try Quantity(Double(i), unit: "count"), start: t,
                                                    end: t.addingTimeInterval(600), metadata: m, device: device))
            case 2:
                return .category(try CategorySample(type: .sleepAnalysis, value: 3, start: t, end: t.addingTimeInterval(1_800),
                                                    metadata: m, device: device))
            default:
                return .workout(try Workout(activityType: .running, start: t, end: t.addingTimeInterval(900), metadata: m, device: device))
            }
        }
    }

    static func bloodPressure(_ i: Int) throws -> Sample {
        let t = Date(timeIntervalSince1970: 1_748_736_000 + Double(i) * 7_200 + 60)
        return .correlation(try Correlation(type: .bloodPressure, start: t, end: t, objects: [
            try QuantitySample(type: .bloodPressureSystolic, quantity: try Quantity(110 + Double(i), unit: "mmHg"), start: t, end: t,
                               device: devices[(i + 1) % devices.count]),
            try QuantitySample(type: .bloodPressureDiastolic, quantity: try Quantity(70 + Double(i), unit: "mmHg"), start: t, end: t),
        ], device: devices[(i + 2) % devices.count]))
    }

    struct Row: Hashable {
        let type: String
        let source: String
        let device: Device?
    }

    /// Every type's samples decoded, counted per (type, source, device).
    static func bruteForce(_ viewer: ReportViewer, period: DatePredicate?) async throws -> [Row: Int] {
        var rows: [Row: Int] = [:]
        for type in ObjectType.allTypes {
            if case .characteristic = type { continue }
            try await viewer.forEach(type, in: period) { s in
                rows[Row(type: type.identifier, source: s.common.source?.bundleIdentifier ?? "?", device: s.common.device), default: 0] += 1
            }
        }
        return rows
    }

    static func counted(_ viewer: ReportViewer, period: DatePredicate?) async throws -> [Row: Int] {
        var rows: [Row: Int] = [:]
        for r in try await viewer.sourceDeviceCounts(ObjectType.allTypes, period: period) {
            #expect(r.count > 0)
            #expect(rows.updateValue(r.count, forKey: Row(type: r.type.identifier, source: r.source?.bundleIdentifier ?? "?", device: r.device)) == nil)
        }
        return rows
    }

    @Test func countsEqualTheDecodedSamples() async throws {
        let ledger = try Ledger.create(SimulatedFileSystem(), ledgerId: fixedLedgerId)
        let owner = OwnerStore(ledger: ledger)
        let cuffTypes: Set<ObjectType> = [.quantity(.bloodPressureSystolic), .quantity(.bloodPressureDiastolic), .quantity(.heartRate)]
        let watch = try await HealthStore(ledger: ledger, app: Self.watch)
        try await watch.requestAuthorization(toShare: Set(Self.types), read: Set(Self.types))
        try await owner.grantRequested(app: Self.watch.bundleIdentifier)
        let cuff = try await HealthStore(ledger: ledger, app: Self.cuff)
        try await cuff.requestAuthorization(toShare: cuffTypes, read: [])
        try await owner.grantRequested(app: Self.cuff.bundleIdentifier)
        let saved = try Self.samples(120, offset: 0)
        try await watch.save(saved)
        try await watch.save(try Self.samples(40, offset: 120))
        try await cuff.save(try (0..<30).map(Self.bloodPressure) + Self.samples(20, offset: 0).filter {
            if case .quantity(let q) = $0 { return q.type == .heartRate } else { return false }
        })
        try await watch.delete([saved[0].uuid, saved[5].uuid, saved[10].uuid])

        let period = DatePredicate(start: Date(timeIntervalSince1970: 1_748_736_000 + 20 * 3_600),
                                   end: Date(timeIntervalSince1970: 1_748_736_000 + 90 * 3_600))
        for viewer in [ReportViewer.owner(owner), .app(cuff), .app(watch)] {
            for p in [nil, period] {
                let want = try await Self.bruteForce(viewer, period: p)
                let got = try await Self.counted(viewer, period: p)
                #expect(got == want, "\(viewer.bundleIdentifier ?? "owner"), period \(p == nil ? "none" : "set")")
                #expect(!want.isEmpty)
            }
        }
        // every device, correlation members and the cuff's own heart rates are among the owner's rows
        let all = try await Self.counted(.owner(owner), period: nil)
        #expect(Set(all.keys.map(\.device)) == Set(Self.devices))
        #expect(all[Row(type: ObjectType.correlation(.bloodPressure).identifier, source: Self.cuff.bundleIdentifier, device: Self.devices[2])] == 6)
        // 160 of the watch less 3 deleted; 30 correlations with 2 members each; 5 heart rates of the cuff
        let total: Int = all.values.reduce(0, +)
        #expect(total == 252)
    }
}
