import Foundation

/// healthledger-bench: benchmarks for HealthLedger, run from release builds.
/// See tools/README.md; `tools/import_bench.sh` runs the import against its peers.
let usage = """
    USAGE: healthledger-bench [--json] SUITE...
    SUITES: units | log | replay | inflate | xmlscan | exportpass | fuzz-events | fuzz-inputs | merkle
      exportpass: the importer's pass over --xml alone (scan, map, encode; no ledger), --runs N times:
      wall and the mapping thread's CPU time, best and median (the import's critical path)
      fuzz-events: mutated event payloads, re-framed and re-chained; open, replay and verify must agree
      fuzz-inputs: unit strings and ISO 8601 dates must parse and round-trip or be refused with a typed error
      (--cases N, default 100000; --seed S, default 17; exits 1 on any disagreement or finding)
    OPTIONS: --scratch DIR (default tools/scratch), --records N (default 1000000), --durable N (default 20000),
             --sizes 100,1024 (log payload sizes), --no-peers (skip the SQLite/Python peers),
             --events N (replay suite, default 10000000),
             --zip PATH (inflate suite, default tools/scratch/big.zip), --xml PATH (xmlscan suite, default tools/scratch/big.xml)
    Run from the repository root with a release build: swift run -c release healthledger-bench log
    """
var arguments = Array(CommandLine.arguments.dropFirst())
let json = arguments.contains("--json")
arguments.removeAll { $0 == "--json" }
if arguments.isEmpty || arguments.contains("--help") {
    print(usage)
    exit(arguments.isEmpty ? 2 : 0)
}
@MainActor func option(_ name: String, _ fallback: String) -> String {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count else { return fallback }
    let value = arguments[i + 1]
    arguments.removeSubrange(i...i + 1)
    return value
}
let scratch = option("--scratch", "tools/scratch")
let records = Int(option("--records", "1000000")) ?? 1_000_000
let durableCount = Int(option("--durable", "20000")) ?? 20_000
let sizes = option("--sizes", "100,1024").split(separator: ",").compactMap { Int($0) }
let events = Int(option("--events", "10000000")) ?? 10_000_000
let zipPath = option("--zip", "tools/scratch/big.zip")
let xmlPath = option("--xml", "tools/scratch/big.xml")
let fuzzCases = Int(option("--cases", "100000")) ?? 100_000
let runs = Int(option("--runs", "5")) ?? 5
let fuzzSeed = UInt64(option("--seed", "17")) ?? 17
let peers = !arguments.contains("--no-peers")
arguments.removeAll { $0 == "--no-peers" }
try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
let report = Report(json: json)
for suite in arguments {
    switch suite {
    case "units": try UnitBench.run(report: report)
    case "fuzz-events": await FuzzSuite.events(seed: fuzzSeed, cases: fuzzCases)
    case "fuzz-inputs": FuzzSuite.inputs(seed: fuzzSeed, cases: fuzzCases)
    case "inflate": try ImportBench.inflate(report: report, zipPath: zipPath)
    case "xmlscan": try ImportBench.scan(report: report, xmlPath: xmlPath)
    case "exportpass": try ImportBench.pass(report: report, xmlPath: xmlPath, runs: runs)
    case "replay": try await ReplayBench.run(report: report, scratch: scratch, events: events, peers: peers)
    case "log": try await LogBench.run(report: report, scratch: scratch, records: records, durableCount: durableCount,
                                       sizes: sizes, peers: peers)
    case "merkle": try await MerkleBench.run(report: report, scratch: scratch, records: records, durableCount: durableCount)
    default:
        FileHandle.standardError.write(Data("unknown suite \(suite)\n\(usage)\n".utf8))
        exit(2)
    }
}
