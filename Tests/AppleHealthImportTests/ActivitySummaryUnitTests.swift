import Foundation
import Testing
import TestSupport
@testable import AppleHealthImport

/// In the importer, an ActivitySummary's
/// `activeEnergyBurnedUnit` must be a unit of energy. Anything else — markup, text
/// that is no unit, a unit of another kind — refuses the import with its place, as
/// an unparsable number there does; it is never kept (nor printed back later).
struct ActivitySummaryUnitTests {
    /// SmallExport with the ActivitySummary's unit attribute written as `written`.
    static func export(unit written: String, in dir: TemporaryDirectory) throws -> String {
        let xml = SmallExport.xml.replacingOccurrences(of: "activeEnergyBurnedUnit=\"kcal\"", with: "activeEnergyBurnedUnit=\"\(written)\"")
        let path = try SmallExport.write(xml, in: dir.path)
        return path
    }

    @Test(arguments: [
        ("kcal&lt;script&gt;", "kcal<script>"),
        ("&lt;b&gt;kJ&lt;/b&gt;", "<b>kJ</b>"),
        ("count", "count"),
        ("km", "km"),
        ("", ""),
    ])
    func anEnergyUnitThatIsNoUnitOfEnergyIsRefusedWithItsPlace(_ written: String, _ value: String) throws {
        let dir = TemporaryDirectory("activity-unit")
        let path = try Self.export(unit: written, in: dir)
        defer { withExtendedLifetime(dir) {} }
        #expect {
            _ = try AppleHealthImporter.check(try ExportSource(path: path))
        } throws: { error in
            "\(error)" == "invalidValue: export.xml: line 36, column 2: activeEnergyBurnedUnit '\(value)' is not a unit of energy (kcal, kJ, Cal, …)"
        }
    }

    @Test(arguments: ["kcal", "kJ", "Cal", "J"])
    func unitsOfEnergyAreKeptAsWritten(_ unit: String) throws {
        let dir = TemporaryDirectory("activity-unit")
        let path = try Self.export(unit: unit, in: dir)
        defer { withExtendedLifetime(dir) {} }
        let summary = try AppleHealthImporter.check(try ExportSource(path: path))
        #expect(summary.activitySummaries == 1)
    }
}
