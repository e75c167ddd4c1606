import Foundation
import Testing
import TestSupport

/// `healthledger statistics` and `healthledger priority`: the numbers through
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
        #expect(unknown.status == 5)
        #expect(unknown.stderr.contains("appNotRegistered"))
        let help = try CLIRunner.run(["statistics", "--help"])
        #expect(help.stdout.contains("`stats` is another"))
        let stats = try CLIRunner.run(["stats", "--help"])
        #expect(stats.stdout.contains("healthledger statistics"))
    }
}
