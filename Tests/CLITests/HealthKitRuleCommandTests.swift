import Foundation
import Testing
import TestSupport

/// HealthKit's rules, exactly, from the command line: one test per rule, named for it.
struct HealthKitRuleCommandTests {
    func ledgerBytes(_ dir: TemporaryDirectory) throws -> Data {
        try Data(contentsOf: dir.url.appendingPathComponent("ledger.log"))
    }

    /// `characteristic set dateOfBirth 2030-01-01` was accepted (age −4).
    @Test func futureDateOfBirthIsExit3() throws {
        let dir = try StoreCommandTests.prepared()
        let before = try ledgerBytes(dir)
        let r = try CLIRunner.run(["--ledger", dir.path, "characteristic", "set", "dateOfBirth", "2999-01-01"])
        #expect(r.status == 3)
        #expect(r.stderr.hasPrefix("healthledger: invalidArgument: dateOfBirth 2999-01-01 is after today ("))
        #expect(try ledgerBytes(dir) == before)
    }

    /// `replay` showed a bodyMass sample dated in the future as the latest (and
    /// its BMI) while `profile --owner` and `latest` ignored it. Now one definition:
    /// end date at or before the replayed instant (now for the whole log).
    @Test func replayAndProfileAgreeOnLatest() throws {
        let dir = try StoreCommandTests.prepared()
        let future = try CLIRunner.run(["--ledger", dir.path, "save", "--app", "com.example.scale", "--type", "bodyMass",
                                        "--value", "120", "--unit", "kg", "--start", "2200-02-01T08:00:00Z"])
        #expect(future.status == 0, "\(future.stderr)")
        let now = try CLIRunner.run(["--ledger", dir.path, "replay", "--json"])
        #expect(now.status == 0)
        #expect(now.stdout.contains("\"value\":70,"))
        #expect(!now.stdout.contains("\"value\":120,"))
        let latest = try CLIRunner.run(["--ledger", dir.path, "--owner", "latest", "bodyMass", "--json"])
        #expect(latest.stdout.contains("\"value\":70,"), "\(latest.stderr)")
        // Replayed to an instant after the sample's end, the index answers with it.
        let later = try CLIRunner.run(["--ledger", dir.path, "replay", "--as-of", "2250-01-01T00:00:00Z", "--json"])
        #expect(later.status == 0)
        #expect(later.stdout.contains("\"value\":120,"))
    }

    /// At the command line, a negative body mass is exit 3, the ledger unchanged.
    @Test func negativeBodyMassIsExit3() throws {
        let dir = try StoreCommandTests.prepared()
        let before = try ledgerBytes(dir)
        let r = try CLIRunner.run(["--ledger", dir.path, "save", "--app", "com.example.scale", "--type", "bodyMass",
                                   "--value", "-5", "--unit", "kg", "--start", "2026-02-02T08:00:00Z"])
        #expect(r.status == 3)
        #expect(r.stderr == "healthledger: valueOutOfRange: bodyMass value = -5.0 is outside > 0 kg\n")
        #expect(try ledgerBytes(dir) == before)
    }

    /// The owner could grant a type the app never asked for. Exit 5 naming it,
    /// nothing recorded.
    @Test func authorizingATypeNeverRequestedIsExit5() throws {
        let dir = try StoreCommandTests.prepared()
        let before = try ledgerBytes(dir)
        let share = try CLIRunner.run(["--ledger", dir.path, "authorize", "--app", "com.example.scale", "--share", "height"])
        #expect(share.status == 5)
        #expect(share.stderr == "healthledger: notRequested: com.example.scale never asked to share HKQuantityTypeIdentifierHeight; the owner answers only what an app asked for\n")
        let read = try CLIRunner.run(["--ledger", dir.path, "authorize", "--app", "com.example.scale", "--deny-read", "heartRate"])
        #expect(read.status == 5)
        #expect(read.stderr == "healthledger: notRequested: com.example.scale never asked to read HKQuantityTypeIdentifierHeartRate; the owner answers only what an app asked for\n")
        #expect(try ledgerBytes(dir) == before)
        // A requested type is answered (changing an earlier answer too).
        let again = try CLIRunner.run(["--ledger", dir.path, "authorize", "--app", "com.example.scale", "--deny-share", "bodyMass"])
        #expect(again.status == 0, "\(again.stderr)")
    }

