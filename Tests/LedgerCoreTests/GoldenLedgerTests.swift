import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerLog
import TestSupport

/// The format-compatibility promise: golden ledgers in `events/golden/` are checked
/// in with their expected `replay --json` output and digest, and every later
/// release must decode and replay them to exactly that. Regenerate (only with a new
/// event or log version, keeping the old files!) with HEALTHLEDGER_REGENERATE_GOLDEN=1.
struct GoldenLedgerTests {
    static let folder = SharedData.repositoryRoot.appendingPathComponent("events/golden/tutorial-v1")

    static func replayJSON(_ fs: any LogFileSystem) throws -> String {
        let reader = try LogReader(fs)
        let loaded = try StateLoader.load(fs, reader: reader, useSnapshots: false)
        var fetcher = SampleFetcher(reader: reader)
        let profile = try loaded.state.profile(fetcher: &fetcher)
        let latest = try ReplayReport.latestSamples(loaded.state) { try fetcher.sample($0, in: loaded.state) }
        return ReplayReport.json(loaded.state, profile: profile, latest: latest)
    }

    @Test func theTutorialLedgerReplaysToItsGoldenOutput() async throws {
        if ProcessInfo.processInfo.environment["HEALTHLEDGER_REGENERATE_GOLDEN"] == "1" {
            try? FileManager.default.removeItem(at: Self.folder)
            let fs = PosixFileSystem(path: Self.folder.path)
            let ledger = try await Story.write(to: fs)
            try await ledger.close()
            try? FileManager.default.removeItem(at: Self.folder.appendingPathComponent("LOCK"))
            try? FileManager.default.removeItem(at: Self.folder.appendingPathComponent("index"))
            try (try Self.replayJSON(fs) + "\n").write(to: Self.folder.appendingPathComponent("replay.json"), atomically: true, encoding: .utf8)
            let digest = try LedgerVerifier.verify(fs).digest.hex
            try (digest + "\n").write(to: Self.folder.appendingPathComponent("digest.txt"), atomically: true, encoding: .utf8)
        }
        // The checked-in log, read by this release.
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
        #expect(report.events == 20)

        // This release writes the same bytes for the same story (encoders are stable).
        let again = SimulatedFileSystem()
        let ledger = try await Story.write(to: again)
        try await ledger.close()
        #expect(again.currentBytes(LogWriter.logFileName) == golden)
    }

    @Test func theGoldenStoryHasTheTutorialsValues() throws {
        let golden = try Array(Data(contentsOf: Self.folder.appendingPathComponent("ledger.log")))
        let fs = SimulatedFileSystem()
        fs.setBytes(LogWriter.logFileName, golden)
        let reader = try LogReader(fs)
        let loaded = try StateLoader.load(fs, reader: reader)
        var fetcher = SampleFetcher(reader: reader)
        let profile = try loaded.state.profile(fetcher: &fetcher)
        #expect(profile.dateOfBirth == (try DateOfBirth(year: 1990, month: 4, day: 12)))
        #expect(profile.biologicalSex == .female)
        #expect(profile.bloodType == .aPositive)
        #expect(profile.height?.quantity == (try Quantity(1.75, unit: "m")))
        #expect(profile.weight?.quantity == (try Quantity(70, unit: "kg")))
        #expect(BodyMassIndex.formatted(try #require(profile.bodyMassIndex)) == "22.86")
        #expect(profile.age(at: date("2026-03-01T12:00:00Z")) == 35)
        let tracker = try #require(loaded.state.registry.ordinal(of: Story.tracker.bundleIdentifier))
        #expect(loaded.state.authorization.permission(app: tracker, type: .quantity(.bodyMassIndex)).share == .sharingAuthorized)
        #expect(loaded.state.authorization.permission(app: tracker, type: .quantity(.height)).share == .notDetermined)
        #expect(loaded.state.authorization.permission(app: tracker, type: .quantity(.height)).read == true)
    }
}
