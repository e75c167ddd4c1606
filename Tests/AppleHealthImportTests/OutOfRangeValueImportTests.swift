import Foundation
import Testing
import TestSupport
import HealthModel
import LedgerCore
@testable import AppleHealthImport

/// In the importer, a value outside its type's range is kept raw
/// with the reason, never stored as a sample and never dropped.
struct OutOfRangeValueImportTests {
    @Test func outOfRangeValuesAreKeptRawWithTheReason() async throws {
        let negative = SmallExport.xml.replacingOccurrences(
            of: "endDate=\"2019-05-01 07:59:00 -0400\" value=\"165.4\"", with: "endDate=\"2019-05-01 07:59:00 -0400\" value=\"-5\"")
        let dir = TemporaryDirectory()
        let path = try SmallExport.write(negative, in: dir.path + "-export")
        let ledger = try Ledger.create(dir.fs)
        let summary = try await AppleHealthImporter.run(try ExportSource(path: path), into: ledger)
        #expect(summary.recordsKeptRaw == 4)
        #expect(summary.rawReasons["HKQuantityTypeIdentifierBodyMass: valueOutOfRange: bodyMass value = -5.0 is outside > 0 lb"] == 2)
        try await ledger.close()
    }
}

/// Category types HealthKit added (symptoms, …) import as samples with their shared
/// value names; a category identifier this version does not know stays raw.
struct CategoryImportTests {
    @Test func documentedCategoryTypesImportAndUnknownOnesStayRaw() async throws {
        let anchor = "<Record type=\"HKCategoryTypeIdentifierSleepAnalysis\""
        let extra = """
        <Record type="HKCategoryTypeIdentifierHeadache" sourceName="Health" creationDate="2019-05-04 07:00:00 -0400" startDate="2019-05-04 06:00:00 -0400" endDate="2019-05-04 07:00:00 -0400" value="HKCategoryValueSeverityModerate"/>
        <Record type="HKCategoryTypeIdentifierFutureSymptom" sourceName="Health" creationDate="2019-05-04 07:00:00 -0400" startDate="2019-05-04 06:00:00 -0400" endDate="2019-05-04 07:00:00 -0400" value="HKCategoryValueSeverityMild"/>

        """
        let xml = SmallExport.xml.replacingOccurrences(of: anchor, with: extra + anchor)
        #expect(xml != SmallExport.xml)
        let dir = TemporaryDirectory()
        let path = try SmallExport.write(xml, in: dir.path + "-export")
        let ledger = try Ledger.create(dir.fs)
        let summary = try await AppleHealthImporter.run(try ExportSource(path: path), into: ledger)
        #expect(summary.recordsKeptRaw == 3)
        #expect(summary.rawReasons["HKCategoryTypeIdentifierFutureSymptom: unknown type"] == 1)
        let headache = try CategoryType(identifier: "headache")
        let found = try await ledger.samples(SampleQuery(type: .category(headache)), visibility: .everything)
        guard case .category(let sample)? = found.first, found.count == 1 else { Issue.record("headache: \(found)"); return }
        #expect(sample.value == 3)
        #expect(sample.type.rawName(of: sample.value) == "HKCategoryValueSeverityModerate")
        try await ledger.close()
    }
}
