import Foundation
import HealthModel
@testable import LedgerCore
import LedgerLog
import TestSupport

/// A ledger on a simulated disk with a stepping clock (one second per batch from
/// 2026-03-01T12:00:00Z).
func makeLedger(_ fs: SimulatedFileSystem = SimulatedFileSystem()) throws -> Ledger {
    let clock = SteppingClock(start: 1_772_366_400_000_000_000, step: 1_000_000_000)
    return try Ledger.create(fs, ledgerId: fixedLedgerId,
                             options: LedgerOptions(log: LogWriterOptions(clock: clock.function, allocationChunk: smallChunk)))
}

func quantitySample(_ type: QuantityType, _ value: Double, _ unit: String, at: String, to: String? = nil, uuid: UUID = UUID(),
                    metadata: Metadata = Metadata()) throws -> Sample {
    .quantity(try QuantitySample(type: type, quantity: try Quantity(value, unit: unit), start: date(at), end: date(to ?? at),
                                 uuid: uuid, metadata: metadata))
}

let appA = AppRegistration(bundleIdentifier: "com.example.a", name: "A", readPurpose: "read", sharePurpose: "share")
let appB = AppRegistration(bundleIdentifier: "com.example.b", name: "B", readPurpose: "read", sharePurpose: "share")

extension Ledger {
    /// Registers an app and grants it share (and read) for types.
    func grant(_ app: AppRegistration, share: [ObjectType], read: [ObjectType] = []) async throws {
        try await append(.registerApp(app))
        var decisions: [(type: ObjectType, share: Answer?, read: Answer?)] = []
        for t in Set(share).union(read).sorted() {
            decisions.append((t, share.contains(t) ? .granted : nil, read.contains(t) ? .granted : nil))
        }
        try await append(.decideAuthorization(bundleIdentifier: app.bundleIdentifier, decisions: decisions, basis: .owner))
    }
}
