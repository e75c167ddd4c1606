import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Rule S8 through the binary, against another process changing the snapshot while a
/// read command runs: the read answers exactly as it would have, or fails
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

    /// Section 11's array (the UUID table's buckets) in a snapshot file's bytes.
    static func bucketArray(_ bytes: [UInt8]) -> Range<Int>? {
        var offset = 128
        while offset + 24 <= bytes.count {
            let id = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
            let length = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self) })
            if id == 11 {
                let blocks = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 24 + 4, as: UInt32.self) })
                let prefix = (8 + 4 * blocks + 7) / 8 * 8
                return offset + 24 + prefix..<offset + 24 + length
            }
            offset += 24 + length + (8 - length % 8) % 8
        }
        return nil
    }

    /// A UUID-table block flipped: `prove UUID` and `query --after UUID` fail with the
    /// block's S8 error (exit 6, the section and block named) — not "not found" (exit 4)
    /// or "names no sample" (exit 2) from a lookup that read zeros — and once the
    /// snapshot is set aside, the log answers both.
    @Test func aDamagedUUIDTableFailsLookupsByUUIDWithS8NotNotFound() throws {
        let (dir, snapshot) = try Self.ledger()
        let first = try CLIRunner.run(["--ledger", dir.path, "--json", "query", "--owner", "heartRate", "--limit", "1"])
        let uuid = try #require(first.stdout.split(separator: "\"uuid\":\"").dropFirst().first?.prefix(36)).description
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: snapshot)))
        let buckets = try #require(Self.bucketArray(bytes) as Range<Int>?)
        for i in stride(from: buckets.lowerBound, to: buckets.upperBound, by: 4096) { bytes[i] ^= 0x20 }
        let name = "snapshots/" + URL(fileURLWithPath: snapshot).lastPathComponent
        let s8 = "healthledger: damaged: snapshot \(name) is damaged: section 11 block 0 fails its check [S8]; it is derived data, now set aside: the next read rebuilds it from the log\n"
        let lookups = [["prove", uuid], ["query", "--owner", "heartRate", "--after", uuid]]
        for args in lookups {
            try Data(bytes).write(to: URL(fileURLWithPath: snapshot))
            let damaged = try CLIRunner.run(["--ledger", dir.path, "--json"] + args)
            #expect(damaged.status == 6, "\(args)")
            #expect(damaged.stdout == "", "\(args)")
            #expect(damaged.stderr == s8, "\(args)")
            #expect(FileManager.default.fileExists(atPath: snapshot + ".damaged"), "\(args)")
            try FileManager.default.removeItem(atPath: snapshot + ".damaged")
        }
        for args in lookups {
            #expect(try CLIRunner.run(["--ledger", dir.path, "--json"] + args).status == 0, "\(args)")
        }
    }
}
