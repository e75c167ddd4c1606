import Foundation
import HealthModel
import Testing
@testable import LedgerCore
import LedgerLog
import TestSupport

/// A command too large for the log is refused before anything is
/// written or folded, and the ledger goes on (only the writer's I/O fails a ledger).
struct LedgerLimitTests {
    static func oversized() throws -> Sample {
        let blob = Metadata([MetadataEntry(key: "blob", value: .string(String(repeating: "x", count: LogFormat.payloadLengthMax + 1)))])
        return try quantitySample(.bodyMass, 70, "kg", at: "2026-02-01T08:00:00Z", metadata: blob)
    }

    @Test func anOversizedSaveIsRefusedAndTheLedgerGoesOn() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        let sequenceBefore = await ledger.state.lastSequence
        do {
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [try Self.oversized()]))
            Issue.record("an oversized save was accepted")
        } catch let error as LogError {
            guard case .tooLarge(let bytes, let limit) = error else { Issue.record("unexpected \(error)"); return }
            #expect(limit == LogFormat.payloadLengthMax)
            #expect(bytes > LogFormat.payloadLengthMax)
        }
        #expect(await ledger.state.lastSequence == sequenceBefore)
        // Not failed: the next save is taken.
        let saved = try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier,
                                                    samples: [try quantitySample(.bodyMass, 71, "kg", at: "2026-02-02T08:00:00Z")]))
        #expect(saved.count == 1)
        try await ledger.close()
    }

    @Test func anOversizedCommandInAGroupIsLeftOutAndTheOthersGoOn() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        let results = try await ledger.appendBestEffort([
            .save(bundleIdentifier: appA.bundleIdentifier, samples: [try quantitySample(.bodyMass, 70, "kg", at: "2026-02-01T08:00:00Z")]),
            .save(bundleIdentifier: appA.bundleIdentifier, samples: [try Self.oversized()]),
            .save(bundleIdentifier: appA.bundleIdentifier, samples: [try quantitySample(.bodyMass, 72, "kg", at: "2026-02-03T08:00:00Z")]),
        ]).results
        #expect(results.count == 3)
        guard case .success(let first) = results[0], case .failure(let refusal) = results[1], case .success(let third) = results[2] else {
            Issue.record("unexpected \(results)")
            return
        }
        guard case .tooLarge(let bytes, let limit) = refusal else { Issue.record("unexpected \(refusal)"); return }
        #expect(limit == LogFormat.payloadLengthMax && bytes > limit)
        #expect(third[0].sequence == first[0].sequence + 1)
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier,
                                       samples: [try quantitySample(.bodyMass, 73, "kg", at: "2026-02-04T08:00:00Z")]))
        try await ledger.close()
    }
}
