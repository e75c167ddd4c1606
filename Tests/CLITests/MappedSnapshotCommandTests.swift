import Foundation
import Testing
import TestSupport

/// Rule S8 through the binary: read commands map the snapshot; a damaged block fails
/// the read (exit 6, the rule named), sets the snapshot aside, and the same read
/// then answers exactly as before the damage, from the log.
struct MappedSnapshotCommandTests {
    @Test func s8ADamagedSnapshotFailsTheReadOnceThenTheLogAnswers() throws {
        let dir = TemporaryDirectory("work")
        #expect(try CLIRunner.run(["--ledger", dir.path, "demo"]).status == 0)
        #expect(try CLIRunner.run(["--ledger", dir.path, "replay", "--write-snapshot"]).status == 0)
        let query = ["--ledger", dir.path, "--json", "query", "--owner", "bodyMass"]
        let expected = try CLIRunner.run(query)
        #expect(expected.status == 0 && !expected.stdout.isEmpty)
        let snapshots = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/snapshots").filter { $0.hasSuffix(".bin") }
        let name = try #require(snapshots.first)
        let path = dir.path + "/snapshots/" + name
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        // The slot column (section 10): its array after the section header and prefix.
        var offset = 128, array: Int?
        while offset + 24 <= bytes.count {
            let id = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
            let length = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self) })
            if id == 10 {
                let blocks = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 24 + 4, as: UInt32.self) })
                array = offset + 24 + (8 + 4 * blocks + 7) / 8 * 8
                break
            }
            offset += 24 + length + (8 - length % 8) % 8
        }
        let slots = try #require(array)
        bytes[slots + 20] ^= 0x01  // a byte of slot 0's start date
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let damaged = try CLIRunner.run(query)
        #expect(damaged.status == 6)
        #expect(damaged.stdout == "")
        #expect(damaged.stderr == "healthledger: damaged: snapshot snapshots/\(name) is damaged: section 10 block 0 fails its check [S8]; it is derived data, now set aside: the next read rebuilds it from the log\n")
        #expect(FileManager.default.fileExists(atPath: path + ".damaged"))
        #expect(!FileManager.default.fileExists(atPath: path))
        let again = try CLIRunner.run(query)
        #expect(again.status == 0)
        #expect(again.stdout == expected.stdout)
        #expect(try CLIRunner.run(["--ledger", dir.path, "verify"]).status == 0)
    }
}
