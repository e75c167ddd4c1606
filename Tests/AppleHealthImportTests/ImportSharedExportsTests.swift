import Foundation
import HealthModel
import LedgerCore
import LedgerLog
import Testing
import TestSupport
@testable import AppleHealthImport

/// Every real export in ../shared imports with exactly the counts of its folder
/// README, verifies, and shows the <Me> of the XML as the profile.
struct ImportSharedExportsTests {
    static let cases: [(folder: String, file: String)] = [
        ("rgosdin-2019", "export.zip"), ("ashtom-hkimport-2017", "export.xml"), ("bwassim-2021", "export.zip"),
        ("k0rventen-2023", "test-export.zip"), ("k0rventen-2023", "test-export-cn.zip"),
        ("k0rventen-2023", "test-export3-malformed-dtd.zip"), ("dogsheep-fixtures-2019", "export.xml"),
    ]

    @Test(.enabled(if: SharedExports.root != nil, "needs ../shared/data/apple-health (the shared exports are absent)"), .tags(.sweep), .disabled(if: Sweeps.leftOut, Sweeps.reason),
          arguments: cases.map { "\($0.folder)/\($0.file)" })
    func importMatchesItsREADME(_ relative: String) async throws {
        let root = try #require(SharedExports.root)
        let folder = root + "/" + relative.split(separator: "/")[0]
        let expected = try SharedExports.expected(folder: folder)
        let dir = TemporaryDirectory()
        let fs = dir.fs
        let ledger = try Ledger.create(fs)
        let summary = try await AppleHealthImporter.run(try ExportSource(path: root + "/" + relative), into: ledger)

        // The counts of the README, element by element.
        #expect(summary.recordsByType == expected.recordsByType)
        #expect(summary.records == expected.total)
        #expect(summary.workouts == expected.elements["Workout", default: 0])
        #expect(summary.workoutEvents == expected.elements["WorkoutEvent", default: 0])
        #expect(summary.correlationsByType.values.reduce(0, +) == expected.elements["Correlation", default: 0])
        #expect(summary.correlationMembers == expected.elements["Record", default: 0] - expected.total)
        #expect(summary.recordsStoredAsMembers == summary.correlationMembers)
        #expect(summary.activitySummaries == expected.elements["ActivitySummary", default: 0])
        #expect(summary.beatLists == expected.elements["HeartRateVariabilityMetadataList", default: 0])
        #expect(summary.beats == expected.elements["InstantaneousBeatsPerMinute", default: 0])
        #expect(summary.metadataEntries <= expected.elements["MetadataEntry", default: 0])
        #expect(summary.exactDuplicateRecords == expected.exactDuplicates)
        #expect(summary.logicalDuplicateRecords == expected.logicalDuplicates)
        #expect(summary.exportDate == expected.exportDate)
        // Every element and attribute of the real exports has a place: nothing skipped.
        #expect(summary.keptElements.isEmpty)
        #expect(summary.keptChildren.isEmpty)
        #expect(summary.unknownAttributes.isEmpty)
        #expect(summary.missingRouteFiles.isEmpty)
        // Nothing dropped: every top-level Record is a sample (members once, as members).
        #expect(summary.samplesSaved == summary.records - summary.recordsStoredAsMembers
                + summary.correlationsByType.values.reduce(0, +) + summary.workouts)

        // The ledger holds them: known types by query, the rest kept raw.
        let state = await ledger.state
        var rawByType: [String: Int] = [:]
        for (reason, n) in summary.rawReasons { rawByType[String(reason.prefix { $0 != ":" }), default: 0] += n }
        for (typeName, count) in expected.recordsByType {
            var stored = 0
            if let type = try? ObjectType(identifier: typeName) {
                stored = try await ledger.samples(SampleQuery(type: type), visibility: .everything)
                    .filter { if case .unrecognized = $0 { false } else { true } }.count
            }
            #expect(stored + rawByType[typeName, default: 0] == count, "\(typeName)")
        }
        #expect(state.samples.count == summary.samplesSaved + summary.correlationMembers)

