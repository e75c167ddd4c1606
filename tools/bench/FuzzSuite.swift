import Foundation
import LedgerFuzz

/// `fuzz-events` and `fuzz-inputs`: the soaks of `tools/fuzz`. They run in this
/// process in chunks of 1,000 cases, printing each chunk's counts as it finishes; a
/// trap kills the process before the final line, so "completed" in the output is
/// the proof that none happened. Exits 1 on any disagreement or finding.
enum FuzzSuite {
    static let chunk = 1_000

    static func events(seed: UInt64, cases: Int) async {
        var total = EventFuzzer.Counts()
        let start = Date()
        var done = 0
        while done < cases {
            let n = min(chunk, cases - done)
            let counts = await EventFuzzer.run(seed: seed &+ UInt64(done), cases: n)
            total.add(counts)
            done += n
            for d in counts.disagreements { print("DISAGREEMENT \(d)") }
            FileHandle.standardError.write(Data("fuzz-events: \(done)/\(cases) \(total)\n".utf8))
        }
        print("fuzz-events completed: seed=\(seed) \(total) in \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
        if !total.disagreements.isEmpty { exit(1) }
    }

    static func inputs(seed: UInt64, cases: Int) {
        let start = Date()
        var units = InputFuzzer.Counts(), dates = InputFuzzer.Counts()
        var done = 0
        while done < cases {
            let n = min(chunk, cases - done)
            units.add(InputFuzzer.units(seed: seed &+ UInt64(done), cases: n))
            dates.add(InputFuzzer.dates(seed: seed &+ UInt64(done), cases: n))
            done += n
        }
        for f in units.findings + dates.findings { print("FINDING \(f)") }
        print("fuzz-inputs completed: seed=\(seed) units: \(units)")
        print("fuzz-inputs completed: seed=\(seed) dates: \(dates) in \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
        if !units.findings.isEmpty || !dates.findings.isEmpty { exit(1) }
    }
}
