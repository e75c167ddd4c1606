import Foundation
import Testing
import HealthLedger; import HealthModel; import LedgerCore; import LedgerLog
import TestSupport

/// The README's "API in ten lines", run as written (on a temporary folder), so the
/// example cannot rot.
struct ReadmeExampleTests {
    @Test func theTenLinesWork() async throws {
        let folder = TemporaryDirectory()
        // --- the README's lines, with "my.ledger" → folder.path ---
        let ledger = try Ledger.create(PosixFileSystem(path: folder.path))
        let scale = AppRegistration(bundleIdentifier: "com.example.scale", name: "Scale",
                                    readPurpose: "Shows your weight trend.", sharePurpose: "Saves your weighings.")
        let app = try await HealthStore(ledger: ledger, app: scale)
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [.quantity(.bodyMass)])
        try await OwnerStore(ledger: ledger).grantRequested(app: scale.bundleIdentifier)   // the person says yes
        try await app.save(.quantity(try QuantitySample(type: .bodyMass, quantity: try Quantity(154, unit: "lb"), start: Date(), end: Date())))
        let latest = try await app.mostRecentSample(for: .quantity(.bodyMass))   // 154 lb, from com.example.scale
        try await ledger.close()
        // --- end of the README's lines ---
        guard case .quantity(let sample)? = latest else { Issue.record("no sample: \(String(describing: latest))"); return }
        #expect(sample.quantity == (try Quantity(154, unit: "lb")))
        #expect(sample.source?.bundleIdentifier == "com.example.scale")
        let readme = try String(contentsOf: SharedData.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("let latest = try await app.mostRecentSample(for: .quantity(.bodyMass))   // 154 lb, from com.example.scale"))
        #expect(try LedgerVerifier.verify(PosixFileSystem(path: folder.path)).isIntact)
    }
}
