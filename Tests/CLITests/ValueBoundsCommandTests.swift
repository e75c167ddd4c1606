import Foundation
import Testing
import TestSupport

/// Through the binary, a value beyond its type's bound is refused
/// at save; values an earlier release stored beyond it make `statistics` fail by name
/// (exit 1, a read failing on stored data) before printing anything, and the report
/// say which chart it could not draw, never drop a day or a chart silently.
struct ValueBoundsCommandTests {
    static let tooLarge = "the ledger holds stepCount values too large to add up (saved before values were bounded at |value| ≤ 1e15 count (no measurement is larger, and sums must stay finite))"

    @Test func ingestRefusesAStepCountBeyondItsBoundAndAppendsNothing() throws {
        let dir = TemporaryDirectory()
        for args in [["init"], ["app", "register", "--app", "com.x", "--name", "X", "--share-purpose", "s", "--read-purpose", "r"],
                     ["--app", "com.x", "request", "--share", "stepCount", "--read", "stepCount"], ["authorize", "--app", "com.x", "--requested"]] {
            let r = try CLIRunner.run(["--ledger", dir.path] + args)
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
        let log = dir.url.appendingPathComponent("ledger.log")
        let before = try Data(contentsOf: log)
        let line = #"{"type":"stepCount","value":1e308,"unit":"count","start":"2026-03-01T08:00:00Z"}"#
        let r = try CLIRunner.run(["--ledger", dir.path, "--app", "com.x", "ingest"], stdin: line + "\n")
        #expect(r.status == 3)
        #expect(r.stderr == "healthledger: line 1: valueOutOfRange: stepCount value = 1e+308 is outside |value| ≤ 1e15 count (no measurement is larger, and sums must stay finite); lines 1-1 were not appended\n")
        #expect(r.stdout == "")
        #expect(try Data(contentsOf: log) == before)
    }

    /// A ledger an earlier release wrote: 100 steps on 28 February and 2 March, two
    /// samples of 1e308 steps on 1 March, a heart rate of 1e308 count/s on 1 March.
    static func earlierLedger() async throws -> TemporaryDirectory {
        let dir = TemporaryDirectory()
        try await EarlierReleaseLedgers.create(at: dir.path, [
            (.stepCount, 100, "2026-02-28T09:00:00Z", "2026-02-28T10:00:00Z"),
            (.stepCount, 1e308, "2026-03-01T08:00:00Z", "2026-03-01T08:30:00Z"),
            (.stepCount, 1e308, "2026-03-01T09:00:00Z", "2026-03-01T09:30:00Z"),
            (.stepCount, 100, "2026-03-02T09:00:00Z", "2026-03-02T10:00:00Z"),
            (.heartRate, 1e308, "2026-03-01T09:00:00Z", "2026-03-01T09:00:00Z"),
        ])
        return dir
    }

    @Test func statisticsOverValuesTooLargeToAddUpFailByNameBeforePrintingAnything() async throws {
        let dir = try await Self.earlierLedger()
        let day = "the stepCount sum from 2026-03-01T00:00:00Z to 2026-03-02T00:00:00Z is not a finite number: \(Self.tooLarge)"
        for json in [false, true] {
            let r = try CLIRunner.run(["--ledger", dir.path, "statistics", "stepCount", "--owner", "--by", "day"] + (json ? ["--json"] : []))
            #expect(r.status == 1)
            #expect(r.stdout == "")
            #expect(r.stderr == "healthledger: statisticNotFinite: \(day)\n")
        }
        let whole = try CLIRunner.run(["--ledger", dir.path, "statistics", "stepCount", "--owner"])
        #expect(whole.status == 1)
        #expect(whole.stderr == "healthledger: statisticNotFinite: the stepCount sum from 2026-02-28T09:00:00Z to 2026-03-02T10:00:00Z is not a finite number: \(Self.tooLarge)\n")
        // the days around it are answered; the log itself is valid
        let other = try CLIRunner.run(["--ledger", dir.path, "statistics", "stepCount", "--owner", "--by", "day", "--from", "2026-03-02",
                                       "--to", "2026-03-03"])
        #expect(other.status == 0)
        #expect(other.stdout == "start\tend\tsum (count)\n2026-03-02T00:00:00+00:00\t2026-03-03T00:00:00+00:00\t100\n")
        #expect(try CLIRunner.run(["--ledger", dir.path, "verify"]).status == 0)
    }

    @Test func theReportNamesEachChartItCouldNotDraw() async throws {
        let dir = try await Self.earlierLedger()
        let out = dir.url.deletingLastPathComponent().appendingPathComponent("report.html")
        let r = try CLIRunner.run(["--ledger", dir.path, "report", "--owner", "--now", "2026-03-10T00:00:00Z", "--out", out.path])
        #expect(r.status == 0, "\(r.stderr)")
        let html = try String(contentsOf: out, encoding: .utf8)
        #expect(html.contains("<p class=\"problem\" id=\"not-drawn-steps\"><strong>Daily steps</strong>: not drawn: statisticNotFinite: the stepCount sum from 2026-03-01T00:00:00Z to 2026-03-02T00:00:00Z is not a finite number"))
        #expect(html.contains("<p class=\"problem\" id=\"not-drawn-heart-rate\"><strong>Heart rate per day</strong>: not drawn: statisticNotFinite: the heartRate minimum from 2026-03-01T00:00:00Z to 2026-03-02T00:00:00Z is not a finite number"))
        #expect(!html.contains("id=\"fig-steps\""))
        #expect(!html.contains("id=\"fig-heart-rate\""))
    }
}
