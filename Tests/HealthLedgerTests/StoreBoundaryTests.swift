import Foundation
import Testing
import TestSupport

/// What code handed an app's `HealthStore` can reach: a client compiled
/// against `import HealthLedger` alone, with the modules this build made, may call
/// the store's API but cannot reach the ledger behind it — so it cannot append a grant
/// for its own app. The compiler is the judge: each client is type-checked by `swiftc`.
struct StoreBoundaryTests {
    /// The folder of this build's products (the test bundle's own folder): its
    /// `Modules/` and the C targets' module maps.
    static let products = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    static let swiftc: String? = {
        guard let r = try? ChildProcess.run("/usr/bin/env", ["sh", "-c", "command -v swiftc"]), r.status == 0 else { return nil }
        let path = r.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        return path.isEmpty ? nil : path
    }()

    /// Type-checks `source` as a client of this build's `HealthLedger` module.
    static func typecheck(_ source: String) throws -> ChildProcess.Result {
        let dir = TemporaryDirectory("client")
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        let file = dir.path + "/client.swift"
        try source.write(toFile: file, atomically: true, encoding: .utf8)
        let maps = try FileManager.default.contentsOfDirectory(atPath: products.path)
            .filter { $0.hasSuffix(".build") }
            .map { products.path + "/" + $0 + "/module.modulemap" }
            .filter { FileManager.default.fileExists(atPath: $0) }
        let arguments = ["-typecheck", "-swift-version", "6", "-I", products.path + "/Modules"]
            + maps.flatMap { ["-Xcc", "-fmodule-map-file=" + $0] } + [file]
        return try ChildProcess.run(swiftc!, arguments, timeout: 300)
    }

    @Test(.enabled(if: swiftc != nil, "swiftc is not on PATH: the clients cannot be compiled"))
    func aClientOfTheStoreCannotReachTheLedgerBehindIt() throws {
        #expect(FileManager.default.fileExists(atPath: Self.products.path + "/Modules/HealthLedger.swiftmodule"))
        // The control: the store's own API compiles, so a refusal below is the door, not the setup.
        let allowed = try Self.typecheck("""
            import HealthLedger
            func client(_ store: HealthStore) async throws {
                try await store.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [.quantity(.bodyMass)])
                _ = try await store.authorizationStatus(for: .quantity(.bodyMass))
            }
            """)
        #expect(allowed.status == 0, "\(allowed.stderrText)")
        // The ledger behind the store, to append a grant for the app itself: refused by the compiler.
        let grant = try Self.typecheck("""
            import HealthLedger
            func client(_ store: HealthStore) async throws {
                _ = try await store.ledger.append(.decideAuthorization(bundleIdentifier: store.app.bundleIdentifier,
                                                                        decisions: [], basis: .owner))
            }
            """)
        #expect(grant.status == 1)
        #expect(grant.stderrText.contains("error: 'ledger' is inaccessible due to 'package' protection level"), "\(grant.stderrText)")
    }

    /// Nor can a client that holds the `Ledger` itself (the owner's process) append an
    /// event or touch the engine: the write verbs, commands, events, the raw
    /// projections, the decider, codecs and snapshots are `package`. Each line is
    /// refused on its own, naming what it reached for.
    @Test(.enabled(if: swiftc != nil, "swiftc is not on PATH: the clients cannot be compiled"))
    func aClientOfTheLedgerCannotReachTheWritePathOrRawState() throws {
        let allowed = try Self.typecheck("""
            import HealthLedger
            func client(_ ledger: Ledger) async throws {
                let owner = OwnerStore(ledger: ledger)
                _ = try await owner.execute(SampleQuery(type: .quantity(.bodyMass)))
                _ = try await ledger.read(as: .owner) { view in view.ownerTimeZone }
                try await ledger.close()
            }
            """)
        #expect(allowed.status == 0, "\(allowed.stderrText)")
        let reaches: [(code: String, refusal: String)] = [
            ("_ = try await ledger.append(.setOwnerTimeZone(\"UTC\"))", "error: 'append' is inaccessible due to 'package' protection level"),
            ("_ = try await ledger.appendBestEffort([])", "error: 'appendBestEffort' is inaccessible due to 'package' protection level"),
            ("_ = await ledger.state", "error: 'state' is inaccessible due to 'package' protection level"),
            ("_ = LedgerState()", "error: cannot find 'LedgerState' in scope"),
            ("_ = LedgerDecider.self", "error: cannot find 'LedgerDecider' in scope"),
            ("_ = LedgerCommand.self", "error: cannot find 'LedgerCommand' in scope"),
            ("_ = Event.self", "error: cannot find 'Event' in scope"),
            ("_ = EventCodec.self", "error: cannot find 'EventCodec' in scope"),
            ("_ = SnapshotFile.self", "error: cannot find 'SnapshotFile' in scope"),
            ("_ = StatisticsEngine.self", "error: cannot find 'StatisticsEngine' in scope"),
            ("_ = ledger.fs", "error: 'fs' is inaccessible due to 'package' protection level"),
        ]
        for reach in reaches {
            let r = try Self.typecheck("""
                import HealthLedger
                func client(_ ledger: Ledger) async throws {
                    \(reach.code)
                }
                """)
            #expect(r.status == 1, "\(reach.code) compiled")
            #expect(r.stderrText.contains(reach.refusal), "\(reach.code): \(r.stderrText)")
        }
    }
}
