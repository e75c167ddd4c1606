import Foundation
import LedgerCore
import Testing
import TestSupport
@testable import AppleHealthImport

/// An export that shares not one record with what the ledger's
/// earlier imports brought (and still hold) would remove all of it as "absent from
/// this export" — another person's export, whatever its `<Me>` says or leaves out.
/// It is refused before anything is written, unless `force`. A record in common,
/// wherever in the export it first comes, lets the merge go on as before.
struct UnrelatedExportTests {
    /// SmallExport as another person's: no `<Me>`, exported later, every date a year
    /// earlier (so no Record, Workout or ActivitySummary in common).
    static let otherPerson: String = {
        var xml = SmallExport.xml.replacingOccurrences(of: "2019-06-17 21:07:11 -0400", with: "2019-07-01 09:00:00 -0400")
        xml = xml.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix(" <Me ") }.joined(separator: "\n")
        return xml.replacingOccurrences(of: "2019-05-0", with: "2018-05-0")
    }()

    @Test func anExportSharingNoRecordIsRefusedBeforeAnythingIsWritten() async throws {
        let dir = TemporaryDirectory()
        let exports = TemporaryDirectory("exports")
        let mine = try SmallExport.write(in: exports.path)
        let other = try SmallExport.write(Self.otherPerson, named: "other.xml", in: exports.path)
        let ledger = try Ledger.create(dir.fs)
        _ = try await AppleHealthImporter.run(try ExportSource(path: mine), into: ledger)
        let log = try ImportBehaviourTests.logBytes(dir)
        let last = await ledger.lastSequence

        for dryRun in [false, true] {
            await #expect {
                _ = try await AppleHealthImporter.run(try ExportSource(path: other), into: ledger, options: ImportOptions(dryRun: dryRun))
            } throws: { error in
                guard let error = error as? ImportError, case .unrelatedExport = error else { return false }
                return error.description == "unrelatedExport: this export shares no record with what the ledger's earlier imports brought (the last at event #1, exported 2019-06-17 21:07:11 -0400): merging it would remove all 8 samples and 1 activity summary of theirs still in the ledger, as absent from it (is it another person's export?); pass --force to merge it anyway"
            }
            #expect(await ledger.lastSequence == last, "dry run: \(dryRun)")
            #expect(try ImportBehaviourTests.logBytes(dir) == log, "dry run: \(dryRun)")
        }

        let forced = try await AppleHealthImporter.run(try ExportSource(path: other), into: ledger, options: ImportOptions(force: true))
        #expect(forced.removed == 9)
        #expect(forced.samplesSaved == 8)
        try await ledger.close()
    }

    /// One Record per batch, and the export's first Records are new: the record in
    /// common comes only in a later batch. The merge goes on, counting as before.
    @Test func aRecordInCommonAfterTheFirstBatchLetsTheMergeGoOn() async throws {
        let dir = TemporaryDirectory()
        let exports = TemporaryDirectory("exports")
        let mine = try SmallExport.write(in: exports.path)
        let newRecords = (1...3).map { i in
            " <Record type=\"HKQuantityTypeIdentifierBodyMass\" sourceName=\"Health\" unit=\"lb\" creationDate=\"2019-06-0\(i) 08:00:00 -0400\" startDate=\"2019-06-0\(i) 07:59:00 -0400\" endDate=\"2019-06-0\(i) 07:59:00 -0400\" value=\"16\(i)\"/>\n"
        }.joined()
        let meEnd = try #require(SmallExport.xml.range(of: "CardioFitnessMedicationsUse=\"None\"/>\n"))
        var newer = SmallExport.xml
        newer.insert(contentsOf: newRecords, at: meEnd.upperBound)
        newer = newer.replacingOccurrences(of: "2019-06-17 21:07:11 -0400", with: "2019-07-01 09:00:00 -0400")
        let newerPath = try SmallExport.write(newer, named: "newer.xml", in: exports.path)
        let ledger = try Ledger.create(dir.fs)
        _ = try await AppleHealthImporter.run(try ExportSource(path: mine), into: ledger)

        var options = ImportOptions()
        options.samplesPerBatch = 1
        let merged = try await AppleHealthImporter.run(try ExportSource(path: newerPath), into: ledger, options: options)
        #expect(merged.samplesSaved == 3)
        #expect(merged.unchanged == 9)
        #expect(merged.removed == 0)
        try await ledger.close()
    }

    /// Into a ledger that holds no import, there is nothing a merge could remove: the
    /// first import needs no record in common, and the same export again has them all.
    @Test func theFirstImportNeedsNoRecordInCommon() async throws {
        let dir = TemporaryDirectory()
        let exports = TemporaryDirectory("exports")
        let other = try SmallExport.write(Self.otherPerson, named: "other.xml", in: exports.path)
        let ledger = try Ledger.create(dir.fs)
        let first = try await AppleHealthImporter.run(try ExportSource(path: other), into: ledger)
        #expect(first.samplesSaved == 8)
        let again = try await AppleHealthImporter.run(try ExportSource(path: other), into: ledger)
        #expect(again.unchanged == 9)
        try await ledger.close()
    }
}
