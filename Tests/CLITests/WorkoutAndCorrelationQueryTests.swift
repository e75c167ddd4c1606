import Foundation
import Testing
import TestSupport

/// `query workout --sort duration|energy|distance` and `query CORRELATION --member`.
struct WorkoutAndCorrelationQueryTests {
    @Test func workoutsSortByTheirTotals() throws {
        let dir = TemporaryDirectory()
        func run(_ args: [String]) throws -> CLIResult { try CLIRunner.run(["--ledger", dir.path] + args) }
        for args in [["init"], ["app", "register", "--app", "com.a", "--name", "A", "--share-purpose", "s", "--read-purpose", "r"],
                     ["--app", "com.a", "request", "--share", "workout,activeEnergyBurned", "--read", "workout"],
                     ["authorize", "--app", "com.a", "--share", "workout,activeEnergyBurned", "--read", "workout"]] {
            #expect(try run(args).status == 0)
        }
        var ids: [String] = []
        for extra in [["--start", "2026-03-01T08:00:00Z", "--end", "2026-03-01T09:00:00Z", "--energy", "300", "kcal", "--distance", "5", "km"],
                      ["--start", "2026-03-01T10:00:00Z", "--end", "2026-03-01T10:30:00Z", "--distance", "6000", "m"],
                      ["--start", "2026-03-01T11:00:00Z", "--end", "2026-03-01T11:20:00Z", "--energy", "100", "kcal"]] {
            let r = try run(["workout", "save", "--app", "com.a", "--activity", "running"] + extra)
            #expect(r.status == 0)
            ids.append(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        func order(_ sort: String, ascending: Bool) throws -> [String] {
            let r = try run(["query", "--owner", "workout", "--sort", sort] + (ascending ? ["--ascending"] : []))
            #expect(r.status == 0)
            return r.stdout.split(separator: "\n").map { String($0.prefix(36)) }
        }
        // a missing total is smallest: first ascending, last descending
        for (sort, ascending) in [("duration", [2, 1, 0]), ("energy", [1, 2, 0]), ("distance", [2, 0, 1])] {
            #expect(try order(sort, ascending: true) == ascending.map { ids[$0] }, "\(sort)")
            #expect(try order(sort, ascending: false) == ascending.reversed().map { ids[$0] }, "\(sort)")
        }
        let steps = try run(["query", "--owner", "stepCount", "--sort", "energy"])
        #expect(steps.status == 2)
        #expect(steps.stderr == "healthledger: usage: --sort energy applies to workouts only\n")
        let bad = try run(["query", "--owner", "workout", "--sort", "pace"])
        #expect(bad.status == 2)
        #expect(bad.stderr == "healthledger: usage: --sort takes start, end, duration, energy or distance\n")
    }

    @Test func correlationsByMemberPredicates() throws {
        let dir = TemporaryDirectory("work")
        try SmallExport.write(in: dir.path)
        let ledger = ["--ledger", dir.url.appendingPathComponent("L").path]
        func run(_ args: [String]) throws -> CLIResult { try CLIRunner.run(ledger + args, currentDirectory: dir.url) }
        #expect(try run(["import-apple-health", "export.xml"]).status == 0)
        for args in [["app", "register", "--app", "com.r", "--name", "R", "--share-purpose", "s", "--read-purpose", "r"],
                     ["--app", "com.r", "request", "--read", "bloodPressureSystolic"],
                     ["authorize", "--app", "com.r", "--read", "bloodPressureSystolic"]] {
            #expect(try run(args).status == 0)
        }
        func lines(_ args: [String]) throws -> [String] {
            let r = try run(["query"] + args + ["--json"])
            #expect(r.status == 0, "\(r.stderr)")
            return r.stdout.split(separator: "\n").map(String.init)
        }
        // the export's one blood pressure: 120/80 mmHg
        #expect(try lines(["--owner", "bloodPressure", "--member", "bloodPressureSystolic: value > 110 mmHg"]).count == 1)
        #expect(try lines(["--owner", "bloodPressure", "--member", "bloodPressureSystolic: value > 110 mmHg",
                           "--member", "bloodPressureDiastolic: value >= 85 mmHg"]).isEmpty)
        #expect(try lines(["--owner", "bloodPressure", "--member", "bloodPressureSystolic:value > 130 mmHg"]).isEmpty)
        // an app reading systolic only: matches through systolic, never through diastolic
        let seen = try lines(["--app", "com.r", "bloodPressure", "--member", "bloodPressureSystolic: value > 110 mmHg"])
        #expect(seen.count == 1)
        #expect(seen.first?.contains("BloodPressureSystolic") == true)
        #expect(seen.first?.contains("Diastolic") == false)
        #expect(try lines(["--app", "com.r", "bloodPressure", "--member", "bloodPressureDiastolic: value < 100 mmHg"]).isEmpty)
        for (args, message) in [
            (["bloodPressure", "--member", "stepCount: value > 1"], "--member: stepCount is not a member type of bloodPressure"),
            (["bloodPressure", "--member", "bloodPressureSystolic value > 1"],
             "--member takes 'MEMBERTYPE: EXPR', e.g. 'dietaryEnergyConsumed: value > 500 kcal'"),
            (["bloodPressure", "--member", "bloodPressureSystolic: value > 2 kg"],
             "--member bloodPressureSystolic: column 12: unit 'kg' does not fit bloodPressureSystolic (mmHg)"),
            (["stepCount", "--member", "bloodPressureSystolic: value > 1 mmHg"],
             "--member applies to correlation types (food, bloodPressure)"),
        ] {
            let r = try run(["query", "--owner"] + args)
            #expect(r.status == 2)
            #expect(r.stderr == "healthledger: usage: \(message)\n")
        }
    }
}
