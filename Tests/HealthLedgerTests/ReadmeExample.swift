import Foundation
import HealthLedger

/// The README's "API in ten lines", compiled with the README's imports and nothing
/// else (one import is the promise). `ReadmeExampleTests` runs it and checks that the
/// README's block and the lines between the markers agree, `"my.ledger"` ↔ `path`.
enum ReadmeExample {
    static func run(path: String) async throws -> Sample? {
        // --- README begin ---
        let ledger = try Ledger.create(path: path)
        let scale = AppRegistration(bundleIdentifier: "com.example.scale", name: "Scale",
                                    readPurpose: "Shows your weight trend.", sharePurpose: "Saves your weighings.")
        let app = try await HealthStore(ledger: ledger, app: scale)
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [.quantity(.bodyMass)])
        try await OwnerStore(ledger: ledger).grantRequested(app: scale.bundleIdentifier)   // the person says yes
        try await app.save(.quantity(try QuantitySample(type: .bodyMass, quantity: try Quantity(154, unit: "lb"), start: Date(), end: Date())))
        let latest = try await app.mostRecentSample(for: .quantity(.bodyMass))   // 154 lb, from com.example.scale
        try await ledger.close()
        // --- README end ---
        return latest
    }
}
