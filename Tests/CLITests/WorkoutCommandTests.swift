import Foundation
import Testing
import TestSupport

/// `workout save` with a date alone, and `workout build` (HKWorkoutBuilder from the
/// command line), exactly.
struct WorkoutCommandTests {
    func run(_ dir: TemporaryDirectory, _ args: [String], stdin: String? = nil) throws -> CLIResult {
        try CLIRunner.run(["--ledger", dir.path] + args, stdin: stdin)
    }

    /// A ledger in Honolulu where com.p may share workouts, active energy and heart
    /// rate (the owner denied heart rate's sharing to com.q's twin… no: com.p is denied
    /// stepCount, for a refused finish).
    func prepared() throws -> TemporaryDirectory {
        let dir = TemporaryDirectory()
        for args in [["init"], ["timezone", "Pacific/Honolulu"],
                     ["app", "register", "--app", "com.p", "--name", "P", "--share-purpose", "s", "--read-purpose", "r"],
                     ["--app", "com.p", "request", "--share", "workout,activeEnergyBurned,heartRate,stepCount", "--read", "workout"],
                     ["authorize", "--app", "com.p", "--share", "workout,activeEnergyBurned,heartRate", "--deny-share", "stepCount",
                      "--read", "workout"]] {
            let r = try run(dir, args)
            guard r.status == 0 else { throw StoreCommandTests.CLIError(args: args, result: r) }
        }
        return dir
    }

    func log(_ dir: TemporaryDirectory) throws -> Data { try Data(contentsOf: dir.url.appendingPathComponent("ledger.log")) }

    /// `workout save --start 2026-03-01` was midnight UTC, not the start of
    /// the owner's day (10:00Z in Honolulu) as every other day boundary is.
    @Test func workoutSaveReadsADateAloneInTheOwnersTimeZone() throws {
        let dir = try prepared()
        let saved = try run(dir, ["workout", "save", "--app", "com.p", "--activity", "walking", "--start", "2026-03-01",
                                  "--end", "2026-03-02", "--json"])
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(saved.stdout.contains("\"start\":\"2026-03-01T10:00:00Z\",\"end\":\"2026-03-02T10:00:00Z\""))
        let utc = try run(dir, ["--tz", "UTC", "workout", "save", "--app", "com.p", "--activity", "walking", "--start", "2026-03-03",
                                "--end", "2026-03-04", "--energy", "100", "kcal", "--json"])
        #expect(utc.stdout.contains("\"start\":\"2026-03-03T00:00:00Z\",\"end\":\"2026-03-04T00:00:00Z\""))
        // The energy sample saved with it has the same interval.
        let workout = String(utc.stdout.dropFirst(9).prefix(36))
        let energy = try run(dir, ["workout", "samples", "--owner", workout, "activeEnergyBurned", "--json"])
        #expect(energy.stdout.contains("\"start\":\"2026-03-03T00:00:00Z\",\"end\":\"2026-03-04T00:00:00Z\""))
        // A date-time keeps its own offset.
        let exact = try run(dir, ["workout", "save", "--app", "com.p", "--activity", "walking", "--start", "2026-03-05T08:00:00Z",
                                  "--end", "2026-03-05T09:00:00Z", "--json"])
        #expect(exact.stdout.contains("\"start\":\"2026-03-05T08:00:00Z\",\"end\":\"2026-03-05T09:00:00Z\""))
    }

    /// `statistics --from/--to` with a date alone: the owner's day too (the buckets'
    /// zone), not midnight UTC.
    @Test func statisticsReadsADateAloneInTheOwnersTimeZone() throws {
        let dir = try StoreCommandTests.prepared()  // bodyMass 70 kg at 2026-02-01T08:00:00Z
        #expect(try run(dir, ["timezone", "Pacific/Honolulu"]).status == 0)
        let query = ["statistics", "bodyMass", "--owner", "--json", "--from", "2026-02-01", "--to", "2026-02-02"]
        let honolulu = try run(dir, query)  // [10:00Z, next 10:00Z): the sample at 08:00Z is the day before
        #expect(honolulu.status == 0, "\(honolulu.stderr)")
        #expect(!honolulu.stdout.contains("70"))
        let utc = try run(dir, ["--tz", "UTC"] + query)
        #expect(utc.stdout.contains("70"))
    }