        // <Me> as the profile.
        let profile = try await ledger.profile()
        if let me = expected.me {
            let dob = me["HKCharacteristicTypeIdentifierDateOfBirth"] ?? ""
            #expect(profile.dateOfBirth?.description == (dob.isEmpty ? nil : dob))
            #expect(profile.biologicalSex.rawName == me["HKCharacteristicTypeIdentifierBiologicalSex"])
            #expect(profile.bloodType.rawName == me["HKCharacteristicTypeIdentifierBloodType"])
            #expect(profile.fitzpatrickSkinType.rawName == me["HKCharacteristicTypeIdentifierFitzpatrickSkinType"])
        } else {
            #expect(profile.dateOfBirth == nil)
            #expect(state.characteristics.isEmpty)
        }
        let last = state.lastSequence
        try await ledger.close()
        let report = try LedgerVerifier.verify(fs)
        #expect(report.isIntact)
        #expect(report.events == last)
    }

    /// Records picked from the XML, end to end: the stored value, unit, start, end
    /// and source print back byte for byte as the XML wrote them.
    @Test(.enabled(if: SharedExports.root != nil, "needs ../shared/data/apple-health (the shared exports are absent)"), .tags(.sweep), .disabled(if: Sweeps.leftOut, Sweeps.reason),
          arguments: ["rgosdin-2019/export.zip", "ashtom-hkimport-2017/export.xml", "k0rventen-2023/test-export.zip"])
    func spotChecksPrintBackAsWritten(_ relative: String) async throws {
        let root = try #require(SharedExports.root)
        let source = try ExportSource(path: root + "/" + relative)
        let xml = String(decoding: try readAll(try source.openXML(), chunk: 1 << 20), as: UTF8.self)
        let dir = TemporaryDirectory()
        let ledger = try Ledger.create(dir.fs)
        _ = try await AppleHealthImporter.run(source, into: ledger)
        var checked = 0
        for (n, line) in xml.split(separator: "\n").enumerated() where line.hasPrefix(" <Record ") && n % 37 == 0 {
            let a = attributes(of: String(line))
            guard let typeName = a["type"], let type = try? ObjectType(identifier: typeName), let value = a["value"],
                  let start = a["startDate"], let end = a["endDate"] else { continue }
            let startDate = try #require(Array(start.utf8).withUnsafeBufferPointer { ExportValues.date($0) })
            let found = try await ledger.samples(SampleQuery(type: type, predicate: DatePredicate(
                start: Date(timeIntervalSinceReferenceDate: startDate.seconds),
                end: Date(timeIntervalSinceReferenceDate: startDate.seconds + 1), strictStartDate: true)), visibility: .everything)
            let matches = found.filter { sample in
                guard sample.common.source?.name == a["sourceName"], let offsets = sample.common.writtenOffsets,
                      ExportValues.format(sample.startDate, offset: offsets.start) == start,
                      ExportValues.format(sample.endDate, offset: offsets.end) == end,
                      sample.common.source?.version == a["sourceVersion"] else { return false }
                if let c = a["creationDate"] {
                    guard let created = sample.common.creationDate,
                          ExportValues.format(created, offset: offsets.creation ?? 0) == c else { return false }
                }
                switch sample {
                case .quantity(let q): return Quantity.format(q.quantity.value) == value && q.quantity.unit.spelling == a["unit"]
                // Older exports write the deprecated name of a value (`…SleepAnalysisAsleep`,
                // HealthKit's raw value 1, today `…AsleepUnspecified`): same value.
                case .category(let c): return (try? c.type.value(named: value)) == c.value
                default: return false
                }
            }
            // Exact repeats in the export are stored as they are, so a line may match
            // more than one sample; it must match at least one.
            #expect(!matches.isEmpty, "no stored sample prints back as \(line); candidates: \(found)")
            checked += 1
        }
        #expect(checked > 50)
        try await ledger.close()
    }

    /// `name="value"` pairs of one XML line, entities decoded.
    func attributes(of line: String) -> [String: String] {
        var out: [String: String] = [:]
        var rest = Substring(line)
        while let eq = rest.range(of: "=\"") {
            let name = rest[..<eq.lowerBound].split(separator: " ").last.map(String.init) ?? ""
            let afterQuote = rest[eq.upperBound...]
            guard let close = afterQuote.firstIndex(of: "\"") else { break }
            out[name] = String(afterQuote[..<close]).replacingOccurrences(of: "&lt;", with: "<")
                .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&#183;", with: "·")
                .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
            rest = afterQuote[afterQuote.index(after: close)...]
        }
        return out
    }
}
