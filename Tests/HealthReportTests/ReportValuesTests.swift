import Foundation
import HealthModel
import Testing
@testable import HealthReport

/// The report's folds, with exact values: local days, the 7-day mean, sleep
/// intervals counted once, tables rolled up into months, locale numbers.
@Suite struct ReportValuesTests {
    static func at(_ text: String) -> Double { try! ISO8601.parse(text).timeIntervalSince1970 }

    @Test func localDaysFollowTheZone() {
        var utc = LocalDays(TimeZone(identifier: "UTC")!)
        var honolulu = LocalDays(TimeZone(identifier: "Pacific/Honolulu")!)
        let t = Self.at("2026-03-01T05:00:00Z")
        #expect(LocalDays.text(ofDay: utc.day(t)) == "2026-03-01")
        #expect(LocalDays.text(ofDay: honolulu.day(t)) == "2026-02-28")  // 19:00 the day before
        #expect(honolulu.start(ofDay: honolulu.day(t)) == Self.at("2026-02-28T10:00:00Z"))
        #expect(LocalDays.text(ofDay: 0) == "1970-01-01" && LocalDays.text(ofDay: -1) == "1969-12-31")
        #expect(LocalDays.text(ofDay: LocalDays.firstDay(ofWeek: LocalDays.week(ofDay: utc.day(t)))) == "2026-02-23")  // a Monday
    }

    @Test func theMovingMeanCoversTheSevenDaysEndingEachDay() {
        let daily = zip([0, 1, 2, 10], [1.0, 2, 3, 4]).map { HealthReportData.DayValue(day: $0, value: $1) }
        #expect(ReportGatherer.movingAverage(daily, window: 7).map(\.value) == [1, 1.5, 2, 4])
    }

    @Test func overlappingSleepCountsOnce() {
        #expect(ReportGatherer.unionHours([(0, 3600), (1800, 7200), (10_800, 14_400)]) == 3)
        #expect(ReportGatherer.unionHours([]) == 0)
    }

    @Test func longTablesAreRolledUpIntoMonths() {
        var days = LocalDays(TimeZone(identifier: "UTC")!)
        let first = days.day(Self.at("2026-01-30T12:00:00Z"))
        let format = ReportFormat(locale: Locale(identifier: "en_US"), timeZone: TimeZone(identifier: "UTC")!)
        let table = ReportTable.daily(days: [first, first + 1, first + 2, first + 3], columns: ["Day", "Steps", "Mean"],
                                      values: [[1000, 2], [3000, nil], [500, 4], [1500, 8]], rollups: [.sum, .mean], maxRows: 3,
                                      format: format.number, decimals: [0, 1])
        #expect(table.columns == ["Month", "Steps", "Mean"])
        #expect(table.rows == [["2026-01", "4,000", "2.0"], ["2026-02", "2,000", "6.0"]])
        let short = ReportTable.daily(days: [first], columns: ["Day", "Steps"], values: [[1234.4]], rollups: [.sum],
                                      format: format.number, decimals: [0])
        #expect(short.rows == [["2026-01-30", "1,234"]] && short.rowUnit == "day")
    }

    @Test func numbersFollowTheLocale() {
        let zone = TimeZone(identifier: "UTC")!
        let us = ReportFormat(locale: Locale(identifier: "en_US"), timeZone: zone)
        let de = ReportFormat(locale: Locale(identifier: "de_DE"), timeZone: zone)
        #expect(us.number(22.857, decimals: 2) == "22.86")
        #expect(de.number(22.857, decimals: 2) == "22,86")
        #expect(us.number(1_234_567.26, decimals: 1) == "1,234,567.3")
        #expect(de.number(12_345, decimals: 0) == "12.345")
        #expect(us.number(-0.001, decimals: 2) == "0.00")
        #expect(us.number(-1500, decimals: 0) == "-1,500")
        #expect(us.number(.nan, decimals: 0) == "–")
        #expect(us.dateTime(Date(timeIntervalSince1970: Self.at("2026-03-01T09:05:00Z"))) == "2026-03-01 09:05")
    }
}
