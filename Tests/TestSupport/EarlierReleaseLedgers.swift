import Foundation
import HealthModel
import LedgerCore

/// Ledgers as an earlier release let them be written, for tests of what this release
/// must still read: quantity values beyond today's bounds (1e308 steps
/// were accepted; values read back from a log are never range-checked).
package enum EarlierReleaseLedgers {
    /// The app that saved the values.
    package static let app = AppRegistration(bundleIdentifier: "com.example.earlier", name: "Earlier", readPurpose: "r", sharePurpose: "s")

    /// Creates a ledger at `path` (time zone UTC) where `app` saved `values` — (type,
    /// value in the type's canonical unit, start, end), ISO 8601 — as an earlier release
    /// accepted them: built without today's range check, appended through today's rules.
    package static func create(at path: String, _ values: [(QuantityType, Double, String, String)]) async throws {
        let ledger = try Ledger.create(path: path)
        do {
            try await ledger.append(.setOwnerTimeZone("UTC"))
            try await ledger.append(.registerApp(app))
            let types = Set(values.map { ObjectType.quantity($0.0) }).sorted()
            try await ledger.append(.decideAuthorization(bundleIdentifier: app.bundleIdentifier,
                                                          decisions: types.map { ($0, .granted, .granted) }, basis: .owner))
            let samples = try values.map { type, value, start, end -> Sample in
                let common = try SampleCommon(startDate: try ISO8601.parse(start), endDate: try ISO8601.parse(end))
                return .quantity(try QuantitySample(type: type, quantity: try Quantity(value, type.canonicalUnit), common: common,
                                                    checkingRange: false))
            }
            try await ledger.append(.save(bundleIdentifier: app.bundleIdentifier, samples: samples))
            try await ledger.close()
        } catch {
            ledger.abandon()
            throw error
        }
    }
}
