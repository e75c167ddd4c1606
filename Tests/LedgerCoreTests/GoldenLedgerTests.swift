import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerLog
import LedgerReporting
import TestSupport

/// The format-compatibility promise: golden ledgers in `events/golden/` are checked
/// in with their expected `replay --json` output and digest, and every later
/// release must decode and replay them to exactly that. Regenerate (only with a new
/// event or log version, keeping the old files!) with HEALTHLEDGER_REGENERATE_GOLDEN=1.
struct GoldenLedgerTests {

    static func replayJSON(_ fs: any LogFileSystem) throws -> String { try ReplayReport.json(replaying: fs) }

    /// The story as the release that shipped `samplesSaved` version 1 wrote it (never regenerated).
    static let tutorialV1 = SharedData.repositoryRoot.appendingPathComponent("events/golden/tutorial-v1")
    /// The same story as this release writes it (`samplesSaved` version 2).
    static let tutorialV2 = SharedData.repositoryRoot.appendingPathComponent("events/golden/tutorial-v2")

    /// Asserts a golden folder's log replays to its `replay.json` and verifies to its
    /// `digest.txt` with `events` events; returns the log's bytes and the JSON.
    static func checkGolden(_ folder: URL, events: UInt64) throws -> (bytes: [UInt8], json: String) {
        let golden = try Array(Data(contentsOf: folder.appendingPathComponent("ledger.log")))
        let fs = SimulatedFileSystem()
        fs.setBytes(LogWriter.logFileName, golden)
        let expectedJSON = try String(contentsOf: folder.appendingPathComponent("replay.json"), encoding: .utf8)
        let expectedDigest = try String(contentsOf: folder.appendingPathComponent("digest.txt"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let json = try replayJSON(fs) + "\n"
        #expect(json == expectedJSON, "\(folder.lastPathComponent)")
        let report = try LedgerVerifier.verify(fs)
        #expect(report.isIntact)
        #expect(report.digest.hex == expectedDigest, "\(folder.lastPathComponent)")
        #expect(report.events == events)
        return (golden, json)
    }

    @Test func theTutorialLedgersReplayToTheirGoldenOutput() async throws {
        if ProcessInfo.processInfo.environment["HEALTHLEDGER_REGENERATE_GOLDEN"] == "1" {
            let folder = Self.tutorialV2
            try? FileManager.default.removeItem(at: folder)
            let fs = PosixFileSystem(path: folder.path)
            let ledger = try await Story.write(to: fs)
            try await ledger.close()
            try? FileManager.default.removeItem(at: folder.appendingPathComponent("LOCK"))
            try? FileManager.default.removeItem(at: folder.appendingPathComponent("index"))
            try (try Self.replayJSON(fs) + "\n").write(to: folder.appendingPathComponent("replay.json"), atomically: true, encoding: .utf8)
            let digest = try LedgerVerifier.verify(fs).digest.hex
            try (digest + "\n").write(to: folder.appendingPathComponent("digest.txt"), atomically: true, encoding: .utf8)
        }
        // The checked-in logs, read by this release: the old encoding and the current
        // one tell the same story, so they replay to the same projections and digest.
        let v1 = try Self.checkGolden(Self.tutorialV1, events: 20)
        let v2 = try Self.checkGolden(Self.tutorialV2, events: 20)
        #expect(v1.json == v2.json)
        #expect(v1.bytes != v2.bytes)

        // This release writes the same bytes for the same story (encoders are stable).
        let again = SimulatedFileSystem()
        let ledger = try await Story.write(to: again)
        try await ledger.close()
        #expect(again.currentBytes(LogWriter.logFileName) == v2.bytes)
    }

    @Test func theGoldenStoryHasTheTutorialsValues() throws {
        let golden = try Array(Data(contentsOf: Self.tutorialV1.appendingPathComponent("ledger.log")))
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
