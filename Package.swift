// swift-tools-version:6.0
// HealthLedger: HealthKit's central repository as an append-only, tamper-evident
// event log. No package dependencies, by design: everything below is ours.
import PackageDescription

let package = Package(
    name: "HealthLedger",
    products: [
        .library(name: "HealthModel", targets: ["HealthModel"]),
        .executable(name: "healthledger", targets: ["healthledger"]),
    ],
    targets: [
        // Layer 1: the health data model. Pure values, no I/O.
        .target(name: "HealthModel"),

        // The command-line tool.
        .executableTarget(name: "healthledger", dependencies: ["HealthModel"]),

        // Benchmarks (release builds only; see tools/README.md).
        .executableTarget(name: "healthledger-bench", dependencies: ["HealthModel"], path: "tools/bench"),

        .testTarget(name: "HealthModelTests", dependencies: ["HealthModel"]),
        // Runs the built `healthledger` binary (the dependency makes sure it is built).
        .testTarget(name: "CLITests", dependencies: ["healthledger"]),
    ],
    swiftLanguageModes: [.v6]
)
