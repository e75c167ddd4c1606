import Foundation
import HealthLedger
import Testing
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
    ]

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
