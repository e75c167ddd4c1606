// swift-tools-version:6.2
// HealthLedger: HealthKit's central repository as an append-only, tamper-evident
// event log. No package dependencies, by design: everything below is ours.
// A target's dependencies are exactly the modules its Swift files import (a test target
// may also depend on an executable it runs); ModuleGraphTests reads this file's text to
// check that, so dependencies stay lists of "Name" literals.
import PackageDescription
import Foundation

/// `HEALTHLEDGER_POSTGRES=1` adds the PostgreSQL log store (libpq, from `libpq-dev`)
/// and the `postgres://` scheme of `healthledger`. Without it nothing here needs libpq.
let withPostgres = ProcessInfo.processInfo.environment["HEALTHLEDGER_POSTGRES"] == "1"
/// The define that turns the `postgres://` scheme on where ledgers are opened (LedgerTools).
let postgresSwitch: [SwiftSetting] = withPostgres ? [.define("HEALTHLEDGER_POSTGRES")] : []

/// Strict memory safety checking (SE-0458): every use of an unsafe construct (pointers,
/// unchecked conversions) must be marked `unsafe`. On for the targets that build
/// warning-free with it; the byte-level ones (checksums, log, event codecs, importer,
/// CLI) are built on pointer loops and are not yet (DESIGN.md, "Memory safety").
let strictMemorySafety: [SwiftSetting] = [.strictMemorySafety()]

