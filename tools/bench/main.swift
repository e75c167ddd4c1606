import Foundation

/// healthledger-bench: benchmarks for HealthLedger, run from release builds.
/// See tools/README.md; `tools/bench.sh` runs them with the peers.
let usage = """
    USAGE: healthledger-bench [--json] SUITE...
    SUITES: units
    """
var arguments = Array(CommandLine.arguments.dropFirst())
let json = arguments.contains("--json")
arguments.removeAll { $0 == "--json" }
if arguments.isEmpty || arguments.contains("--help") {
    print(usage)
    exit(arguments.isEmpty ? 2 : 0)
}
let report = Report(json: json)
for suite in arguments {
    switch suite {
    case "units": try UnitBench.run(report: report)
    default:
        FileHandle.standardError.write(Data("unknown suite \(suite)\n\(usage)\n".utf8))
        exit(2)
    }
}
