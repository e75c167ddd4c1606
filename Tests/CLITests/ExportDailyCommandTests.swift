import Foundation
import Testing
import TestSupport

/// `export csv --wide --by day`: a row per day of the owner's calendar, a column per
/// quantity type, its daily sum (cumulative) or average (any other), as statistics
/// computes them; what an app may read only; the refusals.
@Suite struct ExportDailyCommandTests {
    @Test func aWideDailyFileHasADayPerRowAndASumOrAnAveragePerType() throws {
        let (dir, _) = try ExportCommandTests.ledger()
        // One more body mass on 08-02 (an average of two), none on 08-01 or 08-03.
        let more = #"{"type":"bodyMass","value":73.75,"unit":"kg","start":"2027-08-02T19:00:00Z"}"# + "\n"
        #expect(try ExportCommandTests.run(dir, ["ingest", "--app", "com.example.a"], stdin: more).status == 0)
        let out = dir.path + "/daily"
        let r = try ExportCommandTests.run(dir, ["--tz", "UTC", "export", "csv", "--owner", "--wide", "--by", "day",
                                                 "--type", "stepCount", "--type", "bodyMass", "--out", out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "\(out)/daily.csv\t3 rows\n")
        let expected = "date,HKQuantityTypeIdentifierStepCount (count),HKQuantityTypeIdentifierBodyMass (kg)\r\n"
            + "2027-08-01,12.5,\r\n" + "2027-08-02,3235,73\r\n" + "2027-08-03,100,\r\n"
        #expect(try String(contentsOfFile: out + "/daily.csv", encoding: .utf8) == expected)
        // The sums statistics --by day gives.
        let stats = try ExportCommandTests.run(dir, ["--tz", "UTC", "--json", "statistics", "stepCount", "--owner", "--sum", "--by", "day"])
        for sum in ["12.5", "3235", "100"] { #expect(stats.stdout.contains(#""sum":\#(sum)"#), "\(stats.stdout)") }
        // An app that may read steps only: a steps column only.
        let app = try ExportCommandTests.run(dir, ["--tz", "UTC", "export", "csv", "--app", "com.example.b", "--wide", "--by", "day",
                                                   "--out", dir.path + "/app"])
        #expect(app.status == 0, "\(app.stderr)")
        #expect(try String(contentsOfFile: dir.path + "/app/daily.csv", encoding: .utf8)
                == "date,HKQuantityTypeIdentifierStepCount (count)\r\n2027-08-01,12.5\r\n2027-08-02,3235\r\n2027-08-03,100\r\n")
        let week = try ExportCommandTests.run(dir, ["export", "csv", "--owner", "--wide", "--by", "week", "--out", dir.path + "/week"])
        #expect(week.status == 2 && week.stderr == "healthledger: usage: --by takes day (one row per day)\n")
        let category = try ExportCommandTests.run(dir, ["export", "csv", "--owner", "--wide", "--by", "day", "--type", "sleepAnalysis",
                                                        "--out", dir.path + "/c"])
        #expect(category.status == 2)
        let alone = try ExportCommandTests.run(dir, ["export", "csv", "--owner", "--wide", "--out", dir.path + "/alone"])
        #expect(alone.status == 2)
    }
}
