import Foundation
import HealthLedger
import HealthModel
import LedgerHTTP
@testable import LedgerServer
import Testing
import TestSupport

/// Health Auto Export's pushes: mapped to HealthKit types under the app's
/// own source, idempotent across its overlapping resends, a changed running total
/// replacing the earlier one, unknown metrics kept raw and counted.
@Suite struct HealthAutoExportServiceTests {
    static let workout = "6A1F3C2E-7D51-4C6B-9A0E-2F4B8D9E1C33"

    /// A push built from the app's published format (health-auto-export.md).
    static func push(steps: Int = 340) -> String {
        """
        {"data":{"metrics":[
          {"name":"heart_rate","units":"count/min","data":[
            {"date":"2024-02-06 07:00:00 -0800","Min":58,"Avg":64.5,"Max":71},
            {"date":"2024-02-06 07:01:00 -0800","Min":60,"Avg":66,"Max":72}]},
          {"name":"step_count","units":"count","data":[
            {"date":"2024-02-06 07:00:00 -0800","qty":120},
            {"date":"2024-02-06 08:00:00 -0800","qty":\(steps)}]},
          {"name":"sleep_analysis","units":"hr","data":[
            {"startDate":"2024-02-05 23:10:00 -0800","endDate":"2024-02-06 01:00:00 -0800","qty":1.83,"value":"Core"},
            {"startDate":"2024-02-06 01:00:00 -0800","endDate":"2024-02-06 01:40:00 -0800","qty":0.67,"value":"Deep"}]},
          {"name":"blood_pressure","units":"mmHg","data":[{"date":"2024-02-06 07:30:00 -0800","systolic":121,"diastolic":79}]},
          {"name":"toothbrushing","units":"count","data":[{"date":"2024-02-06 07:45:00 -0800","qty":1,"value":"Complete"}]}
        ],
        "workouts":[{"id":"\(workout)","name":"Outdoor Run","start":"2024-02-06 06:00:00 -0800","end":"2024-02-06 06:30:00 -0800",
          "duration":1800,"activeEnergyBurned":{"qty":300,"units":"kcal"},"distance":{"qty":5.1,"units":"km"},"location":"Outdoor"}]}}
        """
    }

    static let types: Set<ObjectType> = [.quantity(.heartRate), .quantity(.stepCount), .category(.sleepAnalysis),
                                         .quantity(.bloodPressureSystolic), .quantity(.bloodPressureDiastolic), .workout]

    @Test func aPushTwiceIsNewThenUnchangedAndAChangedTotalReplacesTheEarlier() async throws {
        let f = try await ServiceFixture(shareTypes: Self.types, readTypes: Self.types)
        let first = try ServiceFixture.object(try await f.request("POST", "/v1/health-auto-export", token: f.appToken, body: Self.push()))
        #expect(first["new"] as? Int == 9)  // 2 heart rates, 2 step counts, 2 sleep stages, 1 blood pressure, 1 raw, 1 workout
        #expect(first["unchanged"] as? Int == 0)
        #expect(first["raw"] as? Int == 1)
        #expect(first["workouts"] as? Int == 1)
        #expect(first["unknownMetrics"] as? [String: Int] == ["toothbrushing": 1])
        let second = try ServiceFixture.object(try await f.request("POST", "/v1/health-auto-export", token: f.appToken, body: Self.push()))
        #expect(second["new"] as? Int == 0)
        #expect(second["unchanged"] as? Int == 9)
        // Today's total grew: the new point replaces the one it updates (its sync version is newer).
        let third = try ServiceFixture.object(try await f.request("POST", "/v1/health-auto-export", token: f.appToken,
                                                                  body: Self.push(steps: 900)))
        #expect(third["new"] as? Int == 1)
        let steps = try ServiceFixture.lines(try await f.request("GET", "/v1/samples/stepCount?ascending=true", token: f.appToken))
        #expect(steps.compactMap { $0["value"] as? Double } == [120, 900])
        #expect(steps.allSatisfy { $0["source"] as? String == "com.example.scale" })
        let heart = try ServiceFixture.lines(try await f.request("GET", "/v1/samples/heartRate?ascending=true", token: f.appToken))
        #expect(heart.compactMap { $0["value"] as? Double } == [64.5, 66])
        #expect(heart.first?["start"] as? String == "2024-02-06T15:00:00Z")
        let sleep = try ServiceFixture.lines(try await f.request("GET", "/v1/samples/sleepAnalysis?ascending=true", token: f.appToken))
        #expect(sleep.compactMap { $0["valueName"] as? String }
                == ["HKCategoryValueSleepAnalysisAsleepCore", "HKCategoryValueSleepAnalysisAsleepDeep"])
        let run = try ServiceFixture.lines(try await f.request("GET", "/v1/samples/workout", token: f.appToken))
        #expect(run.first?["uuid"] as? String == Self.workout)
        #expect(try ServiceFixture.lines(try await f.request("GET", "/v1/samples/bloodPressure", token: f.appToken)).count == 1)
        // The unknown metric is kept raw: the owner sees it, no app does.
        let raw = try await f.owner.rawSamples(identifier: "HealthAutoExport:toothbrushing")
        #expect(raw.count == 1)
        #expect(raw.first?.value == #"{"date":"2024-02-06 07:45:00 -0800","qty":1,"value":"Complete"}"#)
        try await f.stop()
    }

    @Test func aPushTheAppMayNotSaveIsRefusedWholeAndABrokenOneNamesThePoint() async throws {
        let f = try await ServiceFixture(shareTypes: [.quantity(.stepCount)], readTypes: [])
        let refused = try await f.request("POST", "/v1/health-auto-export", token: f.appToken, body: Self.push())
        #expect(refused.status == 403)
        #expect(try ServiceFixture.lines(try await f.request("GET", "/v1/samples/stepCount", token: f.appToken)).isEmpty)
        let broken = try await f.request("POST", "/v1/health-auto-export", token: f.appToken,
                                         body: #"{"data":{"metrics":[{"name":"step_count","units":"count","data":[{"date":"yesterday","qty":1}]}]}}"#)
        #expect(broken.status == 422)
        #expect(try ServiceFixture.object(broken)["detail"] as? String
                == "metrics[0].data[0].date: 'yesterday' is not a date (yyyy-MM-dd HH:mm:ss Z)")
        let notAPush = try await f.request("POST", "/v1/health-auto-export", token: f.appToken, body: #"{"metrics":[]}"#)
        #expect(notAPush.status == 422)
        let wrongUnit = try await f.request("POST", "/v1/health-auto-export", token: f.appToken,
                                            body: #"{"data":{"metrics":[{"name":"step_count","units":"kg","data":[{"date":"2024-02-06 07:00:00 -0800","qty":1}]}]}}"#)
        #expect(try ServiceFixture.object(wrongUnit)["detail"] as? String == "metrics[0].data[0]: unit 'kg' does not fit stepCount")
        try await f.stop()
    }
}