    static let steps = """
        {"step":"begin","activityType":"swimBikeRun","date":"2026-03-01T08:00:00Z"}
        {"step":"addSample","type":"activeEnergyBurned","value":120,"unit":"kcal","start":"2026-03-01T08:00:00Z","end":"2026-03-01T08:30:00Z","uuid":"00000000-0000-4000-8000-000000000001"}
        {"step":"addActivity","activityType":"swimming","start":"2026-03-01T08:00:00Z","end":"2026-03-01T08:20:00Z","uuid":"00000000-0000-4000-8000-0000000000a1","events":[{"type":"lap","date":"2026-03-01T08:10:00Z"}]}

        {"step":"addActivity","activityType":"cycling","start":"2026-03-01T08:20:00Z","end":"2026-03-01T08:40:00Z","uuid":"00000000-0000-4000-8000-0000000000a2","metadata":{"HKIndoorWorkout":false}}
        {"step":"addEvent","type":"pause","date":"2026-03-01T08:40:00Z"}
        {"step":"addEvent","type":"resume","date":"2026-03-01T08:45:00Z"}
        {"step":"addRoute","locations":[{"date":"2026-03-01T08:20:00Z","latitude":21.3,"longitude":-157.8},{"date":"2026-03-01T08:40:00Z","latitude":21.31,"longitude":-157.81,"altitude":5}]}
        {"step":"addMetadata","metadata":{"HKWorkoutBrandName":"Triathlon"}}
        {"step":"end","date":"2026-03-01T09:00:00Z"}
        {"step":"finish"}
        """

    @Test func workoutBuildCommitsEveryStepAtTheFinishInOneGo() throws {
        let dir = try prepared()
        let before = try run(dir, ["log"]).stdout.split(separator: "\n").count
        let built = try run(dir, ["--app", "com.p", "workout", "build", "--json"], stdin: Self.steps)
        #expect(built.status == 0, "\(built.stderr)")
        #expect(built.stdout.contains("\"activityType\":\"HKWorkoutActivityTypeSwimBikeRun\",\"duration\":3300,"))
        #expect(built.stdout.contains("\"totalEnergyBurned\":{\"value\":120,\"unit\":\"kcal\"}"))
        #expect(built.stdout.contains("\"activities\":[{\"uuid\":\"00000000-0000-4000-8000-0000000000A1\",\"activityType\":\"HKWorkoutActivityTypeSwimming\",\"start\":\"2026-03-01T08:00:00Z\",\"end\":\"2026-03-01T08:20:00Z\",\"duration\":1200,\"events\":[{\"type\":\"HKWorkoutEventTypeLap\",\"date\":\"2026-03-01T08:10:00Z\",\"duration\":0}]},{\"uuid\":\"00000000-0000-4000-8000-0000000000A2\",\"activityType\":\"HKWorkoutActivityTypeCycling\",\"start\":\"2026-03-01T08:20:00Z\",\"end\":\"2026-03-01T08:40:00Z\",\"duration\":1200,\"metadata\":{\"HKIndoorWorkout\":false}}]"))
        #expect(built.stdout.contains("\"routes\":[{\"fileReference\":null,\"sourceName\":null,\"locations\":2}]"))
        #expect(built.stdout.contains("\"metadata\":{\"HKWorkoutBrandName\":\"Triathlon\"}"))
        let workout = String(built.stdout.dropFirst(9).prefix(36))
        // One save, one association, one activities event — appended together.
        let events = try run(dir, ["log"]).stdout.split(separator: "\n")
        #expect(events.count == before + 3)
        #expect(events.last?.hasSuffix("workoutActivitiesAdded\tcom.p\t2 activities (swimming, cycling) added to workout \(workout)") == true)
        // The query shows the workout with its activities, as the build printed it
        // (stamped with its source, which the store adds when it saves).
        let stored = built.stdout.replacingOccurrences(of: "\"source\":null", with: "\"source\":\"com.p\"")
        let queried = try run(dir, ["--owner", "query", "workout", "--json"])
        #expect(queried.stdout == stored)
        let energy = try run(dir, ["workout", "samples", "--owner", workout, "activeEnergyBurned"])
        #expect(energy.stdout.hasPrefix("00000000-0000-4000-8000-000000000001  HKQuantityTypeIdentifierActiveEnergyBurned  120 kcal"))
        #expect(try run(dir, ["replay", "--write-snapshot"]).status == 0)
        #expect(try run(dir, ["--owner", "query", "workout", "--json"]).stdout == stored)
        #expect(try run(dir, ["verify"]).status == 0)
        // The same steps from a file, with new UUIDs: the sample's and activities' are taken.
        let file = dir.url.appendingPathComponent("steps.jsonl")
        try Self.steps.write(to: file, atomically: true, encoding: .utf8)
        let unchanged = try log(dir)
        let again = try run(dir, ["--app", "com.p", "workout", "build", "--file", file.path])
        #expect(again.status == 5)
        #expect(again.stderr == "healthledger: line 11 (finish): duplicateUUID: 00000000-0000-4000-8000-000000000001 is already stored [E3]; nothing was written\n")
        #expect(try log(dir) == unchanged)
    }

