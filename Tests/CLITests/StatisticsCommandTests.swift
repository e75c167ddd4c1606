import Foundation
import Testing
import TestSupport

/// `healthledger statistics` and `healthledger priority`: worked examples through
/// the binary, tables, JSON Lines, errors and exit codes.
struct StatisticsCommandTests {
    static let watch = "com.apple.health.WATCH-UUID", phone = "com.apple.health.PHONE-UUID"

    /// A ledger with a Watch (60 steps 10:00–11:00) and an iPhone (120 steps 10:30–11:30,
    /// 100 steps 13:57–14:02), and a heart-rate app that may not read.
    static func ledger() throws -> TemporaryDirectory {
        let dir = TemporaryDirectory()
        func run(_ args: [String]) throws {
            let r = try CLIRunner.run(["--ledger", dir.path] + args)
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
        try run(["init"])
        for (id, name) in [(watch, "Alice's Apple Watch"), (phone, "Alice's iPhone"), ("com.example.hr", "HR")] {
            try run(["app", "register", "--app", id, "--name", name, "--share-purpose", "s", "--read-purpose", "r"])
        }
        try run(["--app", watch, "request", "--share", "stepCount", "--read", "stepCount"])
        try run(["--app", phone, "request", "--share", "stepCount", "--read", "stepCount"])
        try run(["--app", "com.example.hr", "request", "--share", "heartRate", "--read", "heartRate"])
        try run(["authorize", "--app", phone, "--share", "stepCount", "--read", "stepCount"])
        try run(["authorize", "--app", watch, "--share", "stepCount", "--read", "stepCount"])
        try run(["authorize", "--app", "com.example.hr", "--share", "heartRate"])
        for (app, v, from, to) in [(watch, "60", "10:00", "11:00"), (phone, "120", "10:30", "11:30"), (phone, "100", "13:57", "14:02")] {
            try run(["save", "--app", app, "--type", "stepCount", "--value", v, "--unit", "count",
                     "--start", "2025-06-01T\(from):00Z", "--end", "2025-06-01T\(to):00Z"])
        }
        for (v, from, to) in [("60", "10:00", "10:50"), ("120", "10:50", "11:00")] {
            try run(["save", "--app", "com.example.hr", "--type", "heartRate", "--value", v, "--unit", "count/min",
                     "--start", "2025-06-01T\(from):00Z", "--end", "2025-06-01T\(to):00Z"])
        }
        return dir
    }

    @Test func hourlySumsMergeByPriorityAndSplitByTime() throws {
        let dir = try Self.ledger()
        let r = try CLIRunner.run(["--ledger", dir.path, "statistics", "stepCount", "--owner", "--sum", "--by", "hour",
                                   "--separate-by-source"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == """
            start\tend\tsum (count)
            2025-06-01T10:00:00+00:00\t2025-06-01T11:00:00+00:00\t60
              com.apple.health.PHONE-UUID\t\t60
              com.apple.health.WATCH-UUID\t\t60
            2025-06-01T11:00:00+00:00\t2025-06-01T12:00:00+00:00\t60
              com.apple.health.PHONE-UUID\t\t60
            2025-06-01T13:00:00+00:00\t2025-06-01T14:00:00+00:00\t60
              com.apple.health.PHONE-UUID\t\t60
            2025-06-01T14:00:00+00:00\t2025-06-01T15:00:00+00:00\t40
              com.apple.health.PHONE-UUID\t\t40

            """)
        // the owner ranks the iPhone first: 150 over the morning instead of 120
        let set = try CLIRunner.run(["--ledger", dir.path, "priority", "set", "stepCount", Self.phone, Self.watch])
        #expect(set.status == 0, "\(set.stderr)")
        let day = try CLIRunner.run(["--ledger", dir.path, "statistics", "stepCount", "--owner", "--by", "day", "--json",
                                     "--from", "2025-06-01T00:00:00Z", "--to", "2025-06-03T00:00:00Z"])
        #expect(day.stdout == """
            {"start":"2025-06-01T00:00:00+00:00","end":"2025-06-02T00:00:00+00:00","type":"stepCount","unit":"count","values":{"sum":250}}
            {"start":"2025-06-02T00:00:00+00:00","end":"2025-06-03T00:00:00+00:00","type":"stepCount","unit":"count","empty":true}

            """)
        let show = try CLIRunner.run(["--ledger", dir.path, "priority", "show", "stepCount"])
        #expect(show.stdout == "1\t\(Self.phone)\towner\n2\t\(Self.watch)\towner\n")
        // as of before the change: the default order (Watch first) gave 220
        let log = try CLIRunner.run(["--ledger", dir.path, "--json", "log"])
        let times = log.stdout.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "\"recordedAt\":\"") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "\"" })
        }
        let beforeChange = try #require(times.dropLast().last)
        let old = try CLIRunner.run(["--ledger", dir.path, "statistics", "stepCount", "--owner", "--as-of", beforeChange])
        #expect(old.stdout.hasSuffix("\t220\n"), "\(old.stdout) \(old.stderr)")
        // replay shows the order in force at its point: none before the change, the owner's after
        let replayOld = try CLIRunner.run(["--ledger", dir.path, "replay", "--as-of", beforeChange])
        #expect(!replayOld.stdout.contains("source priority"))
        let replayNow = try CLIRunner.run(["--ledger", dir.path, "replay"])
        #expect(replayNow.stdout.hasSuffix("source priority\n  stepCount  \(Self.phone) > \(Self.watch)\n"), "\(replayNow.stdout)")
    }

    @Test func averagesConvertAndReadDeniedAppsSeeTheirOwn() throws {
        let dir = try Self.ledger()
        let r = try CLIRunner.run(["--ledger", dir.path, "statistics", "heartRate", "--app", "com.example.hr", "--average",
                                   "--max", "--unit", "count/min", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("\"values\":{\"average\":70,\"max\":120}"), "\(r.stdout)")
        // the phone may read steps: every source; the hr app may not: nothing of others'
        let none = try CLIRunner.run(["--ledger", dir.path, "statistics", "stepCount", "--app", "com.example.hr"])
        #expect(none.status == 0)
        #expect(none.stdout == "start\tend\tsum (count)\n")
    }

    /// Pacific/Apia skipped 2011-12-30 when it crossed the date line:
    /// no bucket of no length for it, in JSON or the table; and the table rounds as the
    /// Health app shows (steps whole) while JSON keeps every digit.
    @Test func aDayTheZoneSkippedIsNoBucketAndTheTableRoundsSteps() throws {
        let dir = TemporaryDirectory()
        func run(_ args: [String], stdin: String? = nil) throws -> CLIResult {
            let r = try CLIRunner.run(["--ledger", dir.path] + args, stdin: stdin)
            #expect(r.status == 0, "\(args): \(r.stderr)")
            return r
        }
        _ = try run(["init", "--tz", "Pacific/Apia"])
        _ = try run(["app", "register", "--app", "com.x", "--name", "X", "--share-purpose", "s", "--read-purpose", "r"])
        _ = try run(["--app", "com.x", "request", "--share", "stepCount", "--read", "stepCount"])
        _ = try run(["authorize", "--app", "com.x", "--requested"])
        // 100 steps over 36 hours: 16 on 29 December, 20 on 31 December (local)
        _ = try run(["--app", "com.x", "ingest"],
                    stdin: #"{"type":"stepCount","value":100,"unit":"count","start":"2011-12-29T08:00:00-10:00","end":"2011-12-31T20:00:00+14:00"}"# + "\n")
        let json = try run(["statistics", "stepCount", "--owner", "--by", "day", "--json", "--from", "2011-12-28", "--to", "2012-01-02"])
        #expect(json.stdout == """
            {"start":"2011-12-28T00:00:00-10:00","end":"2011-12-29T00:00:00-10:00","type":"stepCount","unit":"count","empty":true}
            {"start":"2011-12-29T00:00:00-10:00","end":"2011-12-31T00:00:00+14:00","type":"stepCount","unit":"count","values":{"sum":44.44444444444444}}
            {"start":"2011-12-31T00:00:00+14:00","end":"2012-01-01T00:00:00+14:00","type":"stepCount","unit":"count","values":{"sum":55.55555555555556}}
            {"start":"2012-01-01T00:00:00+14:00","end":"2012-01-02T00:00:00+14:00","type":"stepCount","unit":"count","empty":true}

            """)
        let table = try run(["statistics", "stepCount", "--owner", "--by", "day"])
        #expect(table.stdout == """
            start\tend\tsum (count)
            2011-12-29T00:00:00-10:00\t2011-12-31T00:00:00+14:00\t44
            2011-12-31T00:00:00+14:00\t2012-01-01T00:00:00+14:00\t56

            """)
    }

    /// Averages in the table to four significant digits (never
    /// fewer than the whole part), every digit in JSON.
    @Test func theTableShowsAveragesToFourSignificantDigits() throws {
        let dir = try Self.ledger()
        for (v, at) in [("61", "12:00"), ("62", "12:01"), ("62", "12:02")] {
            let r = try CLIRunner.run(["--ledger", dir.path, "save", "--app", "com.example.hr", "--type", "heartRate", "--value", v,
                                       "--unit", "count/min", "--start", "2025-06-02T\(at):00Z"])
            #expect(r.status == 0, "\(r.stderr)")
        }
        let day = ["--ledger", dir.path, "statistics", "heartRate", "--owner", "--average", "--unit", "count/min",
                   "--from", "2025-06-02T00:00:00Z", "--to", "2025-06-03T00:00:00Z"]
        let table = try CLIRunner.run(day)
        #expect(table.stdout == "start\tend\taverage (count/min)\n2025-06-02T00:00:00+00:00\t2025-06-03T00:00:00+00:00\t61.67\n")
        let json = try CLIRunner.run(day + ["--json"])
        #expect(json.stdout.contains("\"values\":{\"average\":61.66666666666666}"), "\(json.stdout)")
        // in the canonical count/s
        let perSecond = try CLIRunner.run(Array(day.dropLast(6)) + ["--from", "2025-06-02T00:00:00Z", "--to", "2025-06-03T00:00:00Z"])
        #expect(perSecond.stdout.hasSuffix("\t1.028\n"), "\(perSecond.stdout)")
    }

    @Test func badRequestsFailWithTypedErrors() throws {
        let dir = try Self.ledger()
        let wrong = try CLIRunner.run(["--ledger", dir.path, "statistics", "stepCount", "--owner", "--average"])
        #expect(wrong.status == 3)
        #expect(wrong.stderr.contains("optionNotAllowed: discreteAverage does not apply to stepCount"))
        let by = try CLIRunner.run(["--ledger", dir.path, "statistics", "stepCount", "--owner", "--by", "fortnight"])
        #expect(by.status == 2)
        let every = try CLIRunner.run(["--ledger", dir.path, "statistics", "stepCount", "--owner", "--by", "day", "--every", "0"])
        #expect(every.status == 2)
        let unit = try CLIRunner.run(["--ledger", dir.path, "statistics", "stepCount", "--owner", "--unit", "kg"])
        #expect(unit.status == 3)
        let unknown = try CLIRunner.run(["--ledger", dir.path, "priority", "set", "stepCount", "com.example.nobody"])
        #expect(unknown.status == 4)  // not found, as every other command and the server (404) say it
        #expect(unknown.stderr.contains("appNotRegistered"))
        let help = try CLIRunner.run(["statistics", "--help"])
        #expect(help.stdout.contains("`stats` is another"))
        let stats = try CLIRunner.run(["stats", "--help"])
        #expect(stats.stdout.contains("healthledger statistics"))
    }
}