    /// An app could not ask from the command line. `request` records
    /// requestAuthorization(toShare:read:) (purpose strings first), `request-status`
    /// answers getRequestStatusForAuthorization.
    @Test func anAppRequestsAndAsksForTheRequestStatus() throws {
        let dir = TemporaryDirectory()
        func run(_ args: [String]) throws -> CLIResult { try CLIRunner.run(["--ledger", dir.path] + args) }
        #expect(try run(["init"]).status == 0)
        #expect(try run(["app", "register", "--app", "com.x", "--name", "X", "--read-purpose", "reads"]).status == 0)
        let noPurpose = try run(["--app", "com.x", "request", "--share", "bodyMass"])
        #expect(noPurpose.status == 5)
        #expect(noPurpose.stderr == "healthledger: missingUsageDescription: com.x has no share (NSHealthUpdateUsageDescription) purpose string\n")
        #expect(try run(["--app", "com.x", "request-status", "--read", "bodyMass"]).stdout == "shouldRequest\n")
        let asked = try run(["--app", "com.x", "request", "--read", "bodyMass,height"])
        #expect(asked.status == 0, "\(asked.stderr)")
        #expect(asked.stdout == "recorded the request of com.x\n")
        #expect(try run(["--app", "com.x", "request-status", "--read", "bodyMass"]).stdout == "unnecessary\n")
        #expect(try run(["request-status", "--app=com.x", "--read", "bodyMass,stepCount", "--json"]).stdout
                == "{\"app\":\"com.x\",\"status\":\"shouldRequest\",\"rawValue\":1}\n")
        #expect(try run(["--app", "com.x", "request", "--read", "bodyMass"]).stdout == "nothing new to ask for com.x\n")
        let granted = try run(["authorize", "--app", "com.x", "--read", "height"])
        #expect(granted.status == 0, "\(granted.stderr)")
        let unregistered = try run(["--app", "com.y", "request", "--read", "bodyMass"])
        #expect(unregistered.status == 4)
    }

    /// Age was counted in UTC. The ledger keeps the owner's time zone (an
    /// event; `$TZ` at creation), age uses it, and `--tz` overrides it for one command.
    /// A person in UTC−10 on the evening before the birthday is still 35 there.
    @Test func ageIsCountedInTheOwnersTimeZone() throws {
        let dir = TemporaryDirectory()
        func run(_ args: [String], env: [String: String] = [:]) throws -> CLIResult {
            try CLIRunner.run(["--ledger", dir.path] + args, environment: env)
        }
        #expect(try run(["init"], env: ["TZ": "Pacific/Honolulu"]).status == 0)
        #expect(try run(["timezone"]).stdout == "Pacific/Honolulu\n")
        #expect(try run(["log"]).stdout.contains("time zone Pacific/Honolulu"))
        #expect(try run(["characteristic", "set", "dateOfBirth", "1990-04-12"]).status == 0)
        let profile = ["--owner", "profile", "--now", "2026-04-12T05:00:00Z", "--json"]
        #expect(try run(profile).stdout.hasPrefix("{\"age\":35,"))
        #expect(try run(["--tz", "UTC"] + profile).stdout.hasPrefix("{\"age\":36,"))
        #expect(try run(profile + ["--tz=Etc/UTC"]).stdout.hasPrefix("{\"age\":36,"))
        // Setting it is an event; the same zone again records nothing.
        #expect(try run(["timezone", "UTC"]).status == 0)
        #expect(try run(["timezone", "UTC"]).status == 0)
        #expect(try run(["log"]).stdout.components(separatedBy: "time zone ").count == 3)
        #expect(try run(profile).stdout.hasPrefix("{\"age\":36,"))
        let before = try ledgerBytes(dir)
        let bad = try run(["--tz", "Mars/Base"] + profile)
        #expect(bad.status == 3)
        #expect(bad.stderr == "healthledger: invalidTimeZone: --tz 'Mars/Base' names no time zone (an IANA name such as Pacific/Honolulu)\n")
        let badSet = try run(["timezone", "Mars/Base"])
        #expect(badSet.status == 3)
        #expect(try ledgerBytes(dir) == before)
        // The zone survives a snapshot and a replay from it.
        #expect(try run(["timezone", "Pacific/Honolulu"]).status == 0)
        #expect(try run(["replay", "--write-snapshot"]).status == 0)
        #expect(try run(profile).stdout.hasPrefix("{\"age\":35,"))
        #expect(try run(["verify"]).status == 0)
    }

    /// The rest of HKHealthStore: isHealthDataAvailable as `healthledger available`.
    @Test func availableSaysWhetherALedgerExistsAndOpens() throws {
        let dir = TemporaryDirectory()
        let missing = try CLIRunner.run(["--ledger", dir.path, "available"])
        #expect(missing.status == 4)
        #expect(missing.stderr == "healthledger: notAvailableOnDevice: health data cannot be stored at \(dir.path): no ledger folder (run `healthledger init`)\n")
        #expect(try CLIRunner.run(["--ledger", dir.path, "init"]).status == 0)
        let ok = try CLIRunner.run(["--ledger", dir.path, "available"])
        #expect(ok.status == 0)
        #expect(ok.stdout == "available\nearliest permitted sample date: 0001-01-01T00:00:00Z\n")
        let json = try CLIRunner.run(["--ledger", dir.path, "available", "--json"])
        #expect(json.stdout == "{\"available\":true,\"earliestPermittedSampleDate\":\"0001-01-01T00:00:00Z\"}\n")
    }
}
