import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Rule S8 through the binary, against another process changing the snapshot while a
/// read command runs (issue 28): the read answers exactly as it would have, or fails
/// with exit 6 naming S8 — never a signal. `tools/snapshot_attack.sh` repeats these
/// attacks (and shrinking, growing) a hundred times against a release build.
struct MappedSnapshotAttackTests {
    /// A ledger of 10,000 heart-rate samples — more than a read's chunk of 4,096, so a
    /// query reads the snapshot again after it printed its first chunk, and more than
    /// the pipe holds, so it waits to print while the test attacks — with a snapshot.
    static func ledger() throws -> (dir: TemporaryDirectory, snapshot: String) {
        let dir = TemporaryDirectory("work")
        for args in [["init"],
                     ["app", "register", "--app", "com.example.watch", "--name", "Watch", "--share-purpose", "s", "--read-purpose", "r"],
                     ["--app", "com.example.watch", "request", "--share", "heartRate", "--read", "heartRate"],
                     ["authorize", "--app", "com.example.watch", "--share", "heartRate", "--read", "heartRate"]] {
            let r = try CLIRunner.run(["--ledger", dir.path] + args)
            try #require(r.status == 0, "\(args): \(r.stderr)")
        }
        let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z
        let formatter = ISO8601DateFormatter()
        let lines = (0..<10_000).map { i in
            "{\"type\":\"heartRate\",\"value\":\(60 + i % 40),\"unit\":\"count/min\",\"start\":\"\(formatter.string(from: start + Double(i * 60)))\"}\n"
        }
        let ingest = try CLIRunner.run(["--ledger", dir.path, "ingest", "--app", "com.example.watch", "--batch", "1000"],
                                       stdin: lines.joined())
        try #require(ingest.status == 0, "\(ingest.stderr)")
        try #require(try CLIRunner.run(["--ledger", dir.path, "replay", "--write-snapshot"]).status == 0)
        let snapshots = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/snapshots").filter { $0.hasSuffix(".bin") }
        try #require(snapshots.count == 1)
        return (dir, dir.path + "/snapshots/" + snapshots[0])
    }

    /// Starts `query --owner heartRate`, waits until it printed (its snapshot mapped and
    /// read), changes the snapshot with `attack`, then reads the rest: the answer is the
    /// one the same query gave before.
    static func queryUnderAttack(_ attack: (String) throws -> Void) throws {
        let (dir, snapshot) = try ledger()
        let query = ["--ledger", dir.path, "--json", "query", "--owner", "heartRate"]
        let expected = try CLIRunner.run(query)
        #expect(expected.status == 0)
        #expect(expected.stdout.split(separator: "\n").count == 10_000)
        let errors = dir.path + "-stderr.txt"
        let reader = try CLIRunner.start(query, stderr: .path(errors))
        #expect(reader.waitForOutput { $0.utf8.count >= 100 })
        try attack(snapshot)
        reader.readOutputToEnd()
        #expect(reader.wait() == .exited(0))
        #expect(reader.output == expected.stdout)
        #expect(try String(contentsOfFile: errors, encoding: .utf8) == "")
    }

    @Test func aSnapshotTruncatedUnderARunningQueryNeitherTrapsNorChangesItsAnswer() throws {
        try Self.queryUnderAttack { path in #expect(truncate(path, 4096) == 0) }
    }

    @Test func aSnapshotOverwrittenInPlaceUnderARunningQueryNeitherTrapsNorChangesItsAnswer() throws {
        try Self.queryUnderAttack { path in
            let fd = open(path, O_WRONLY)
            #expect(fd >= 0)
            defer { close(fd) }
            var st = stat()
            #expect(fstat(fd, &st) == 0)
            let ones = [UInt8](repeating: 0xFF, count: max(0, Int(st.st_size) - 4096))
            #expect(ones.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 4096) } == ones.count)
        }
    }
}
