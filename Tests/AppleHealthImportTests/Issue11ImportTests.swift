import Foundation
import Testing
import TestSupport
import HealthModel
import LedgerCore
@testable import AppleHealthImport

/// Issue 11, bug 6, in the importer: a value outside its type's range is kept raw
/// with the reason, never stored as a sample and never dropped.
struct Issue11ImportTests {
    @Test func bug6OutOfRangeValuesAreKeptRawWithTheReason() async throws {
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
