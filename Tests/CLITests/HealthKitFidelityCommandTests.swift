import Foundation
import Testing
import TestSupport

/// The rest of HKHealthStore, from the command line.
struct HealthKitFidelityCommandTests {
    func run(_ dir: TemporaryDirectory, _ args: [String]) throws -> CLIResult {
        try CLIRunner.run(["--ledger", dir.path] + args)
    }

    /// Day boundaries are the owner's: `--from 2026-02-01` in Honolulu starts at
    /// 10:00Z, so a sample at 08:00Z (the evening of Jan 31 there) is before it.
    @Test func aDateAloneIsADayBoundaryInTheOwnersTimeZone() throws {
        let dir = try StoreCommandTests.prepared()  // bodyMass 70 kg at 2026-02-01T08:00:00Z
        #expect(try run(dir, ["timezone", "Pacific/Honolulu"]).status == 0)
        let query = ["--owner", "query", "bodyMass", "--json"]
        let inHonolulu = try run(dir, query + ["--from", "2026-02-01"])
        #expect(inHonolulu.status == 0, "\(inHonolulu.stderr)")
        #expect(inHonolulu.stdout == "")
        let before = try run(dir, query + ["--to", "2026-02-01"])
        #expect(before.stdout.contains("\"value\":70,"))
        let inUTC = try run(dir, ["--tz", "UTC"] + query + ["--from", "2026-02-01"])
        #expect(inUTC.stdout.contains("\"value\":70,"))
        #expect(try run(dir, ["--tz", "UTC"] + query + ["--to", "2026-02-01"]).stdout == "")
        // `latest --now DATE` is the start of that day there too: 10:00Z in Honolulu
        // (the 08:00Z sample is before it), 00:00Z in UTC (nothing yet).
        #expect(try run(dir, ["--owner", "latest", "bodyMass", "--now", "2026-02-01", "--json"]).stdout.contains("\"value\":70,"))
        let latest = try run(dir, ["--tz", "UTC", "--owner", "latest", "bodyMass", "--now", "2026-02-01"])
        #expect(latest.status == 4)
        #expect(latest.stderr == "healthledger: noData: no HKQuantityTypeIdentifierBodyMass sample before 2026-02-01T00:00:00Z\n")
        // `save --start DATE` too: the start of that day in Honolulu.
        let saved = try run(dir, ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "71", "--unit", "kg",
                                  "--start", "2026-03-01", "--json"])
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(saved.stdout.contains("\"start\":\"2026-03-01T10:00:00Z\",\"end\":\"2026-03-01T10:00:00Z\""))
        let stored = try run(dir, ["--owner", "query", "bodyMass", "--from", "2026-03-01", "--json"])
        #expect(stored.stdout.contains("\"value\":71,") && stored.stdout.contains("\"start\":\"2026-03-01T10:00:00Z\""))
    }

    /// preferredUnits(for:): the locale's unit until the owner chooses one (an event);
    /// `latest`, `profile` and `query` show it when --unit is absent.
    @Test func preferredUnitsByLocaleAndTheOwnersChoice() throws {
        let dir = try StoreCommandTests.prepared()  // bodyMass 70 kg
        let uuid = try run(dir, ["--owner", "query", "bodyMass", "--json"]).stdout.dropFirst(9).prefix(36)
        #expect(try run(dir, ["preferred-unit", "bodyMass"]).stdout == "bodyMass\tlb\n")
        #expect(try run(dir, ["preferred-unit", "bodyMass", "height", "--locale", "de_DE", "--json"]).stdout
                == "{\"bodyMass\":\"kg\",\"height\":\"cm\"}\n")
        #expect(try run(dir, ["--owner", "latest", "bodyMass"]).stdout == "154.3235835294143 lb  2026-02-01T08:00:00Z  com.example.scale\n")
        #expect(try run(dir, ["--owner", "latest", "bodyMass", "--locale", "fr_FR"]).stdout == "70 kg  2026-02-01T08:00:00Z  com.example.scale\n")
        #expect(try run(dir, ["--owner", "query", "bodyMass"]).stdout
                == "\(uuid)  HKQuantityTypeIdentifierBodyMass  154.3235835294143 lb  2026-02-01T08:00:00Z  com.example.scale\n")
        #expect(try run(dir, ["--owner", "profile", "--json"]).stdout.contains("\"weight\":\"154.324 lb\""))
        // A unit of another dimension is exit 3, nothing recorded; an app that never
        // asked for a type is exit 5.
        let before = try Data(contentsOf: dir.url.appendingPathComponent("ledger.log"))
        let wrong = try run(dir, ["preferred-unit", "set", "bodyMass", "count"])
        #expect(wrong.status == 3)
        #expect(wrong.stderr == "healthledger: invalidArgument: preferred unit count does not fit bodyMass (mass)\n")
        #expect(try Data(contentsOf: dir.url.appendingPathComponent("ledger.log")) == before)
        let app = try run(dir, ["--app", "com.example.scale", "preferred-unit", "height"])
        #expect(app.status == 5)
        #expect(app.stderr == "healthledger: authorizationNotDetermined: com.example.scale never asked to share or read HKQuantityTypeIdentifierHeight\n")
        // The owner's choice: an event, used everywhere, then cleared.
        #expect(try run(dir, ["preferred-unit", "set", "bodyMass", "kg"]).stdout == "bodyMass\tkg\n")
        #expect(try run(dir, ["log"]).stdout.contains("preferredUnitSet\towner\tpreferred unit of bodyMass: kg\n"))
        #expect(try run(dir, ["--app", "com.example.scale", "preferred-unit", "bodyMass"]).stdout == "bodyMass\tkg\n")
        #expect(try run(dir, ["--owner", "latest", "bodyMass"]).stdout == "70 kg  2026-02-01T08:00:00Z  com.example.scale\n")
        #expect(try run(dir, ["--owner", "profile", "--json"]).stdout.contains("\"weight\":\"70 kg\""))
        #expect(try run(dir, ["--owner", "query", "bodyMass", "--unit", "g", "--json"]).stdout.hasSuffix(",\"converted\":70000,\"convertedUnit\":\"g\"}\n"))
        #expect(try run(dir, ["preferred-unit", "clear", "bodyMass"]).status == 0)
        #expect(try run(dir, ["preferred-unit", "bodyMass"]).stdout == "bodyMass\tlb\n")
        #expect(try run(dir, ["replay", "--write-snapshot"]).status == 0)
        #expect(try run(dir, ["verify"]).status == 0)
    }

    /// HKActivitySummaryQuery by a range of days, both included, oldest first; an app
    /// sees the rings once it may read activitySummary, which it can never share.
    @Test func activitySummariesByDayRangeWithVisibility() throws {
        let dir = TemporaryDirectory("work")
        let one = #"<ActivitySummary dateComponents="2019-05-05" activeEnergyBurned="420.5""#
        let xml = SmallExport.xml.replacingOccurrences(of: one, with: """
            <ActivitySummary dateComponents="2019-05-04" activeEnergyBurned="300" activeEnergyBurnedGoal="500" activeEnergyBurnedUnit="kcal"/>
             <ActivitySummary dateComponents="2019-05-06" appleExerciseTime="45" appleExerciseTimeGoal="30"/>
            \(one)
            """)
        #expect(xml != SmallExport.xml)
        try SmallExport.write(xml, in: dir.path)
        let ledger = dir.path + "/L"
        func run(_ args: [String]) throws -> CLIResult { try CLIRunner.run(["--ledger", ledger] + args) }
        #expect(try CLIRunner.run(["--ledger", ledger, "import-apple-health", dir.path + "/export.xml"]).status == 0)
        let all = try run(["--owner", "activity"])
        #expect(all.status == 0, "\(all.stderr)")
        #expect(all.stdout == """
            2019-05-04  move 300/500 kcal  exercise –/– min  stand –/– h
            2019-05-05  move 420.5/500 kcal  exercise 32/30 min  stand 11/12 h
            2019-05-06  move –/– kcal  exercise 45/30 min  stand –/– h

            """)
        #expect(try run(["--owner", "activity", "--from", "2019-05-05", "--to", "2019-05-05", "--json"]).stdout
                == #"{"day":"2019-05-05","activeEnergyBurned":420.5,"activeEnergyBurnedGoal":500,"appleMoveTime":0,"appleMoveTimeGoal":0,"appleExerciseTime":32,"appleExerciseTimeGoal":30,"appleStandHours":11,"appleStandHoursGoal":12,"activeEnergyBurnedUnit":"kcal"}"# + "\n")
        #expect(try run(["--owner", "activity", "--from", "2019-05-05"]).stdout.split(separator: "\n").map { $0.prefix(10) } == ["2019-05-05", "2019-05-06"])
        let backwards = try run(["--owner", "activity", "--from", "2019-05-06", "--to", "2019-05-04"])
        #expect(backwards.status == 3)
        #expect(backwards.stderr == "healthledger: invalidField: activity summary range: 2019-05-04 is before 2019-05-06\n")
        // An app: nothing until the owner grants reading; sharing is never possible.
        #expect(try run(["app", "register", "--app", "com.rings", "--name", "Rings", "--share-purpose", "s", "--read-purpose", "r"]).status == 0)
        let share = try run(["--app", "com.rings", "request", "--share", "activitySummary"])
        #expect(share.status == 5)
        #expect(share.stderr.contains("HKActivitySummaryTypeIdentifier"))
        #expect(try run(["--app", "com.rings", "request", "--read", "activitySummary"]).status == 0)
        let hidden = try run(["--app", "com.rings", "activity"])
        #expect(hidden.status == 0)
        #expect(hidden.stdout == "")
        #expect(try run(["authorize", "--app", "com.rings", "--read", "activitySummary"]).status == 0)
        #expect(try run(["--app", "com.rings", "activity"]).stdout == all.stdout)
        #expect(try run(["verify"]).status == 0)
    }

    /// `workout save --energy` saves the active-energy sample with the workout and
    /// associates it (add(_:to:)); `workout add` associates more; `workout samples`
    /// reads them back. Refusals record nothing.
    @Test func workoutSaveAttachesItsEnergySampleAndAddAssociatesMore() throws {
        let dir = TemporaryDirectory()
        for args in [["init"], ["app", "register", "--app", "com.p", "--name", "P", "--share-purpose", "s", "--read-purpose", "r"],
                     ["app", "register", "--app", "com.q", "--name", "Q", "--share-purpose", "s", "--read-purpose", "r"],
                     ["--app", "com.p", "request", "--share", "workout,activeEnergyBurned,heartRate", "--read", "workout"],
                     ["authorize", "--app", "com.p", "--share", "workout,heartRate", "--read", "workout"]] {
            let r = try run(dir, args)
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
        let save = ["workout", "save", "--app", "com.p", "--activity", "other", "--brand", "Prancercise",
                    "--start", "2026-03-01T08:00:00Z", "--end", "2026-03-01T08:30:00Z", "--energy", "250", "kcal"]
        let log = dir.url.appendingPathComponent("ledger.log")
        let before = try Data(contentsOf: log)
        let refused = try run(dir, save)
        #expect(refused.status == 5)
        #expect(refused.stderr == "healthledger: authorizationNotDetermined: sharing HKQuantityTypeIdentifierActiveEnergyBurned was never answered\n")
        #expect(try Data(contentsOf: log) == before)
        #expect(try run(dir, ["authorize", "--app", "com.p", "--share", "activeEnergyBurned"]).status == 0)
        let saved = try run(dir, save)
        #expect(saved.status == 0, "\(saved.stderr)")
        let workout = saved.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let energy = try run(dir, ["workout", "samples", "--owner", workout, "activeEnergyBurned", "--json"])
        #expect(energy.stdout.contains("\"value\":250,\"unit\":\"kcal\",\"start\":\"2026-03-01T08:00:00Z\",\"end\":\"2026-03-01T08:30:00Z\",\"source\":\"com.p\""))
        #expect(energy.stdout.split(separator: "\n").count == 1)
        #expect(try run(dir, ["log"]).stdout.contains("1 sample added to workout \(workout)"))
        // add(_:to:): a heart-rate sample the app saved joins the workout.
        let hr = try run(dir, ["save", "--app", "com.p", "--type", "heartRate", "--value", "120", "--unit", "count/min",
                               "--start", "2026-03-01T08:10:00Z"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try run(dir, ["workout", "add", "--app", "com.p", workout, hr]).status == 0)
        let beats = try run(dir, ["workout", "samples", "--app", "com.p", workout, "heartRate"])
        #expect(beats.stdout.hasPrefix("\(hr)  HKQuantityTypeIdentifierHeartRate  120 count/min"))
        // Refused, nothing written: a workout as a sample, a sample as the workout,
        // another app's workout, an unknown object.
        let unchanged = try Data(contentsOf: log)
        let asSample = try run(dir, ["workout", "add", "--app", "com.p", workout, workout])
        #expect(asSample.status == 5)
        #expect(asSample.stderr == "healthledger: invalidAssociation: \(workout) is a workout: only samples join a workout [E12]\n")
        let notWorkout = try run(dir, ["workout", "add", "--app", "com.p", hr, hr])
        #expect(notWorkout.stderr == "healthledger: invalidAssociation: \(hr) is not a workout [E12]\n")
        let other = try run(dir, ["workout", "add", "--app", "com.q", workout, hr])
        #expect(other.status == 5)
        #expect(other.stderr.hasPrefix("healthledger: authorizationDenied: "))
        let missing = try run(dir, ["workout", "add", "--app", "com.p", workout, "00000000-0000-0000-0000-000000000001"])
        #expect(missing.status == 4)
        #expect(try Data(contentsOf: log) == unchanged)
        // Associations survive a snapshot; verify checks it against a replay.
        #expect(try run(dir, ["replay", "--write-snapshot"]).status == 0)
        #expect(try run(dir, ["workout", "samples", "--owner", workout, "heartRate"]).stdout == beats.stdout)
        #expect(try run(dir, ["verify"]).status == 0)
    }
}