let package = Package(
    name: "HealthLedger",
    // Products: what a client outside this package may import. LedgerCore's public part
    // (the store API's values) comes through HealthLedger; the rest of it, and all of
    // LedgerReporting, is `package` — for this package's front ends and tools only.
    products: [
        .library(name: "HealthModel", targets: ["HealthModel"]),
        .library(name: "LedgerChecksums", targets: ["LedgerChecksums"]),
        .library(name: "LedgerLog", targets: ["LedgerLog"]),
        .library(name: "HealthLedger", targets: ["HealthLedger"]),
        .library(name: "AppleHealthImport", targets: ["AppleHealthImport"]),
        .library(name: "HealthReport", targets: ["HealthReport"]),
        .library(name: "LedgerHTTP", targets: ["LedgerHTTP"]),
        .executable(name: "healthledger", targets: ["healthledger"]),
    ],
    targets: [
        // Layer 1: the health data model. Pure values, no I/O.
        .target(name: "HealthModel", swiftSettings: strictMemorySafety),

        // Hardware CRC32C and SHA-256 behind runtime CPU checks (software fallbacks in LedgerChecksums).
        .target(name: "CLedgerAccel"),
        // Checksums and hashes: CRC-32C (the log's records), CRC-32 (zip), SHA-256. Pure
        // functions over bytes, shared by the log and the importer.
        .target(name: "LedgerChecksums", dependencies: ["CLedgerAccel"]),
        // ChaCha20-Poly1305 AEAD (RFC 8439), for sealing event payloads under per-subject
        // keys (crypto-shredding). Pure functions over bytes; imports only Glibc (entropy).
        .target(name: "LedgerCrypto", dependencies: ["CLedgerAccel"], swiftSettings: strictMemorySafety),
        // The data keys of crypto-shredding (issue 32): the key store (`keys/keys.bin`,
        // one key per source, type and UTC month, sealed under the owner's key-encryption
        // key) and the key-encryption-key file. Knows nothing of events.
        .target(name: "LedgerKeys", dependencies: ["LedgerCrypto", "LedgerChecksums"], swiftSettings: strictMemorySafety),
        // Layer 2: the event log. Bytes, framing, checksums, the hash chain, fsync,
        // recovery. Knows nothing of health.
        .target(name: "LedgerLog", dependencies: ["LedgerChecksums", "LedgerCrypto", "CLedgerAccel"]),

        // Layer 3: events and projections. Event codecs, the rules, projections,
        // replay, snapshots, verify, queries.
        .target(name: "LedgerCore", dependencies: ["HealthModel", "LedgerChecksums", "LedgerCrypto", "LedgerKeys", "LedgerLog", "CLedgerAccel"]),

        // Beside layer 3: JSON and text for people and scripts (samples, events, replay
        // reports, audits); the CLI and the importer's summary print through it.
        .target(name: "LedgerReporting", dependencies: ["HealthModel", "LedgerLog", "LedgerCore"],
                swiftSettings: strictMemorySafety),

        // Layer 4: the store API: HKHealthStore's behaviour for apps, and the owner's handle.
        .target(name: "HealthLedger", dependencies: ["HealthModel", "LedgerLog", "LedgerCore", "LedgerReporting"],
                swiftSettings: strictMemorySafety),

        // Layer 4, beside the store: Apple Health exports (zip, DEFLATE, XML) into ledger events.
        .target(name: "AppleHealthImport", dependencies: ["HealthModel", "LedgerChecksums", "LedgerLog", "LedgerCore", "LedgerReporting",
                                                         "CLedgerAccel"]),

        // Beside the store: the HTML health and audit report, with its own SVG chart code
        // (Charts/: pure values to SVG text, no I/O); reads through the store API.
        .target(name: "HealthReport", dependencies: ["HealthModel", "LedgerLog", "LedgerCore", "HealthLedger"],
                swiftSettings: strictMemorySafety),

        // Health Auto Export's JSON pushes (an iPhone app's REST automation) mapped to
        // HealthKit samples, identity from content. Pure values, no I/O.
        .target(name: "HealthAutoExport", dependencies: ["HealthModel", "LedgerChecksums", "LedgerReporting"]),

        // The ledger as a service: routes, credentials, the access log, over the store
        // API (HealthLedger) and LedgerHTTP; the second front end beside the CLI.
        .target(name: "LedgerServer", dependencies: ["LedgerHTTP", "HealthModel", "HealthLedger", "LedgerReporting",
                                                     "HealthReport", "HealthAutoExport"]),

        // HTTP/1.1 on POSIX sockets (epoll, one event-loop thread, handlers as Swift
        // tasks): the request parser, the response writer, limits. Knows nothing of health.
        .target(name: "LedgerHTTP", dependencies: ["CLinuxEvents"]),
        // Linux's epoll and eventfd headers (libc; Swift's Glibc module lacks them).
        .systemLibrary(name: "CLinuxEvents"),

        // Beside the store: the owner's tools over a ledger's files, for the front ends —
        // where a location is, reading without the lock and what a read must tell after
        // (rules S8, E11), the transparency log's checkpoints, proofs and keys, the event
        // listing. The CLI parses, calls these and the store API, and prints.
        .target(name: "LedgerTools", dependencies: ["HealthModel", "LedgerChecksums", "LedgerKeys", "LedgerLog", "LedgerCore", "LedgerReporting", "HealthLedger", "AppleHealthImport"] + (withPostgres ? ["LedgerPostgres"] : []),
                swiftSettings: postgresSwitch),

        // The command-line tool.
        .executableTarget(name: "healthledger",
                          dependencies: ["CLedgerAccel", "HealthModel", "LedgerReporting", "HealthLedger", "AppleHealthImport",
                                         "HealthReport", "LedgerHTTP", "LedgerServer", "LedgerTools"]),

        // Benchmarks (release builds only; see tools/README.md).
        .executableTarget(name: "healthledger-bench", dependencies: ["HealthModel", "LedgerChecksums", "LedgerLog", "LedgerCore", "AppleHealthImport",
                                                                   "LedgerFuzz"],
                          path: "tools/bench"),
        // The structured fuzzers (event payloads, unit strings, dates): `healthledger-bench fuzz`, and seeded in tests.
        .target(name: "LedgerFuzz", dependencies: ["HealthModel", "LedgerChecksums", "LedgerLog", "LedgerCore", "TestSupport"], path: "tools/fuzz",
                swiftSettings: strictMemorySafety),
        // The key store's benchmark (a release build of it alone: `swift run -c release keys-bench`).
        .executableTarget(name: "keys-bench", dependencies: ["LedgerKeys"], path: "tools/keys-bench"),
        // A second process for crash and lock tests, and manual soak runs.
        .executableTarget(name: "ledger-torture", dependencies: ["LedgerLog", "TestSupport"], path: "tools/ledger-torture"),

        // Shared test support: the simulated disk, seeded randomness, temporary folders.
        .target(name: "TestSupport", dependencies: ["LedgerLog", "LedgerCore", "HealthModel", "LedgerHTTP"], path: "Tests/TestSupport"),
        .testTarget(name: "LedgerHTTPTests", dependencies: ["LedgerHTTP", "TestSupport"]),
        .testTarget(name: "LedgerServerTests", dependencies: ["LedgerServer", "LedgerHTTP", "HealthLedger", "HealthModel", "TestSupport"]),
        .testTarget(name: "LedgerCryptoTests", dependencies: ["LedgerCrypto", "CLedgerAccel"], swiftSettings: strictMemorySafety),
        .testTarget(name: "LedgerKeysTests", dependencies: ["LedgerKeys", "LedgerCrypto"], swiftSettings: strictMemorySafety),
        .testTarget(name: "HealthModelTests", dependencies: ["HealthModel", "TestSupport"], swiftSettings: strictMemorySafety),
        // Also ModuleGraphTests: this file, the imports and DESIGN.md's module graph agree.
        .testTarget(name: "LedgerLogTests", dependencies: ["LedgerChecksums", "LedgerCrypto", "LedgerLog", "TestSupport", "ledger-torture"]),
        .testTarget(name: "LedgerCoreTests", dependencies: ["HealthModel", "LedgerChecksums", "LedgerKeys", "LedgerLog", "LedgerCore",
                                                            "LedgerReporting", "TestSupport", "LedgerFuzz"]),
        .testTarget(name: "HealthLedgerTests", dependencies: ["HealthLedger", "HealthModel", "LedgerCore", "LedgerLog", "LedgerReporting",
                                                             "TestSupport"],
                    swiftSettings: strictMemorySafety),
        .testTarget(name: "HealthReportTests", dependencies: ["HealthReport", "HealthLedger", "LedgerCore", "HealthModel", "TestSupport"],
                    swiftSettings: strictMemorySafety),
        // Fixtures/ holds DEFLATE and zip files made by Python (tools/make_deflate_fixtures.py),
        // read through #filePath.
        .testTarget(name: "AppleHealthImportTests",
                    dependencies: ["AppleHealthImport", "LedgerCore", "LedgerReporting", "LedgerChecksums", "LedgerLog", "HealthModel",
                                   "TestSupport"],
                    exclude: ["Fixtures"]),
        // Runs the built `healthledger` binary (the dependency makes sure it is built).
        // Also imports the executable (@testable) and its parsers for the in-process fuzzer.
        .testTarget(name: "CLITests", dependencies: ["healthledger", "ledger-torture", "TestSupport", "LedgerChecksums", "LedgerLog",
                                                     "AppleHealthImport", "HealthModel", "LedgerReporting", "HealthLedger"]),
    ] + (withPostgres ? postgresTargets : []),
    swiftLanguageModes: [.v6]
)

/// The PostgreSQL log store and its tests: only with `HEALTHLEDGER_POSTGRES=1`.
var postgresTargets: [Target] {
    [
        // libpq's C API (`libpq-fe.h`), linked from the system (Debian: libpq-dev).
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // Layer 2, beside the file system: the log's bytes in a PostgreSQL table of batches.
        .target(name: "LedgerPostgres", dependencies: ["LedgerLog", "LedgerKeys", "CLibPQ"]),
        // Runs only against a server named by HEALTHLEDGER_TEST_POSTGRES (tools/pg_test.sh starts one).
        .testTarget(name: "LedgerPostgresTests",
                    dependencies: ["LedgerPostgres", "LedgerChecksums", "LedgerLog", "TestSupport", "healthledger"]),
    ]
}
