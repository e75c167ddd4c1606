import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerLog
import TestSupport

/// Rules E13 (the importer's namespace) and E14 (a new app's bundle identifier):
/// checked when the store appends, through the ledger's own API (so no front end can
/// go around them), and not when a log written before them is read.
struct AppendRulesTests {
    static let source = AppRegistration(bundleIdentifier: "export:Connect", name: "Connect", readPurpose: nil, sharePurpose: nil,
                                        imported: true)
    static let registeringOutside = "only an import registers or renames an app named export:NAME or marks an app imported (the importer's sources)"

    static func imported(_ n: Int) throws -> Sample {
        try quantitySample(.stepCount, 11_038, "count", at: "2026-02-01T08:00:00Z", to: "2026-02-01T20:00:00Z", uuid: fixedUUID(n))
    }

    /// The import's body: its source, the grant on an imported basis, one step count.
    static func importBody(_ n: Int) throws -> [LedgerCommand] {
        [.registerApp(source),
         .decideAuthorization(bundleIdentifier: source.bundleIdentifier, decisions: [(.quantity(.stepCount), .granted, nil)],
                              basis: .imported),
         .save(bundleIdentifier: source.bundleIdentifier, samples: [try imported(n)])]
    }

    /// E13: outside an import nobody registers an `export:` app or an
    /// imported one; after an import, nobody renames its source, flips its flag, or
    /// saves, deletes or asks as it — and nothing is appended when refused.
    @Test func e13OnlyAnImportRegistersRenamesOrActsAsAnExportSource() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.stepCount)])
        let start = await ledger.state.lastSequence
        await #expect(throws: RuleViolation.reservedForImports("export:Connect: \(Self.registeringOutside)")) {
            try await ledger.append(.registerApp(Self.source))
        }
        let plain = AppRegistration(bundleIdentifier: "export:Connect", name: "Connect", readPurpose: "r", sharePurpose: "s")
        await #expect(throws: RuleViolation.reservedForImports("export:Connect: \(Self.registeringOutside)")) {
            try await ledger.append(.registerApp(plain))
        }
        let flagged = AppRegistration(bundleIdentifier: "com.example.sneaky", name: "S", readPurpose: nil, sharePurpose: nil, imported: true)
        await #expect(throws: RuleViolation.reservedForImports("com.example.sneaky: \(Self.registeringOutside)")) {
            try await ledger.append(.registerApp(flagged))
        }
        #expect(await ledger.state.lastSequence == start)

        // An import does all of it.
        try await ledger.importing(try Self.importBody(1), importId: fixedUUID(90))
        let registry = await ledger.state.registry
        #expect(registry.registration(try #require(registry.ordinal(of: "export:Connect"))) == Self.source)
        // ... and names its sources `export:NAME`, marked imported, both or neither
        await #expect(throws: RuleViolation.reservedForImports("export:Other: an import's sources are named export:NAME and marked imported, both or neither")) {
            try await ledger.importing([.registerApp(AppRegistration(bundleIdentifier: "export:Other", name: "Other", readPurpose: nil,
                                                                     sharePurpose: nil))], importId: fixedUUID(91))
        }

        // Afterwards the source is the import's alone.
        let after = await ledger.state.lastSequence
        let evil = AppRegistration(bundleIdentifier: "export:Connect", name: "Evil", readPurpose: "r", sharePurpose: "s")
        await #expect(throws: RuleViolation.reservedForImports("export:Connect: \(Self.registeringOutside)")) {
            try await ledger.append(.registerApp(evil))
        }
        let unflagged = AppRegistration(bundleIdentifier: "export:Connect", name: "Connect", readPurpose: nil, sharePurpose: nil)
        await #expect(throws: RuleViolation.reservedForImports("export:Connect: \(Self.registeringOutside)")) {
            try await ledger.append(.registerApp(unflagged))
        }
        let asSource = "export:Connect is an imported source: only an import"
        await #expect(throws: RuleViolation.reservedForImports("\(asSource) saves samples as it")) {
            try await ledger.append(.save(bundleIdentifier: "export:Connect", samples: [try Self.imported(2)]))
        }
        await #expect(throws: RuleViolation.reservedForImports("\(asSource) deletes samples as it")) {
            try await ledger.append(.delete(bundleIdentifier: "export:Connect", uuids: [fixedUUID(1)], reason: nil))
        }
        await #expect(throws: RuleViolation.reservedForImports("\(asSource) asks for permissions as it")) {
            try await ledger.append(.requestAuthorization(bundleIdentifier: "export:Connect", share: [.quantity(.heartRate)], read: []))
        }
        await #expect(throws: RuleViolation.reservedForImports("export:Connect: only an import decides on an imported basis")) {
            try await ledger.append(.decideAuthorization(bundleIdentifier: "export:Connect",
                                                          decisions: [(.quantity(.heartRate), .granted, nil)], basis: .imported))
        }
        #expect(await ledger.state.lastSequence == after)
        #expect(RuleViolation.reservedForImports("x").ruleID == "E13")

        // The owner's own acts stay the owner's: answering for the source, deleting its sample.
        try await ledger.append(.decideAuthorization(bundleIdentifier: "export:Connect",
                                                      decisions: [(.quantity(.stepCount), .denied, nil)], basis: .owner))
        try await ledger.append(.delete(bundleIdentifier: nil, uuids: [fixedUUID(1)], reason: "mine to delete"))
        #expect(await ledger.state.samples.deletedCount == 1)
    }

    /// E14: a new app's bundle identifier is HealthKit's kind,
    /// `A–Z a–z 0–9 . -`, at most 255 bytes; an import's `export:NAME` keeps NAME as
    /// the export spells it.
    @Test func e14ANewBundleIdentifierHoldsOnlyWhatHealthKitsDo() async throws {
        let ledger = try makeLedger()
        func register(_ bundle: String) async throws {
            try await ledger.append(.registerApp(AppRegistration(bundleIdentifier: bundle, name: "X", readPurpose: nil, sharePurpose: nil)))
        }
        let allowed = "(A–Z, a–z, 0–9, '.', '-')"
        for (bundle, shown) in [("com.x<y", "'<'"), ("com.example app", "U+20"), ("com.example.\"q\"", "'\"'"), ("com.exämple", "U+E4"),
                                ("com.example\napp", "U+A"), ("com_example", "'_'")] {
            await #expect(throws: RuleViolation.invalidBundleIdentifier(bundle, "holds \(shown), which no bundle identifier does \(allowed)")) {
                try await register(bundle)
            }
        }
        let long = "com." + String(repeating: "a", count: 252)
        await #expect(throws: RuleViolation.invalidBundleIdentifier(long, "has 256 bytes, more than 255")) { try await register(long) }
        #expect(await ledger.state.lastSequence == 0)
        #expect(RuleViolation.invalidBundleIdentifier("a b", "x").description == "invalidBundleIdentifier: 'a b' x [E14]")
        try await register("com.apple.health.0A1B-2C3D")
        try await register(String(long.dropLast()))
        // the importer's namespace: any source name an export holds
        let name = "Bob’s Apple Watch <2>"
        try await ledger.importing([.registerApp(AppRegistration(bundleIdentifier: "export:" + name, name: name, readPurpose: nil,
                                                                 sharePurpose: nil, imported: true))])
        #expect(await ledger.state.registry.ordinal(of: "export:" + name) == 3)
    }

    /// E13 and E14 are checked on append only: a log written before them (an `export:`
    /// app registered and saving outside any import, an app marked imported, a bundle
    /// identifier with a space and a quote) replays, verifies and opens for writing.
    @Test func e13AndE14LeaveLogsWrittenBeforeThemValid() async throws {
        let old = AppRegistration(bundleIdentifier: "export:Connect", name: "Evil", readPurpose: "r", sharePurpose: "s")
        let spaced = AppRegistration(bundleIdentifier: "com.example \"app\"", name: "Spaced", readPurpose: nil, sharePurpose: nil, imported: true)
        let sample = try quantitySample(.stepCount, 5, "count", at: "2026-02-01T08:00:00Z", uuid: fixedUUID(7))
        let fs = try await VerifyTests.tamperedLog([
            .appRegistered(app: 1, old), .appRegistered(app: 2, spaced),
            .authorizationDecided(AuthorizationDecision(app: 1, type: .quantity(.stepCount), share: .granted, read: nil)),
            .samplesSaved(app: 1, samples: [SavedSample(sample)]),
        ])
        let report = try LedgerVerifier.verify(fs)
        #expect(report.isIntact, "\(String(describing: report.eventProblem))")
        let ledger = try Ledger.open(fs)
        #expect(await ledger.state.samples.count == 1)
        #expect(await ledger.state.registry.ordinal(of: "com.example \"app\"") == 2)
        // ... while the store appends nothing more that breaks them
        await #expect(throws: RuleViolation.reservedForImports("export:Connect is an imported source: only an import saves samples as it")) {
            try await ledger.append(.save(bundleIdentifier: "export:Connect",
                                           samples: [try quantitySample(.stepCount, 6, "count", at: "2026-02-02T08:00:00Z")]))
        }
        try await ledger.close()
    }
}
