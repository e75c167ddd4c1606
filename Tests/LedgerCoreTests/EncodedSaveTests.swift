import Foundation
import HealthModel
@testable import LedgerCore
import LedgerLog
import Testing
import TestSupport

/// `.saveEncoded` (samples encoded up front, the importer's bulk path) means exactly
/// `.save` of the same samples: the same rules, the same decisions (a newer sync
/// version replaces the stored one) and the same bytes in the log, whether the
/// command runs on its own (the event decoded from the bytes) or in a group (the bytes
/// copied as they are).
struct EncodedSaveTests {
    static func sync(_ id: String, _ version: Int64) -> Metadata {
        Metadata([MetadataEntry(key: Metadata.WellKnownKey.syncIdentifier, value: .string(id)),
                  MetadataEntry(key: Metadata.WellKnownKey.syncVersion, value: .integer(version))])
    }

    static func encoded(_ samples: [Sample]) -> EncodedSamples {
        var e = EncodedSamples()
        for s in samples { e.append(s) }
        return e
    }

    static func first() throws -> [Sample] {
        let systolic = try QuantitySample(type: .bloodPressureSystolic, quantity: try Quantity(120, unit: "mmHg"),
                                          start: date("2026-01-02T08:00:00Z"), end: date("2026-01-02T08:00:00Z"))
        let diastolic = try QuantitySample(type: .bloodPressureDiastolic, quantity: try Quantity(80, unit: "mmHg"),
                                           start: date("2026-01-02T08:00:00Z"), end: date("2026-01-02T08:00:00Z"))
        let pressure = Sample.correlation(try Correlation(type: .bloodPressure, start: date("2026-01-02T08:00:00Z"),
                                                          end: date("2026-01-02T08:00:00Z"), objects: [systolic, diastolic]))
        return [
            try quantitySample(.stepCount, 1200, "count", at: "2026-01-02T09:00:00Z", to: "2026-01-02T09:30:00Z"),
            try quantitySample(.bodyMass, 150, "lb", at: "2026-01-02T07:00:00Z", metadata: sync("scale-1", 1)),
            pressure,
        ]
    }

    @Test func theSameLogAsSaveAloneInAGroupAndReplacing() async throws {
        let (fsA, fsB) = (SimulatedFileSystem(), SimulatedFileSystem())
        let (a, b) = (try makeLedger(fsA), try makeLedger(fsB))
        let types: [ObjectType] = [.quantity(.stepCount), .quantity(.bodyMass), .quantity(.bloodPressureSystolic),
                                   .quantity(.bloodPressureDiastolic)]
        try await a.grant(appA, share: types)
        try await b.grant(appA, share: types)
        let bundle = appA.bundleIdentifier

        // On its own (`execute`: the general path, the event decoded from the bytes).
        let samples = try Self.first()
        let storedA = try await a.append(.save(bundleIdentifier: bundle, samples: samples))
        let storedB = try await b.append(.saveEncoded(bundleIdentifier: bundle, samples: Self.encoded(samples)))
        // The same event (its samples come back attributed to the app, as replay reads them;
        // `.save` hands back the samples as given): the same payload.
        #expect(storedB.map { EventCodec.payload($0.event) } == storedA.map { EventCodec.payload($0.event) })
        #expect(storedB.map(\.sequence) == storedA.map(\.sequence))

        // In a group (the bytes copied as they are), one replacing the stored sync version.
        let newer = try quantitySample(.bodyMass, 151, "lb", at: "2026-01-03T07:00:00Z", metadata: Self.sync("scale-1", 2))
        let steps = try quantitySample(.stepCount, 300, "count", at: "2026-01-03T09:00:00Z")
        let groupA = try await a.appendBestEffort([.save(bundleIdentifier: bundle, samples: [newer, steps])], durability: .durable)
        let groupB = try await b.appendBestEffort([.saveEncoded(bundleIdentifier: bundle, samples: Self.encoded([newer, steps]))],
                                             durability: .durable)
        #expect(groupA.refused.isEmpty && groupB.refused.isEmpty)
        #expect(groupB.sequences == groupA.sequences)

        // Refused the same way: a UUID the ledger holds, an older sync version.
        let again = try await b.appendBestEffort([.saveEncoded(bundleIdentifier: bundle, samples: Self.encoded([steps]))],
                                            durability: .durable)
        #expect(again.refused.map { "\($0.violation)" } == ["\(RuleViolation.duplicateUUID(steps.uuid))"])
        let older = try quantitySample(.bodyMass, 149, "lb", at: "2026-01-01T07:00:00Z", metadata: Self.sync("scale-1", 1))
        await #expect(throws: RuleViolation.syncVersionNotNewer(syncIdentifier: "scale-1", stored: 2, given: 1)) {
            try await b.append(.saveEncoded(bundleIdentifier: bundle, samples: Self.encoded([older])))
        }
        await #expect(throws: RuleViolation.emptyCall("a save", rule: "E7")) {
            try await b.append(.saveEncoded(bundleIdentifier: bundle, samples: EncodedSamples()))
        }

        // The same state and the same log, byte for byte (the clock steps alike).
        let (stateA, stateB) = (await a.state, await b.state)
        #expect(stateB.digest() == stateA.digest())
        let replaced = try #require(try stateB.samples.slot(of: samples[1].uuid))
        #expect(stateB.samples.entry(replaced).isDeleted)
        try await a.close()
        try await b.close()
        #expect(fsB.currentBytes("ledger.log") == fsA.currentBytes("ledger.log"))
    }
}
