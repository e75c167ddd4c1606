import Foundation
import HealthModel
import LedgerCore

extension HealthStore {
    /// Samples of `types` matching `predicate` that this app may see (as a sample query
    /// of each type shows them), counted per (type, source, device), without decoding
    /// the samples (`SourceDeviceCounts`).
    public func sourceDeviceCounts(for types: [ObjectType], predicate: DatePredicate? = nil) async throws -> [SourceDeviceCount] {
        try await read { try $0.sourceDeviceCounts(for: types, predicate: predicate) }
    }
}

extension OwnerStore {
    /// Every source's samples counted per (type, source, device) (see `HealthStore.sourceDeviceCounts`).
    public func sourceDeviceCounts(for types: [ObjectType], predicate: DatePredicate? = nil) async throws -> [SourceDeviceCount] {
        try await ledger.read(as: .owner) { try $0.sourceDeviceCounts(for: types, predicate: predicate) }
    }
}
