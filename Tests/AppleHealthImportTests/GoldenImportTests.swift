import Foundation
import HealthModel
@testable import LedgerCore
import LedgerLog
import Testing
import LedgerReporting
import TestSupport
@testable import AppleHealthImport

/// The format promise for what imports write: `events/golden/import-v2/` holds the
/// ledger of `SmallExport` imported by the release that introduced activity
/// summaries, import events and `samplesSaved` version 2 (written UTC offsets, HRV
/// beats, raw samples with reasons). Every later release must replay it to its
/// `replay.json` and verify it to its `digest.txt`. Regenerate only with a new
/// version, keeping the old folder: HEALTHLEDGER_REGENERATE_GOLDEN=1.
struct GoldenImportTests {
    static let folder = SharedData.repositoryRoot.appendingPathComponent("events/golden/import-v2")

    static func replayJSON(_ fs: any LogFileSystem) throws -> String { try ReplayReport.json(replaying: fs) }

    @Test func theImportLedgerReplaysToItsGoldenOutput() async throws {
        if ProcessInfo.processInfo.environment["HEALTHLEDGER_REGENERATE_GOLDEN"] == "1" {
            let export = TemporaryDirectory("export")
            let path = try SmallExport.write(in: export.path)
            try? FileManager.default.removeItem(at: Self.folder)
            let fs = PosixFileSystem(path: Self.folder.path)
            let clock = SteppingClock(start: 1_772_366_400_000_000_000, step: 1_000_000_000)
            let ledger = try Ledger.create(fs, ledgerId: fixedLedgerId,
                                           options: LedgerOptions(log: LogWriterOptions(clock: clock.function, allocationChunk: smallChunk)))
            _ = try await AppleHealthImporter.run(try ExportSource(path: path), into: ledger)
            try await ledger.close()
            try? FileManager.default.removeItem(at: Self.folder.appendingPathComponent("LOCK"))
            try? FileManager.default.removeItem(at: Self.folder.appendingPathComponent("index"))
            try (try Self.replayJSON(fs) + "\n").write(to: Self.folder.appendingPathComponent("replay.json"), atomically: true, encoding: .utf8)
            try (try LedgerVerifier.verify(fs).digest.hex + "\n").write(to: Self.folder.appendingPathComponent("digest.txt"),
                                                                         atomically: true, encoding: .utf8)
        }
        let golden = try Array(Data(contentsOf: Self.folder.appendingPathComponent("ledger.log")))
        let fs = SimulatedFileSystem()
        fs.setBytes(LogWriter.logFileName, golden)
        let expectedJSON = try String(contentsOf: Self.folder.appendingPathComponent("replay.json"), encoding: .utf8)
        let expectedDigest = try String(contentsOf: Self.folder.appendingPathComponent("digest.txt"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try Self.replayJSON(fs) + "\n" == expectedJSON)
        let report = try LedgerVerifier.verify(fs)
        #expect(report.isIntact)
        #expect(report.digest.hex == expectedDigest)
        #expect(report.events == 23)

        // What only version 2 and the new kinds carry, read back from the golden bytes.
        let reader = try LogReader(fs)
        let state = try StateLoader.load(fs, reader: reader, useSnapshots: false).state
        var fetcher = SampleFetcher(reader: reader)
        #expect(state.imports.count == 1)
        #expect(state.imports.first?.start.exportDate == "2019-06-17 21:07:11 -0400")
        #expect(state.imports.first?.finishedAt == 23)
        #expect(state.activitySummaries.count == 1)
        var beats = 0, offsets = 0, reasons: [String] = []
        for slot in 0..<UInt32(state.samples.count) {
            let sample = try fetcher.sample(slot, in: state)
            if case .quantity(let q) = sample { beats += q.beats.count }
            if sample.common.writtenOffsets != nil { offsets += 1 }
            if case .unrecognized(let u) = sample, let reason = u.reason { reasons.append(reason) }
        }
        #expect(beats == 2)
        #expect(offsets == 10)
        #expect(reasons == ["unknown type", "no value"])
    }
}
