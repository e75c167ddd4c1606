import Foundation
import Testing
import TestSupport

/// Every read command warns when it stops short of the log's end,
/// and a log cut below the length `index/log.idx` proves durable is damage (exit 6).
struct ReaderWarningTests {
    static let reads: [[String]] = [
        ["query", "--owner", "bodyMass"], ["latest", "--owner", "bodyMass"], ["stats"], ["replay"],
        ["audit", "bodyMass"], ["profile", "--owner"], ["log"],
    ]

    /// The prepared ledger and a second sample, with its log cut 10 bytes into the last acknowledged record
    /// (and the seal after it gone).
    static func cut(keepIndex: Bool) throws -> TemporaryDirectory {
        let dir = try StoreCommandTests.prepared()
        let save = ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "71", "--unit", "kg", "--start", "2026-02-02T08:00:00Z"]
        #expect(try CLIRunner.run(["--ledger", dir.path] + save).status == 0)
        let path = dir.path + "/ledger.log"
        let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        // The seal is 40 + 32 bytes; the last record's batch link 32 bytes more.
        #expect(truncate(path, off_t(size - 72 - 32 - 10)) == 0)
        if !keepIndex { try FileManager.default.removeItem(atPath: dir.path + "/index/log.idx") }
        return dir
    }

    @Test(arguments: reads)
    func aReadThatStopsShortWarns(_ args: [String]) throws {
        let dir = try Self.cut(keepIndex: false)
        let r = try CLIRunner.run(["--ledger", dir.path] + args)
        #expect(r.status == 0, "\(args): \(r.stderr)")
        #expect(r.stderr.contains("healthledger: warning: the log ends with an incomplete batch (batchTruncated at byte "), "\(args): \(r.stderr)")
    }

    @Test(arguments: reads + [["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "71", "--unit", "kg"]])
    func aLogCutBelowItsIndexIsDamage(_ args: [String]) throws {
        let dir = try Self.cut(keepIndex: true)
        let before = try StoreCommandTests.contents(dir)
        let r = try CLIRunner.run(["--ledger", dir.path] + args)
        #expect(r.status == 6, "\(args): \(r.stderr)")
        #expect(r.stderr.contains("damaged: truncatedBelowDurable at byte "), "\(args): \(r.stderr)")
        #expect(try StoreCommandTests.contents(dir) == before)
    }
}
