import Foundation
import Testing
import TestSupport

/// `query` as a user runs it: the total order, paging with --after, raw records.
struct QueryCommandTests {
    static func run(_ dir: TemporaryDirectory, _ args: [String], stdin: String? = nil) throws -> CLIResult {
        try CLIRunner.run(["--ledger", dir.path] + args, stdin: stdin)
    }

    static func uuid(_ n: Int) -> String { String(format: "00000000-0000-0000-0000-%012d", n) }

    @Test func tiesAreOrderedAndPagesResumeAfterTheCursor() throws {
        let dir = TemporaryDirectory()
        for args in [["init"], ["app", "register", "--app", "com.a", "--name", "A", "--share-purpose", "s", "--read-purpose", "r"],
                     ["--app", "com.a", "request", "--share", "stepCount", "--read", "stepCount"],
                     ["authorize", "--app", "com.a", "--share", "stepCount", "--read", "stepCount"]] {
            #expect(try Self.run(dir, args).status == 0)
        }
        // 1, 2, 3 tie on start and end (saved in that order, two records); 4 ends later
        var lines = ""
        for (n, end) in [(1, "09"), (2, "09"), (3, "09"), (4, "10")] {
            lines += #"{"type":"stepCount","value":\#(n),"unit":"count","start":"2026-03-01T08:00:00Z","end":"2026-03-01T\#(end):00:00Z","uuid":"\#(Self.uuid(n))"}"# + "\n"
        }
        #expect(try Self.run(dir, ["ingest", "--app", "com.a", "--batch", "2"], stdin: lines).status == 0)
        func order(_ extra: [String]) throws -> [String] {
            let r = try Self.run(dir, ["query", "--owner", "stepCount"] + extra)
            #expect(r.status == 0)
            return r.stdout.split(separator: "\n").map { String($0.prefix(36)) }
        }
        #expect(try order([]) == [4, 3, 2, 1].map(Self.uuid))
        #expect(try order(["--ascending"]) == [1, 2, 3, 4].map(Self.uuid))
        #expect(try order(["--sort", "end"]) == [4, 3, 2, 1].map(Self.uuid))
        #expect(try order(["--sort", "end", "--ascending"]) == [1, 2, 3, 4].map(Self.uuid))
        // pages of 3: the cursor on stderr, then the rest, then no cursor
        let first = try Self.run(dir, ["query", "--owner", "stepCount", "--limit", "3"])
        #expect(first.stdout.split(separator: "\n").map { String($0.prefix(36)) } == [4, 3, 2].map(Self.uuid))
        #expect(first.stderr == "next: \(Self.uuid(2))\n")
        let second = try Self.run(dir, ["query", "--owner", "stepCount", "--limit", "3", "--after", Self.uuid(2)])
        #expect(second.stdout.split(separator: "\n").map { String($0.prefix(36)) } == [Self.uuid(1)])
        #expect(second.stderr == "")
        let exact = try Self.run(dir, ["query", "--owner", "stepCount", "--limit", "4"])
        #expect(exact.stderr == "")
        // --where: a predicate, in any compatible unit; a bad expression names its column
        #expect(try order(["--where", "value >= 2 and not (uuid = \(Self.uuid(3)) or value > 3.5 count)"]) == [Self.uuid(2)])
        #expect(try order(["--where", "source = com.a and value < 2"]) == [Self.uuid(1)])
        for (expression, message) in [
            ("value >> 2", "column 8: expected a value after '>', found '>'"),
            ("value > 2 kg", "column 11: unit 'kg' does not fit stepCount (count)"),
            ("value > 2 and (source = com.a", "column 30: expected ')', found 'end of expression'"),
            ("colour = red", "column 1: unknown field 'colour'"),
        ] {
            let r = try Self.run(dir, ["query", "--owner", "stepCount", "--where", expression])
            #expect(r.status == 2)
            #expect(r.stderr == "healthledger: usage: --where: \(message)\n")
        }
        #expect(try Self.run(dir, ["query", "--help"]).stdout.contains("factor  := \"not\" factor | \"(\" expr \")\""))
        let bad = try Self.run(dir, ["query", "--owner", "stepCount", "--after", Self.uuid(9)])
        #expect(bad.status == 3)  // invalid input, as the server's 422 for the same cursor
        #expect(bad.stderr == "healthledger: invalidCursor: --after \(Self.uuid(9)) names no sample this query can see\n")
    }

    @Test func rawRecordsAreTheOwnersByIdentifierAsWritten() throws {
        let dir = TemporaryDirectory("work")
        try SmallExport.write(in: dir.path)
        let ledger = ["--ledger", dir.url.appendingPathComponent("L").path]
        func run(_ args: [String]) throws -> CLIResult { try CLIRunner.run(ledger + args, currentDirectory: dir.url) }
        #expect(try run(["import-apple-health", "export.xml"]).status == 0)
        let future = try run(["query", "--owner", "HKQuantityTypeIdentifierFutureThing", "--json"])
        #expect(future.status == 0)
        #expect(future.stdout == #"{"uuid":"9A8AF535-E793-87F0-A32E-C3AF5BA7E280","type":"HKQuantityTypeIdentifierFutureThing","kind":"unrecognized","value":"3","unit":"count","start":"2019-05-03T11:00:00Z","end":"2019-05-03T11:00:00Z","source":"export:Omron","creationDate":"2019-05-03T11:00:00Z","reason":"unknown type"}"# + "\n")
        let steps = try run(["query", "--owner", "--raw", "stepCount"])
        #expect(steps.stdout == "40A0F785-F436-80B2-B181-566BB36D01DE  HKQuantityTypeIdentifierStepCount   count  (raw: no value)  2019-05-04T10:00:00Z – 2019-05-04T11:00:00Z  export:Health\n")
        #expect(try run(["query", "--owner", "--raw"]).stdout.split(separator: "\n").count == 2)
        let audit = try run(["audit", "HKQuantityTypeIdentifierFutureThing"])
        #expect(audit.status == 0)
        #expect(audit.stdout.contains("\texport:Omron\tsaved 9A8AF535-E793-87F0-A32E-C3AF5BA7E280: raw HKQuantityTypeIdentifierFutureThing 3 count at 2019-05-03T11:00:00Z (unknown type)\t"))
        let stats = try run(["--json", "stats"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
        #expect(json["raw"] as? [String: [String: Int]] == ["HKQuantityTypeIdentifierFutureThing": ["export:Omron": 1],
                                                             "HKQuantityTypeIdentifierStepCount": ["export:Health": 1]])
        // never an app's
        let app = try run(["query", "--app", "export:Health", "HKQuantityTypeIdentifierFutureThing"])
        #expect(app.status == 3)
        #expect(app.stderr == "healthledger: dataTypeNotAvailable: unknown object type identifier 'HKQuantityTypeIdentifierFutureThing'\n")
        let appRaw = try run(["query", "--app", "export:Health", "--raw"])
        #expect(appRaw.status == 2)
        #expect(appRaw.stdout == "")
    }
}
