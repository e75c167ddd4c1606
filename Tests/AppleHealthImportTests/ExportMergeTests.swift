import Foundation
import HealthModel
import LedgerCore
import LedgerLog
import Testing
import TestSupport
@testable import AppleHealthImport

/// A newer export of the same person merged into a ledger that holds an older one:
/// A and B are built from the shared ashtom-hkimport-2017 export (10,224 one-line
/// Records, 122 correlations). A lacks every tenth one-line Record (from the 4th), B
/// lacks every tenth from the 8th — so B adds what A lacked and drops what A had —,
/// and a sync-identified body mass is at version 1 in A and version 2 (another
/// value) in B; B's ExportDate is later.
struct ExportMergeTests {
    static let source = SharedExports.root.map { $0 + "/ashtom-hkimport-2017/export.xml" }

    static let syncedRecord = """
         <Record type="HKQuantityTypeIdentifierBodyMass" sourceName="Scale" sourceVersion="1" unit="kg" creationDate="2017-01-01 08:00:00 +0100" startDate="2017-01-01 08:00:00 +0100" endDate="2017-01-01 08:00:00 +0100" value="VALUE">
          <MetadataEntry key="HKMetadataKeySyncIdentifier" value="scale-2017-01-01"/>
          <MetadataEntry key="HKMetadataKeySyncVersion" value="VERSION"/>
         </Record>
        """

    /// The shared export without the one-line Records whose index (among them) is
    /// `drop` modulo 10, with the synced record at `version` and `exportDate`.
    static func variant(_ xml: String, drop: Int, version: Int, value: String, exportDate: String) -> String {
        var out: [Substring] = []
        var index = 0
        var inserted = false
        for line in xml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(" <Record ") {
                if !inserted {
                    out.append(Substring(syncedRecord.replacingOccurrences(of: "VALUE", with: value)
                        .replacingOccurrences(of: "VERSION", with: String(version))))
                    inserted = true
                }
                if line.hasSuffix("/>") {
                    defer { index += 1 }
                    if index % 10 == drop { continue }
                }
            }
            out.append(line)
        }
        return out.joined(separator: "\n").replacingOccurrences(of: "<ExportDate value=\"2017-11-07 10:05:13 +0200\"/>",
                                                                 with: "<ExportDate value=\"\(exportDate)\"/>")
    }

    /// Every live sample of a ledger, type by type through the query engine (raw
    /// records slot by slot).
    static func liveSamples(_ ledger: Ledger) async throws -> Set<Sample> {
        var out = Set<Sample>()
        for code in await ledger.state.samples.typeCodesPresent {
            if let type = ObjectType(code: code) {
                out.formUnion(try await ledger.samples(SampleQuery(type: type), visibility: .everything))
                continue
            }
            for slot in await ledger.state.samples.orderedSlotsIfNeeded(code) where !(await ledger.state.samples.entry(slot).isDeleted) {
                out.insert(try await ledger.sample(slot: slot))
            }
        }
        return out
    }

    @Test(.enabled(if: source != nil, "needs ../shared/data/apple-health/ashtom-hkimport-2017"), .tags(.sweep), .disabled(if: Sweeps.leftOut, Sweeps.reason))
    func aNewerExportMergesToWhatAFreshImportOfItGives() async throws {
        let xml = try String(contentsOfFile: try #require(Self.source), encoding: .utf8)
        let exports = TemporaryDirectory("exports")
        let a = try SmallExport.write(Self.variant(xml, drop: 3, version: 1, value: "80.5", exportDate: "2017-11-07 10:05:13 +0200"),
                                      named: "a.xml", in: exports.path)
        let b = try SmallExport.write(Self.variant(xml, drop: 7, version: 2, value: "80.1", exportDate: "2017-12-01 09:00:00 +0100"),
                                      named: "b.xml", in: exports.path)

        // B alone, into an empty ledger: what the merged ledger must answer.
        let freshDir = TemporaryDirectory("fresh")
        let fresh = try Ledger.create(freshDir.fs)
        _ = try await AppleHealthImporter.run(try ExportSource(path: b), into: fresh)
        let expected = try await Self.liveSamples(fresh)
        try await fresh.close()

        let dir = TemporaryDirectory("merged")
        let ledger = try Ledger.create(dir.fs)
        let first = try await AppleHealthImporter.run(try ExportSource(path: a), into: ledger)
        let fromA = try await Self.liveSamples(ledger)
        #expect(first.samplesSaved == fromA.count - first.correlationMembers)

        let merged = try await AppleHealthImporter.run(try ExportSource(path: b), into: ledger)
        let live = try await Self.liveSamples(ledger)
        // Every query answers as B alone: the same samples, UUIDs and values included.
        #expect(live.count == expected.count)
        #expect(live == expected)
        let bodyMass = try await ledger.samples(SampleQuery(type: .quantity(.bodyMass)), visibility: .everything)
        let synced = bodyMass.filter { $0.common.source?.name == "Scale" }
        #expect(synced.count == 1)
        if case .quantity(let q)? = synced.first { #expect(q.quantity.value == 80.1) }

        // What B dropped is in the log as deleted: the records by the import that found
        // them absent, the old sync version by its replacement.
        let dropped = fromA.subtracting(expected)
        let added = expected.subtracting(fromA)
        #expect(dropped.count > 1000 && added.count > 1000)
        #expect(merged.samplesSaved == added.count)
        #expect(merged.unchanged == fromA.count - first.correlationMembers - dropped.count)
        #expect(merged.removed == dropped.count - 1)  // the old version went by its replacement
        let state = await ledger.state
        for sample in dropped {
            let slot = try #require(try state.samples.slot(of: sample.uuid))
            #expect(state.samples.entry(slot).isDeleted)
        }
        #expect(state.samples.deletedCount == dropped.count)
        let removal = try #require(state.samples.tombstones.last)
        #expect(removal.actor == .owner)
        #expect(state.eventCounts[EventKind.absentFromExport.rawValue] == 1)
        try await ledger.close()
        let report = try LedgerVerifier.verify(dir.fs)
        #expect(report.isIntact)

        // B once more: nothing new, nothing removed.
        let reopened = try Ledger.open(dir.fs)
        let again = try await AppleHealthImporter.run(try ExportSource(path: b), into: reopened)
        #expect(again.samplesSaved == 0 && again.removed == 0)
        #expect(again.unchanged == expected.count - first.correlationMembers)
        try await reopened.close()
    }
}
