import Foundation
import HealthModel
import LedgerCore

extension HealthStore {
    /// The quantity samples of `type` matching `predicate` that this app may see (without
    /// read permission: its own only), as the statistics projection holds them — interval,
    /// value in the type's canonical unit, source — in start order, without decoding a
    /// sample from the log.
    public func quantityValues(for type: QuantityType, predicate: DatePredicate? = nil) async throws -> [StatisticsEntry] {
        try await read { try $0.quantityValues(for: type, predicate: predicate) }
    }
}

extension OwnerStore {
    /// Every source's quantity samples of `type` (see `HealthStore.quantityValues`).
    public func quantityValues(for type: QuantityType, predicate: DatePredicate? = nil) async throws -> [StatisticsEntry] {
        try await ledger.read(as: .owner) { try $0.quantityValues(for: type, predicate: predicate) }
    }
}
