import Foundation
import Testing
import TestSupport

/// Input that was accepted quietly and meant something else (or
/// nothing) is refused, naming what is wrong.
struct QuietAcceptanceCommandTests {
    /// Heart rates 60 and 120 count/min (com.example.hr) and steps 60, 120, 100.
    static func ledger() throws -> TemporaryDirectory { try StatisticsCommandTests.ledger() }

    static func run(_ dir: TemporaryDirectory, _ args: [String], stdin: String? = nil) throws -> CLIResult {
        try CLIRunner.run(["--ledger", dir.path] + args, stdin: stdin)
    }

    /// `value > 1` on heart rate compared in count/s (60 bpm and up): a type with
    /// dimensions needs its unit; a count type's bare number is a count.
    @Test func whereAValueOfATypeWithAUnitNeedsTheUnit() throws {
        let dir = try Self.ledger()
        let bare = "healthledger: usage: --where: column 10: heartRate values have a unit: write one after 1 (count/s or another unit of frequency (time^-1))\n"
        for command in ["query", "statistics"] {
            let r = try Self.run(dir, [command, "heartRate", "--owner", "--where", "value > 1"])
            #expect(r.status == 2)
            #expect(r.stderr == bare)
        }
        let perMinute = try Self.run(dir, ["--json", "query", "heartRate", "--owner", "--where", "value > 100 count/min"])
        #expect(perMinute.status == 0)
        #expect(perMinute.stdout.split(separator: "\n").count == 1)
        let steps = try Self.run(dir, ["--json", "query", "stepCount", "--owner", "--where", "value > 90"])
        #expect(steps.status == 0)
        #expect(steps.stdout.split(separator: "\n").count == 2)
    }

    @Test func hexadecimalIsNoNumber() throws {
        let dir = try Self.ledger()
        let whereHex = try Self.run(dir, ["query", "heartRate", "--owner", "--where", "value > 0x10 count/min"])
        #expect(whereHex.status == 2)
        #expect(whereHex.stderr == "healthledger: usage: --where: column 9: expected a number, found '0x10'\n")
        let before = try Data(contentsOf: dir.url.appendingPathComponent("ledger.log"))
        let save = try Self.run(dir, ["save", "--app", "com.example.hr", "--type", "heartRate", "--value", "0x3C", "--unit", "count/min",
                                      "--start", "2025-06-03T08:00:00Z"])
        #expect(save.status == 3)
        #expect(save.stderr == "healthledger: invalidValue: value '0x3C' is not a number\n")
        #expect(try Data(contentsOf: dir.url.appendingPathComponent("ledger.log")) == before)
        let convert = try CLIRunner.run(["unit", "convert", "0x10", "kg", "lb"])
        #expect(convert.status == 3)
        #expect(convert.stderr == "healthledger: invalidValue: '0x10' is not a number\n")
        #expect(try CLIRunner.run(["unit", "convert", "1e1", "kg", "g"]).stdout == "10000\n")
    }

    @Test func workoutFieldsApplyToWorkoutsOnly() throws {
        let dir = try Self.ledger()
        for expression in ["duration > 1", "energy > 1 kcal", "distance > 1 km", "activity = running"] {
            let r = try Self.run(dir, ["query", "heartRate", "--owner", "--where", expression])
            #expect(r.status == 2)
            #expect(r.stderr == "healthledger: usage: --where: column 1: '\(expression.prefix { $0 != " " })' applies to workouts, not heartRate\n")
        }
        #expect(try Self.run(dir, ["query", "workout", "--owner", "--where", "duration > 1"]).status == 0)
    }

    /// HealthKit: a workout event lies within its workout, its duration included.
    @Test func workoutBuildRefusesAnEventEndingAfterItsWorkout() throws {
        let dir = try WorkoutCommandTests().prepared()
        let before = try Data(contentsOf: dir.url.appendingPathComponent("ledger.log"))
        let steps = """
            {"step":"begin","activityType":"running","date":"2026-03-01T08:00:00Z"}
            {"step":"addEvent","type":"segment","date":"2026-03-01T08:50:00Z","duration":36000}
            {"step":"end","date":"2026-03-01T09:00:00Z"}
            {"step":"finish"}
            """
        let r = try Self.run(dir, ["--app", "com.p", "workout", "build"], stdin: steps)
        #expect(r.status == 3)
        #expect(r.stderr == "healthledger: line 3 (end): invalidArgument: workout builder: a HKWorkoutEventTypeSegment event at 2026-03-01T08:50:00Z lasting 36000 s ends after 2026-03-01T09:00:00Z; nothing was written\n")
        #expect(try Data(contentsOf: dir.url.appendingPathComponent("ledger.log")) == before)
        // ending with the workout is within it
        let within = steps.replacingOccurrences(of: "\"duration\":36000", with: "\"duration\":600")
        #expect(try Self.run(dir, ["--app", "com.p", "workout", "build"], stdin: within).status == 0)
    }

    /// HKWasUserEntered is a boolean in HealthKit: "yes" is refused, true and 1 are not.
    @Test func hkWasUserEnteredIsABoolean() throws {
        let dir = try StoreCommandTests.prepared()
        let before = try Data(contentsOf: dir.url.appendingPathComponent("ledger.log"))
        let line = #"{"type":"bodyMass","value":70,"unit":"kg","start":"2026-02-02T08:00:00Z","metadata":{"HKWasUserEntered":"yes"}}"#
        let ingest = try Self.run(dir, ["--app", "com.example.scale", "ingest"], stdin: line + "\n")
        #expect(ingest.status == 3)
        #expect(ingest.stderr == "healthledger: line 1: invalidField: metadata[HKWasUserEntered]: HealthKit's HKWasUserEntered is a boolean (true or false), not the string \"yes\"; lines 1-1 were not appended\n")
        let save = try Self.run(dir, ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "70", "--unit", "kg",
                                      "--start", "2026-02-02T08:00:00Z", "--meta", "HKWasUserEntered=2.5"])
        #expect(save.status == 3)
        #expect(save.stderr == "healthledger: invalidField: metadata[HKWasUserEntered]: HealthKit's HKWasUserEntered is a boolean (true or false), not 2.5\n")
        #expect(try Data(contentsOf: dir.url.appendingPathComponent("ledger.log")) == before)
        for value in ["true", "1"] {
            let ok = try Self.run(dir, ["--app", "com.example.scale", "ingest"],
                                  stdin: line.replacingOccurrences(of: "\"yes\"", with: value) + "\n")
            #expect(ok.status == 0, "\(ok.stderr)")
        }
    }
}
