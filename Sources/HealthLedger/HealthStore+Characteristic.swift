import Foundation
import HealthModel
import LedgerCore

extension HealthStore {
    /// Any characteristic by type, as this app may read it: nil when not set or not
    /// readable (the two look the same, as in HealthKit). The typed readers
    /// (`dateOfBirthComponents()`, `biologicalSex()`, …) are HealthKit's own shapes.
    public func characteristic(_ type: CharacteristicType) async throws -> CharacteristicValue? {
        try await read { $0.characteristic(type) }
    }
}
