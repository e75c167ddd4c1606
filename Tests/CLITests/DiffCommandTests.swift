import Foundation
import Testing
import TestSupport

/// `diff`: two imports of one person's exports — a record dropped, one added, a value
/// changed, a sync version bumped — show exactly those, with the import's own counts;
/// a point against itself shows nothing; the other points and the refusals.
@Suite struct DiffCommandTests {
    static func export(date: String, records: [String]) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <HealthData locale="en_US">
         <ExportDate value="\(date)"/>
         <Me HKCharacteristicTypeIdentifierDateOfBirth="1985-03-14" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale"/>
        \(records.joined(separator: "\n"))
        </HealthData>

        """
    }

    static func steps(_ value: Int, day: Int) -> String {
        #" <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Health" unit="count" creationDate="2019-05-0\#(day) 08:00:00 -0400" startDate="2019-05-0\#(day) 07:00:00 -0400" endDate="2019-05-0\#(day) 08:00:00 -0400" value="\#(value)"/>"#
    }

    static func mass(_ value: Int, day: Int, sync: (String, Int)? = nil) -> String {
        let open = #" <Record type="HKQuantityTypeIdentifierBodyMass" sourceName="Health" unit="lb" creationDate="2019-05-0\#(day) 08:00:00 -0400" startDate="2019-05-0\#(day) 07:59:00 -0400" endDate="2019-05-0\#(day) 07:59:00 -0400" value="\#(value)""#
        guard let (id, version) = sync else { return open + "/>" }
        return open + ">\n  <MetadataEntry key=\"HKMetadataKeySyncIdentifier\" value=\"\(id)\"/>\n  <MetadataEntry key=\"HKMetadataKeySyncVersion\" value=\"\(version)\"/>\n </Record>"
    }

    static func importID(_ r: CLIResult) throws -> String {
        let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        return o["importId"] as! String
    }

    @Test func twoImportsOfOnePersonShowExactlyWhatTheSecondChanged() throws {
        let dir = TemporaryDirectory("diff")
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        let march = dir.path + "/march.xml", april = dir.path + "/april.xml"
        try Self.export(date: "2019-06-17 21:07:11 -0400",
                        records: [Self.steps(100, day: 1), Self.steps(200, day: 2), Self.mass(150, day: 3), Self.mass(151, day: 4, sync: ("s4", 1))])
            .write(toFile: march, atomically: true, encoding: .utf8)
        try Self.export(date: "2019-07-17 21:07:11 -0400",
                        records: [Self.steps(100, day: 1), Self.mass(152, day: 3), Self.mass(153, day: 4, sync: ("s4", 2)), Self.steps(300, day: 6)])
            .write(toFile: april, atomically: true, encoding: .utf8)
        let ledger = dir.path + "/l"
        let first = try CLIRunner.run(["--ledger", ledger, "--json", "import-apple-health", march])
        #expect(first.status == 0, "\(first.stderr)")
        let second = try CLIRunner.run(["--ledger", ledger, "--json", "import-apple-health", april])
        #expect(second.status == 0, "\(second.stderr)")
        let a = "import:" + (try Self.importID(first)), b = "import:" + (try Self.importID(second))

        let r = try CLIRunner.run(["--ledger", ledger, "--json", "diff", a, b])
        #expect(r.status == 0, "\(r.stderr)")
        let changes = r.stdout.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        func value(_ o: Any?) -> Double? { (o as? [String: Any])?["value"] as? Double }
        #expect(changes.count == 4)
        guard changes.count == 4 else { return }
        #expect(changes[0]["change"] as? String == "removed" && value(changes[0]["sample"]) == 200)
        #expect(changes[0]["reason"] as? String == "absent from the export dated 2019-07-17 21:07:11 -0400")
        #expect(changes[1]["change"] as? String == "changed" && changes[1]["by"] as? String == "sameTypeSourceAndDates")
        #expect(value(changes[1]["before"]) == 150 && value(changes[1]["after"]) == 152)
        #expect(changes[2]["change"] as? String == "changed" && changes[2]["by"] as? String == "syncIdentity")
        #expect(value(changes[2]["before"]) == 151 && value(changes[2]["after"]) == 153)
        #expect(changes[3]["change"] as? String == "added" && value(changes[3]["sample"]) == 300)

        // The import's own counts: new = added + changed.
        let summary = try JSONSerialization.jsonObject(with: Data(second.stdout.utf8)) as! [String: Any]
        let merge = summary["merge"] as! [String: [String: Int]]
        let new = merge.values.map { $0["new"]! }.reduce(0, +)
        #expect(new == 3)

        let counted = try CLIRunner.run(["--ledger", ledger, "diff", a, b, "--summary"])
        #expect(counted.stdout == "HKQuantityTypeIdentifierBodyMass\t+0\t-0\t~2\nHKQuantityTypeIdentifierStepCount\t+1\t-1\t~0\n")
        let steps = try CLIRunner.run(["--ledger", ledger, "diff", a, b, "--type", "stepCount"])
        #expect(steps.stdout.split(separator: "\n").map { $0.prefix(2) } == ["- ", "+ "])
        // A point against itself: nothing, exit 0; backwards: the same changes reversed.
        let same = try CLIRunner.run(["--ledger", ledger, "diff", b, b])
        #expect(same.status == 0 && same.stdout.isEmpty)
        let back = try CLIRunner.run(["--ledger", ledger, "diff", b, a, "--summary"])
        #expect(back.stdout == "HKQuantityTypeIdentifierBodyMass\t+0\t-0\t~2\nHKQuantityTypeIdentifierStepCount\t+1\t-1\t~0\n")
        // Before anything and after the first import (@SEQ): the first import's four records added.
        let start = try CLIRunner.run(["--ledger", ledger, "--json", "diff", "@1", a, "--summary"])
        #expect(start.stdout.contains(#"{"type":"HKQuantityTypeIdentifierStepCount","added":2,"removed":0,"changed":0}"#), "\(start.stdout)")
        let unknown = try CLIRunner.run(["--ledger", ledger, "diff", a, "import:00000000-0000-0000-0000-000000000001"])
        #expect(unknown.status == 4)
        let bad = try CLIRunner.run(["--ledger", ledger, "diff", "@0", a])
        #expect(bad.status == 2)
    }
}
