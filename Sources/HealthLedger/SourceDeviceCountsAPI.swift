import Foundation
import HealthModel
import LedgerCore

extension HealthStore {
    /// Samples of `types` matching `predicate` that this app may see (as a sample query
    /// of each type shows them), counted per (type, source, device), without decoding
    /// the samples (`SourceDeviceCounts`).
    public func sourceDeviceCounts(for types: [ObjectType], predicate: DatePredicate? = nil) async throws -> [SourceDeviceCount] {
        let bundle = app.bundleIdentifier
        let fs = ledger.fs
        return try await ledger.read { state throws -> [SourceDeviceCount] in
            guard let ordinal = state.registry.ordinal(of: bundle) else {
                throw HealthStoreError.invalidArgument("\(bundle) is not registered")
            }
            return try SourceDeviceCounts.count(types: types, predicate: predicate, visibility: { $1.visibility(app: ordinal, type: $0) },
                                                fs: fs, in: &state)
        }
    }
}

extension OwnerStore {
    /// Every source's samples counted per (type, source, device) (see `HealthStore.sourceDeviceCounts`).
    public func sourceDeviceCounts(for types: [ObjectType], predicate: DatePredicate? = nil) async throws -> [SourceDeviceCount] {
        let fs = ledger.fs
        return try await ledger.read { state in
            try SourceDeviceCounts.count(types: types, predicate: predicate, visibility: { _, _ in .everything }, fs: fs, in: &state)
        }
    }
}