    /// Each refusal names its line and step, and writes nothing.
    @Test func workoutBuildRefusesABadStepExactlyAndWritesNothing() throws {
        let dir = try prepared()
        let unchanged = try log(dir)
        let begin = #"{"step":"begin","activityType":"running","date":"2026-03-01T08:00:00Z"}"#
        let end = #"{"step":"end","date":"2026-03-01T09:00:00Z"}"#
        let finish = #"{"step":"finish"}"#
        let cases: [(String, Int32, String)] = [
            ("", 3, "missingFinish: the steps do not end with {\"step\":\"finish\"}; nothing was written"),
            ([begin, end].joined(separator: "\n"), 3, "missingFinish: the steps do not end with {\"step\":\"finish\"}; nothing was written"),
            ([begin, finish, end].joined(separator: "\n"), 3, "line 3: outOfOrder: finish is the last step; nothing was written"),
            ([begin, "{\"step\":\"jump\"}", finish].joined(separator: "\n"), 3,
             "line 2: unknownStep: \"jump\" (steps: begin, addSample, addEvent, addActivity, addRoute, addMetadata, end, finish); nothing was written"),
            ([begin, "{\"step\":\"end\",\"date\":\"2026-03-01T09:00:00Z\",\"when\":1}", finish].joined(separator: "\n"), 3,
             "line 2: unknownField: \"when\" in a end step (fields: date); nothing was written"),
            ([begin, "{\"step\":\"end\",\"date\":", finish].joined(separator: "\n"), 3,
             "line 2: invalidJSON: column 22 (in \"date\"): unexpected end of line; nothing was written"),
            ([end, finish].joined(separator: "\n"), 3, "line 1 (end): outOfOrder: the first step is begin; nothing was written"),
            ([begin, #"{"step":"addActivity","activityType":"cycling","start":"2026-03-01T07:00:00Z","end":"2026-03-01T08:10:00Z","uuid":"00000000-0000-4000-8000-0000000000a1"}"#, end, finish].joined(separator: "\n"), 3,
             "line 2 (addActivity): invalidArgument: workout builder: activity 00000000-0000-4000-8000-0000000000A1 starts before the workout (2026-03-01T08:00:00Z); nothing was written"),
            ([begin, #"{"step":"addActivity","activityType":"cycling","start":"2026-03-01T08:00:00Z","end":"2026-03-01T09:10:00Z","uuid":"00000000-0000-4000-8000-0000000000a1"}"#, end, finish].joined(separator: "\n"), 3,
             "line 3 (end): invalidArgument: workout builder: activity 00000000-0000-4000-8000-0000000000A1 ends after 2026-03-01T09:00:00Z; nothing was written"),
            ([begin, #"{"step":"addSample","type":"stepCount","value":100,"unit":"count","start":"2026-03-01T08:00:00Z"}"#, end, finish].joined(separator: "\n"), 5,
             "line 4 (finish): authorizationDenied: sharing HKQuantityTypeIdentifierStepCount is not allowed; nothing was written"),
            ([begin, #"{"step":"addRoute","locations":[{"date":"2026-03-01T08:00:00Z","latitude":91,"longitude":0}]}"#, end, finish].joined(separator: "\n"), 3,
             "line 2 (addRoute): invalidValue: a location at latitude 91.0, longitude 0.0 is not on Earth; nothing was written"),
        ]
        for (input, status, message) in cases {
            let r = try run(dir, ["--app", "com.p", "workout", "build"], stdin: input)
            #expect(r.status == status, "\(input)")
            #expect(r.stderr == "healthledger: \(message)\n", "\(input)")
            #expect(r.stdout == "")
        }
        let missing = try run(dir, ["--app", "com.p", "workout", "build", "--file", dir.url.appendingPathComponent("none.jsonl").path])
        #expect(missing.status == 4)
        #expect(missing.stderr == "healthledger: notFound: --file \(dir.url.appendingPathComponent("none.jsonl").path): no such file\n")
        let owner = try run(dir, ["--owner", "workout", "build"], stdin: finish)
        #expect(owner.status == 2)
        #expect(try log(dir) == unchanged)
        let help = try run(dir, ["workout", "build", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.hasPrefix("USAGE: healthledger [--ledger PATH] workout build --app ID [--file PATH] [--json]\n"))
        #expect(help.stdout.contains("Exit status:"))
    }
}
