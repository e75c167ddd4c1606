import Foundation
import Glibc
import HealthModel
import Testing
@testable import LedgerCore
import LedgerLog
import TestSupport

/// A writer that refuses a batch after the ledger decided it (the writer was poisoned by
/// a failed write the ledger has not yet heard of) leaves the projections exactly as the
/// log has them: a single command's facts are folded only once the writer has its batch,
/// and a group folded as it went is rebuilt from the log. Readers never see an event the
/// log does not hold.
struct WriterRefusalTests {
    /// A ledger whose last deferred append failed in the flusher: the writer is poisoned,
    /// the ledger's own `failure` not yet set (it never waited for that write).
    static func ledgerWithPoisonedWriter() async throws -> (Ledger, SimulatedFileSystem) {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        fs.fault = .failWrite(number: fs.writeCount + 1, errno: EIO)
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier,
                                      samples: [try quantitySample(.bodyMass, 70, "kg", at: "2026-02-01T08:00:00Z")]),
                                durability: .deferred)
        // The writer's own sync (not the ledger's, which would fail the ledger): the
        // flusher writes the deferred batch, the write fails, the writer is poisoned.
        let writer = await ledger.writer
        await #expect(throws: LogError.self) { try await writer.sync() }
        #expect(writer.isPoisoned)
        return (ledger, fs)
    }

    @Test func aSingleCommandTheWriterRefusesIsNeverFolded() async throws {
        let (ledger, _) = try await Self.ledgerWithPoisonedWriter()
        let before = await ledger.state.digest()
        let sample = try quantitySample(.bodyMass, 71, "kg", at: "2026-02-02T08:00:00Z")
        await #expect(throws: LogError.self) {
            try await ledger.append(LedgerCommand.save(bundleIdentifier: appA.bundleIdentifier, samples: [sample]))
        }
        #expect(try await ledger.state.samples.slot(of: sample.uuid) == nil)
        #expect(await ledger.state.digest() == before)
        ledger.abandon()
    }

    @Test func aGroupTheWriterRefusesIsRebuiltFromTheLogAndFailsTheLedger() async throws {
        let (ledger, fs) = try await Self.ledgerWithPoisonedWriter()
        let samples = try (2...4).map { try quantitySample(.bodyMass, 70 + Double($0), "kg", at: "2026-02-0\($0)T08:00:00Z") }
        await #expect(throws: LogError.self) {
            _ = try await ledger.appendBestEffort(samples.map { LedgerCommand.save(bundleIdentifier: appA.bundleIdentifier, samples: [$0]) })
        }
        for s in samples { #expect(try await ledger.state.samples.slot(of: s.uuid) == nil) }
        // What the projections hold is what a replay of the log file holds.
        let replayed = try StateLoader.load(fs, reader: try LogReader(fs), useSnapshots: false).state
        #expect(await ledger.state.digest() == replayed.digest())
        await #expect(throws: LedgerError.self) {
            try await ledger.append(LedgerCommand.setOwnerTimeZone("UTC"))
        }
        ledger.abandon()
    }
}
