import Foundation
import HealthModel
import Testing
@testable import HealthReport

@Suite struct ChartTicksTests {
    @Test func bodyMassInKilogramsGetsStepsOfTwo() {
        let t = LinearTicks.nice(min: 68.2, max: 74.9)
        #expect(t.values == [68, 70, 72, 74, 76])
        #expect(t.step == 2)
        #expect(t.decimals == 0)
    }

    @Test func stepsFromZeroGetStepsOfFiveThousand() {
        let t = LinearTicks.nice(min: 312, max: 12_345, includeZero: true)
        #expect(t.values == [0, 5000, 10_000, 15_000])
    }

    @Test func heartRateInBeatsPerMinuteGetsStepsOfFifty() {
        let t = LinearTicks.nice(min: 48, max: 182)
        #expect(t.values == [0, 50, 100, 150, 200])
    }

    @Test func bodyMassIndexOverASmallRangeGetsDecimals() {
        let t = LinearTicks.nice(min: 22.81, max: 22.93)
        #expect(t.values == [22.8, 22.85, 22.9, 22.95])
        #expect(t.decimals == 2)
    }

    @Test func oneValueGetsAnAxisAroundIt() {
        #expect(LinearTicks.nice(min: 70, max: 70).values == [60, 65, 70, 75, 80])
        #expect(LinearTicks.nice(min: 0, max: 0).values == [-1, -0.5, 0, 0.5, 1])
        #expect(LinearTicks.nice(min: .nan, max: 3).values == [0, 0.2, 0.4, 0.6, 0.8, 1])
    }

    static func at(_ text: String) -> Double { try! ISO8601.parse(text).timeIntervalSince1970 }
    static let utc = TimeZone(identifier: "UTC")!

    @Test func aDayGetsSixHourTicks() {
        let t = TimeTicks.ticks(from: Self.at("2026-03-01T00:00:00Z"), to: Self.at("2026-03-02T00:00:00Z"), in: Self.utc)
        #expect(t.step == .seconds(6 * 3600))
        #expect(t.labels == ["00:00", "06:00", "12:00", "18:00", "00:00"])
        #expect(t.values.first == Self.at("2026-03-01T00:00:00Z"))
    }

    @Test func aDayInHonoluluIsTickedOnLocalHours() {
        let zone = TimeZone(identifier: "Pacific/Honolulu")!
        let t = TimeTicks.ticks(from: Self.at("2026-03-01T10:00:00Z"), to: Self.at("2026-03-02T10:00:00Z"), in: zone)
        #expect(t.labels == ["00:00", "06:00", "12:00", "18:00", "00:00"])
        #expect(t.values == [Self.at("2026-03-01T10:00:00Z"), Self.at("2026-03-01T16:00:00Z"), Self.at("2026-03-01T22:00:00Z"),
                             Self.at("2026-03-02T04:00:00Z"), Self.at("2026-03-02T10:00:00Z")])
    }

    @Test func aMonthGetsMondays() {
        let t = TimeTicks.ticks(from: Self.at("2026-03-01T00:00:00Z"), to: Self.at("2026-03-31T00:00:00Z"), in: Self.utc)
        #expect(t.step == .weeks)
        #expect(t.labels == ["2 Mar", "9 Mar", "16 Mar", "23 Mar", "30 Mar"])
    }

    @Test func tenYearsGetEveryOtherYear() {
        let t = TimeTicks.ticks(from: Self.at("2016-01-01T00:00:00Z"), to: Self.at("2026-01-01T00:00:00Z"), in: Self.utc)
        #expect(t.step == .years(2))
        #expect(t.labels == ["2016", "2018", "2020", "2022", "2024", "2026"])
    }

    @Test func aQuarterGetsMonths() {
        let t = TimeTicks.ticks(from: Self.at("2026-01-15T00:00:00Z"), to: Self.at("2026-06-20T00:00:00Z"), in: Self.utc)
        #expect(t.step == .months(1))
        #expect(t.labels == ["Feb 2026", "Mar 2026", "Apr 2026", "May 2026", "Jun 2026"])
    }
}

