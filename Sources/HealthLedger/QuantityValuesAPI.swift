import Foundation
import HealthModel
import LedgerCore

extension HealthStore {
    /// The quantity samples of `type` matching `predicate` that this app may see (without
    /// read permission: its own only), as the statistics projection holds them — interval,
    /// value in the type's canonical unit, source — in start order, without decoding a
    /// sample from the log.
    public func quantityValues(for type: QuantityType, predicate: DatePredicate? = nil) async throws -> [StatisticsEntry] {
        let bundle = app.bundleIdentifier
        return try await ledger.read { state throws -> [StatisticsEntry] in
            guard let ordinal = state.registry.ordinal(of: bundle) else {
                throw HealthStoreError.invalidArgument("\(bundle) is not registered")
            }
            return try StatisticsQuery.values(type: type, predicate: predicate,
                                              visibility: state.visibility(app: ordinal, type: .quantity(type)), in: &state)
        }
    }
}

extension OwnerStore {
    /// Every source's quantity samples of `type` (see `HealthStore.quantityValues`).
    public func quantityValues(for type: QuantityType, predicate: DatePredicate? = nil) async throws -> [StatisticsEntry] {
        try await ledger.read { state in
            try StatisticsQuery.values(type: type, predicate: predicate, visibility: .everything, in: &state)
        }
    }
}
