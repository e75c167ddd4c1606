import Foundation
import Testing
import TestSupport

/// The importer's deletion of what a newer export no
/// longer holds, checked directly. Export A, then A without one Record: exactly that
/// sample's UUID is deleted — gone from queries, one deletion of it in the change
/// feed (and none of any other type) — and the summary says 1 absent.
struct AbsentRecordDeletionTests {
    @Test func aNewerExportWithoutOneRecordDeletesExactlyThatSample() throws {
        let dir = TemporaryDirectory("absent")
        try SmallExport.write(in: dir.path)
        let sleepLine = try #require(SmallExport.xml.split(separator: "\n").first { $0.contains("HKCategoryTypeIdentifierSleepAnalysis") })
        let withoutSleep = SmallExport.xml.replacingOccurrences(of: sleepLine + "\n", with: "")
            .replacingOccurrences(of: "2019-06-17 21:07:11 -0400", with: "2019-07-01 09:00:00 -0400")
        #expect(withoutSleep.count == SmallExport.xml.count - sleepLine.count - 1)
        try SmallExport.write(withoutSleep, named: "newer.xml", in: dir.path)
        func run(_ args: [String]) throws -> CLIResult {
            try CLIRunner.run(["--ledger", "L"] + args, currentDirectory: dir.url)
        }

        #expect(try run(["import-apple-health", "export.xml"]).status == 0)
        let sleep = try run(["--json", "query", "--owner", "sleepAnalysis"])
        let sample = try #require(try JSONSerialization.jsonObject(with: Data(sleep.stdout.utf8)) as? [String: Any])
        let uuid = try #require(sample["uuid"] as? String)
        let types = ["sleepAnalysis", "bodyMass", "heartRateVariabilitySDNN", "workout", "bloodPressure"]
        var anchors: [String: String] = [:]
        var before: [String: [Substring]] = [:]
        for type in types {
            let feed = try run(["--json", "changes", type, "--owner"])
            #expect(feed.status == 0)
            let anchor = try #require(try JSONSerialization.jsonObject(with: Data(feed.stdout.split(separator: "\n").last!.utf8)) as? [String: Any])
            anchors[type] = try #require(anchor["anchor"] as? String)
            before[type] = try run(["--json", "query", "--owner", type]).stdout.split(separator: "\n")
        }

        let merged = try run(["import-apple-health", "newer.xml"])
        #expect(merged.status == 0)
        #expect(merged.stdout.contains("  samples saved:      0 new; 8 unchanged; 1 removed (absent from this export)\n"), "\(merged.stdout)")

        // Gone from queries; every other sample as it was.
        #expect(try run(["--json", "query", "--owner", "sleepAnalysis"]).stdout == "")
        for type in types where type != "sleepAnalysis" {
            #expect(try run(["--json", "query", "--owner", type]).stdout.split(separator: "\n") == before[type], "\(type)")
        }
        // The change feed: one deletion, of that UUID, and nothing in any other type.
        let feed = try run(["--json", "changes", "sleepAnalysis", "--owner", "--anchor", anchors["sleepAnalysis"]!])
        let lines = feed.stdout.split(separator: "\n")
        try #require(lines.count == 2)
        #expect(lines[0] == "{\"change\":\"deleted\",\"uuid\":\"\(uuid)\",\"type\":\"HKCategoryTypeIdentifierSleepAnalysis\",\"syncIdentifier\":null,\"syncVersion\":null,\"replacedBy\":null,\"erasedAt\":null}")
        for type in types where type != "sleepAnalysis" {
            let other = try run(["--json", "changes", type, "--owner", "--anchor", anchors[type]!])
            #expect(other.stdout.split(separator: "\n").count == 1, "\(type): \(other.stdout)")
        }
        let audit = try run(["audit", uuid])
        #expect(audit.stdout.contains("deleted \(uuid) (absent from the export dated 2019-07-01 09:00:00 -0400)"))
    }
}