@Suite struct DownsamplingTests {
    /// 1,000 points over 10 columns: each column's dip at +30 and peak at +70 survive,
    /// in time order, and nothing else.
    @Test func eachColumnKeepsItsMinimumAndMaximum() {
        var points: [ChartPoint] = []
        for i in 0..<1000 {
            let k = i / 100, offset = i % 100
            let y: Double = offset == 30 ? Double(-k - 1) : offset == 70 ? Double(500 + k) : Double(offset)
            points.append(ChartPoint(x: Double(i), y: y))
        }
        let shown = ColumnDownsampler.minMax(points, from: 0, to: 1000, columns: 10)
        var expected: [ChartPoint] = []
        for k in 0..<10 {
            expected.append(ChartPoint(x: Double(100 * k + 30), y: Double(-k - 1)))
            expected.append(ChartPoint(x: Double(100 * k + 70), y: Double(500 + k)))
        }
        #expect(shown == expected)
    }

    @Test func aPeakBeforeTheDipKeepsTimeOrder() {
        let points = (0..<9).map { ChartPoint(x: Double($0), y: [5, 9, 5, 5, 1, 5, 5, 5, 5][$0]) }
        #expect(ColumnDownsampler.minMax(points, from: 0, to: 9, columns: 1) == [ChartPoint(x: 1, y: 9), ChartPoint(x: 4, y: 1)])
    }

    @Test func fewPointsAreKeptAsTheyAre() {
        let points = (0..<20).map { ChartPoint(x: Double($0), y: Double($0 % 3)) }
        #expect(ColumnDownsampler.minMax(points, from: 0, to: 20, columns: 10) == points)
    }

    @Test func bandsKeepTheLowestLowAndHighestHigh() {
        let points = [ChartPoint(x: 0, y: 60, low: 50, high: 90), ChartPoint(x: 1, y: 70, low: 44, high: 80),
                      ChartPoint(x: 2, y: 80, low: 55, high: 181), ChartPoint(x: 10, y: 65, low: 60, high: 70)]
        let shown = ColumnDownsampler.band(points, from: 0, to: 12, columns: 2)
        #expect(shown == [ChartPoint(x: 0, y: 70, low: 44, high: 181), ChartPoint(x: 10, y: 65, low: 60, high: 70)])
    }
}

@Suite struct ChartSVGTests {
    @Test func aGapSplitsTheLineAndTheChartNamesItself() {
        let day = 86_400.0
        let points = [0, 1, 2, 10, 11].map { ChartPoint(x: $0 * day, y: 70 + $0) }
        let chart = Chart(id: "mass", title: "Body mass", description: "Weight <kg> & trend", unit: "kg",
                          xAxis: .time(TimeZone(identifier: "UTC")!), layers: [.line(name: "weight", points: points, style: 0, maxGap: 1.5 * day)])
        let svg = chart.svg()
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.contains("<title id=\"mass-title\">Body mass</title><desc id=\"mass-desc\">Weight &lt;kg&gt; &amp; trend</desc>"))
        let path: String? = svg.components(separatedBy: "<path d=\"").first { (p: String) -> Bool in
            p.hasPrefix("M") && p.contains("L") && p.contains("stroke-linejoin")
        }
        let moves: Int? = path.map { (p: String) -> Int in p.prefix { $0 != "\"" }.filter { $0 == "M" }.count }
        #expect(moves == 2)
        #expect(!svg.contains("nan") && !svg.contains("inf"))
    }

    @Test func coordinatesHaveOneDecimal() {
        #expect(SVGText.coordinate(12) == "12")
        #expect(SVGText.coordinate(12.04) == "12")
        #expect(SVGText.coordinate(12.25) == "12.3")
        #expect(SVGText.coordinate(-0.4) == "-0.4")
        #expect(SVGText.coordinate(-3.2) == "-3.2")
        #expect(SVGText.coordinate(.nan) == "0")
    }
}
