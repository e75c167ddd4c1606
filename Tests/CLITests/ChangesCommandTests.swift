import Foundation
import Testing
import TestSupport
import LedgerLog

/// `healthledger changes`: the feed on the command line, refused anchors, and `--follow`
/// across processes.
struct ChangesCommandTests {
    func run(_ dir: TemporaryDirectory, _ args: [String]) throws -> CLIResult {
        try CLIRunner.run(["--ledger", dir.path] + args)
    }

    func save(_ dir: TemporaryDirectory, _ kg: String) throws -> String {
        let r = try run(dir, ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", kg, "--unit", "kg",
                              "--start", "2026-02-01T08:00:00Z"])
        #expect(r.status == 0)
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Without `--limit`, every change is read a page at a time (memory is the page, not
    /// the answer): the lines are exactly those of one answer, deletions interleaved in
    /// log order, then the anchor, with which nothing more comes.
    @Test func everyChangeIsReadAPageAtATime() throws {
        let dir = try StoreCommandTests.prepared()
        // 40,000 saves: more than two pages of 16,384; then a deletion of the first and last.
        var lines = ""
        for n in 0..<40_000 {
            let minute = String(format: "%02d:%02d", n / 60 % 24, n % 60)
            lines += #"{"type":"bodyMass","value":\#(60 + n % 30),"unit":"kg","start":"2026-03-01T\#(minute):00Z"}"# + "\n"
        }
        #expect(try CLIRunner.run(["--ledger", dir.path, "ingest", "--app", "com.example.scale", "--batch", "5000"],
                                  stdin: lines).status == 0)
        let all = try run(dir, ["--json", "changes", "bodyMass", "--owner", "--limit", "100000"])
        try #require(all.status == 0)
        let oneAnswer = all.stdout.split(separator: "\n").map(String.init)
        let firstSaved = try #require(oneAnswer.dropFirst().first.flatMap { line -> String? in
            guard let r = line.range(of: #""uuid":""#) else { return nil }
            return String(line[r.upperBound...].prefix(36))
        })
        #expect(try run(dir, ["delete", "--owner", firstSaved]).status == 0)
        let afterDelete = try run(dir, ["--json", "changes", "bodyMass", "--owner", "--limit", "100000"])
        let paged = try run(dir, ["--json", "changes", "bodyMass", "--owner"])
        try #require(paged.status == 0)
        #expect(paged.stdout == afterDelete.stdout)
        let pagedLines = paged.stdout.split(separator: "\n").map(String.init)
        // 40,001 saves (the prepared ledger's one and the 40,000) less the deleted one, its deletion, the anchor
        #expect(pagedLines.count == 40_000 + 1 + 1)
        #expect(pagedLines.filter { $0.hasPrefix(#"{"change":"deleted""#) }.count == 1)
        let anchorLine = try #require(pagedLines.last)
        #expect(anchorLine.hasPrefix(#"{"anchor":""#))
        let anchor = String(anchorLine.dropFirst(#"{"anchor":""#.count).dropLast(2))
        let rest = try run(dir, ["--json", "changes", "bodyMass", "--owner", "--anchor", anchor])
        #expect(rest.status == 0)
        #expect(rest.stdout == anchorLine + "\n")
    }

    @Test func pagesDeletionsAndRefusedAnchors() throws {
        let dir = try StoreCommandTests.prepared()
        let second = try save(dir, "71")
        let first = try run(dir, ["changes", "bodyMass", "--owner", "--limit", "1"])
        #expect(first.status == 0)
        let lines = first.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("added ") && lines[0].contains("70 kg"))
        #expect(lines[1].hasPrefix("anchor: "))
        let anchor = String(lines[1].dropFirst("anchor: ".count))
        #expect(try run(dir, ["delete", "--owner", second]).status == 0)
        let next = try run(dir, ["--json", "changes", "bodyMass", "--app", "com.example.scale", "--anchor", anchor])
        #expect(next.status == 0)
        let json = next.stdout.split(separator: "\n").map(String.init)
        // saved and deleted since the anchor: only the deletion (a deleted sample is never handed out)
        try #require(json.count == 2)
        #expect(json[0] == "{\"change\":\"deleted\",\"uuid\":\"\(second)\",\"type\":\"HKQuantityTypeIdentifierBodyMass\",\"syncIdentifier\":null,\"syncVersion\":null,\"replacedBy\":null,\"erasedAt\":null}")
        #expect(json[1].hasPrefix("{\"anchor\":\""))
        // --where filters deletions too
        let filtered = try run(dir, ["changes", "bodyMass", "--owner", "--where", "value < 70.5 kg"])
        #expect(filtered.status == 0)
        #expect(filtered.stdout.split(separator: "\n").count == 2)
        // an anchor of another ledger: exit 5, named
        let other = try StoreCommandTests.prepared()
        let refused = try run(other, ["changes", "bodyMass", "--owner", "--anchor", anchor])
        #expect(refused.status == 5)
        #expect(refused.stderr.hasPrefix("healthledger: anchorFromOtherLedger: the anchor belongs to ledger "))
        #expect(refused.stdout == "")
        let malformed = try run(dir, ["changes", "bodyMass", "--owner", "--anchor", "nonsense"])
        #expect(malformed.status == 3)
        #expect(malformed.stderr == "healthledger: malformedAnchor: nonsense is not an anchor\n")
    }

    /// A follower in one process prints what a writer in another commits (the wait is
    /// bounded; how long it takes is the benchmark's business, not asserted here).
    @Test func followPrintsAnotherProcesssCommits() throws {
        let dir = try StoreCommandTests.prepared()
        let follower = try CLIRunner.start(["--ledger", dir.path, "--json", "changes", "bodyMass", "--app", "com.example.scale", "--follow"])
        defer {
            follower.kill(SIGTERM)
            follower.wait()
        }
        /// Reads the follower's output until `needle` appears (a bound of a minute against a hang).
        func waitFor(_ needle: String) -> Bool { follower.waitForOutput(containing: needle, seconds: 60) }
        #expect(waitFor("{\"anchor\":"))  // caught up: the first sample and an anchor
        let uuid = try save(dir, "72")
        #expect(waitFor("{\"change\":\"added\",\"sample\":{\"uuid\":\"\(uuid)\""))
        try #require(try run(dir, ["delete", "--app", "com.example.scale", uuid]).status == 0)
        #expect(waitFor("{\"change\":\"deleted\",\"uuid\":\"\(uuid)\""))
        // the anchor printed after the deletion (the third) ends what the follower prints
        #expect(follower.waitForOutput(seconds: 60) { $0.components(separatedBy: "{\"anchor\":").count == 4 && $0.hasSuffix("\n") })
        let lines = follower.output.split(separator: "\n")
        #expect(lines.count == 6)
        #expect(lines.filter { $0.hasPrefix("{\"anchor\":") }.count == 3)
    }

    /// A follower whose ledger folder is replaced by another ledger says
    /// that the ledger at the path is another one (exit 5), not that its index and the
    /// log disagree or that a history was rewritten.
    @Test func followOnAFolderReplacedByAnotherLedgerSaysTheLedgerIsAnotherOne() throws {
        let dir = try StoreCommandTests.prepared()
        let other = try StoreCommandTests.prepared()
        _ = try save(other, "71")
        let otherId = try LogReader(other.fs).header.ledgerId
        let ownId = try LogReader(dir.fs).header.ledgerId
        let follower = try CLIRunner.start(["--ledger", dir.path, "changes", "bodyMass", "--owner", "--follow"], stderr: .pipe)
        defer {
            follower.kill(SIGTERM)
            follower.wait()
        }
        #expect(follower.waitForOutput(containing: "anchor: ", seconds: 60))
        // The folder is moved away and another ledger copied into its place.
        let fm = FileManager.default
        try fm.moveItem(atPath: dir.path, toPath: dir.path + "-moved")
        try fm.copyItem(atPath: other.path, toPath: dir.path)
        let message = "healthledger: ledgerReplaced: the ledger at \(dir.path) is another one (ledger \(otherId)); this feed was reading ledger \(ownId)\n"
        #expect(follower.waitForStderr(containing: "\n", seconds: 60))
        #expect(follower.errorOutput == message)
        #expect(follower.wait() == .exited(5))
    }

    /// A copy whose tail was cut and re-appended holds as many samples
    /// and deletions as the anchor covers, so only the anchor's history check refuses it
    /// (exit 5); the original still accepts the anchor.
    @Test func anAnchorIsRefusedByACopyCutAndReAppendedWithTheSameCounts() async throws {
        let dir = try StoreCommandTests.prepared()
        _ = try save(dir, "71")
        let first = try run(dir, ["changes", "bodyMass", "--owner"])
        #expect(first.status == 0)
        let anchorLine = try #require(first.stdout.split(separator: "\n").last)
        #expect(anchorLine.hasPrefix("anchor: "))
        let anchor = String(anchorLine.dropFirst("anchor: ".count))

        let copy = TemporaryDirectory()
        try FileManager.default.createDirectory(at: copy.url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: dir.path, toPath: copy.path)
        // From the 71 kg save on, cut and re-appended as 72 kg: two samples, no deletions, as before.
        let (from, to) = (RecordDamageCommandTests.valueBytes(71), RecordDamageCommandTests.valueBytes(72))
        let cut = try RecordDamageCommandTests.record(holding: from, in: copy.fs).record.sequence
        var changed = 0
        try await LogRewriter.rechain(copy.fs, from: cut) { record in
            guard let r = record.payload.firstRange(of: from) else { return record }
            var p = record.payload
            p.replaceSubrange(r, with: to)
            changed += 1
            return LogRecord(kind: record.kind, kindVersion: record.kindVersion, payload: p)
        }
        #expect(changed == 1)
        #expect(try run(copy, ["changes", "bodyMass", "--owner"]).stdout.split(separator: "\n").count == 3)

        let refused = try run(copy, ["changes", "bodyMass", "--owner", "--anchor", anchor])
        #expect(refused.status == 5)
        #expect(refused.stdout == "")
        #expect(refused.stderr == "healthledger: anchorHistoryRewritten: the ledger's history up to the anchor (2 samples, 0 deletions) is not the one the anchor was issued for\n")
        let accepted = try run(dir, ["changes", "bodyMass", "--owner", "--anchor", anchor])
        #expect(accepted.status == 0)
        #expect(accepted.stdout == "anchor: \(anchor)\n")
    }
}
