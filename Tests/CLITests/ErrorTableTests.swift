import Foundation
import HealthLedger
import LedgerLog
import Testing
import TestSupport
@testable import healthledger

/// The command line and the server classify the store's errors by one table
/// (`Failure`): an error's exit status and its HTTP status never disagree. These
/// errors are the ones the two front ends once told apart (exit 3 beside HTTP 409,
/// 5 beside 404, 1 beside 503 …).
@Suite struct ErrorTableTests {
    static let cases: [(error: any Error, kind: FailureKind)] = [
        (RuleViolation.invalidBundleIdentifier("a b", "holds ' '"), .invalidInput),
        (RuleViolation.appNotRegistered("com.example.nobody"), .notFound),
        (HealthStoreError.noData(characteristic: "dateOfBirth"), .notFound),
        (HealthStoreError.refused(.tooLarge(bytes: 20_000_000, limit: 16_777_216)), .invalidInput),
        (HealthStoreError.refused(.appNotRegistered("com.example.nobody")), .notFound),
        (QueryError.invalidCursor("x"), .invalidInput),
        (QueryError.indexDisagrees(slot: 3, reason: "r"), .damaged),
        (StatisticsNotFinite(type: .stepCount, statistic: "sum", start: Date(timeIntervalSince1970: 0),
                             end: Date(timeIntervalSince1970: 86_400)), .failure),
        // A key store out of reach (a PostgreSQL connection) is a failure, not damage.
        (Self.unopened(.unreachable), .failure),
        (Self.unopened(.damaged), .damaged),
        (Self.unopened(.ownersToMend), .usage),
    ]

    static func unopened(_ trouble: KeyStoreTrouble) -> LogError {
        .sealedRecordUnopened(sequence: 3, failure: RecordSealFailure(keyId: 1, reason: .keyStoreUnreadable(reason: "r", trouble: trouble)))
    }

    @Test(arguments: 0..<cases.count)
    func theExitStatusAndTheHTTPStatusComeFromOneKind(index: Int) throws {
        let (error, kind) = Self.cases[index]
        let failure = try #require(Failure(error))
        #expect(failure.kind == kind)
        let (status, message) = describe(error)
        #expect(status == kind.exitStatus)
        #expect(message == failure.message)
    }

    @Test func theKindsMapToTheDocumentedStatuses() {
        #expect(FailureKind.allCases.map(\.exitStatus) == [2, 3, 4, 5, 5, 6, 7, 1])
        #expect(FailureKind.allCases.map(\.httpStatus) == [400, 422, 404, 403, 409, 503, 503, 500])
    }
}

/// The same errors through the built binary: the exit status each door gives.
@Suite struct ErrorStatusCommandTests {
    @Test func anUnsetDateOfBirthIsNotFoundAndAnUnknownAppTooAtEveryCommand() throws {
        let dir = TemporaryDirectory("work")
        #expect(try CLIRunner.run(["--ledger", dir.path, "init"]).status == 0)
        let unset = try CLIRunner.run(["--ledger", dir.path, "characteristic", "get", "dateOfBirth", "--owner"])
        #expect(unset.status == 4)
        #expect(unset.stderr.hasPrefix("healthledger: noData:"))
        // An app that is not registered: not found, one message, whichever door.
        for command in [["authorize", "--app", "com.example.nobody", "--share", "stepCount"],
                        ["authorize", "--app", "com.example.nobody", "--requested"],
                        ["token", "create", "--app", "com.example.nobody"]] {
            let r = try CLIRunner.run(["--ledger", dir.path] + command)
            #expect(r.status == 4, "\(command)")
            #expect(r.stderr.contains("appNotRegistered: com.example.nobody"), "\(command): \(r.stderr)")
        }
    }

    @Test func aKeyIsMadeOnlyForALedgerThatExistsAndAVerifierKeyThatCannotBeReadIsRefused() throws {
        let dir = TemporaryDirectory("work")
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        let none = try CLIRunner.run(["--ledger", dir.path, "key", "generate", "--name", "someone"])
        #expect(none.status == 4)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/keys"))
        let ledger = TemporaryDirectory("ledger")
        #expect(try CLIRunner.run(["--ledger", ledger.path, "demo"]).status == 0)
        let checkpoint = ledger.path + ".checkpoint"
        let cp = try CLIRunner.run(["--ledger", ledger.path, "checkpoint"])
        try cp.stdout.write(toFile: checkpoint, atomically: true, encoding: .utf8)
        // A folder where a verifier key file was named: refused, not "no verifier key".
        let folder = try CLIRunner.run(["--ledger", ledger.path, "verify", "--checkpoint", checkpoint, "--verifier-key", dir.path])
        #expect(folder.status == 3)
        #expect(folder.stderr == "healthledger: unreadableKey: \(dir.path)\n")
    }
}
