import Foundation
import Testing
import TestSupport
import LedgerChecksums
import LedgerLog

/// Checks that no test exercised directly, each through the command
/// that relies on it — the CRC of a record read by its offset (`prove`), and the hash
/// chain outside recovery (`verify`).
struct RecordDamageCommandTests {
    static func run(_ dir: TemporaryDirectory, _ args: [String]) throws -> CLIResult {
        try CLIRunner.run(["--ledger", dir.path] + args)
    }

    /// Saves a body mass of `kg`; the sample's UUID.
    static func save(_ dir: TemporaryDirectory, _ kg: Int, day: Int) throws -> String {
        let r = try run(dir, ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "\(kg)", "--unit", "kg",
                              "--start", "2026-02-0\(day)T08:00:00Z"])
        guard r.status == 0 else { throw StoreCommandTests.CLIError(args: ["save"], result: r) }
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The little-endian bytes of `kg` as a double, as a save's payload holds the value.
    static func valueBytes(_ kg: Int) -> [UInt8] { withUnsafeBytes(of: Double(kg).bitPattern.littleEndian, Array.init) }

    /// The record whose payload holds `bytes` (exactly one), and its batch.
    static func record(holding bytes: [UInt8], in fs: any LogFileSystem)
        throws -> (record: StoredRecord, batchOffset: UInt64, batchEnd: UInt64) {
        var found: [(StoredRecord, UInt64, UInt64)] = []
        try LogReader(fs).forEachBatch { batch in
            let (offset, end) = (batch.offset, batch.endOffset)
            try batch.forEachRecord { r in
                let stored = try r.stored()
                let p = stored.payload
                if p.count >= bytes.count, (0...(p.count - bytes.count)).contains(where: { Array(p[$0..<$0 + bytes.count]) == bytes }) {
                    found.append((stored, offset, end))
                }
            }
            return true
        }
        guard found.count == 1 else { throw LookupFailed(found: found.count) }
        return found[0]
    }

    struct LookupFailed: Error { let found: Int }

    /// `prove SAMPLE-UUID` finds the saving record by the offset the sample index holds
    /// (`record(atOffset:)`); with the tree file current and a snapshot at the end no scan
    /// comes first, so the record's own CRC is what refuses a flipped payload byte.
    @Test func aFlippedPayloadByteUnderProveFailsTheRecordsChecksum() throws {
        let dir = try StoreCommandTests.prepared()
        let uuid = try Self.save(dir, 71, day: 2)
        #expect(try Self.run(dir, ["checkpoint"]).status == 0)
        #expect(try Self.run(dir, ["replay", "--write-snapshot"]).status == 0)
        let (record, _, _) = try Self.record(holding: Self.valueBytes(71), in: dir.fs)
        let log = dir.url.appendingPathComponent(LogWriter.logFileName)
        var bytes = try Data(contentsOf: log)
        let value = Int(record.offset) + 32 + record.payload.firstRange(of: Self.valueBytes(71))!.lowerBound
        bytes[value] ^= 0x01  // 71 kg becomes 71.00000000000001 kg: still a valid sample
        try bytes.write(to: log)

        let r = try Self.run(dir, ["--json", "prove", uuid])
        #expect(r.status == 6)
        #expect(r.stdout == "")
        #expect(r.stderr == "healthledger: damaged: recordChecksum at byte \(record.offset), in bytes known durable: damage [R1]\n")
    }

    /// A batch whose record was rewritten (71 → 99 kg) with the record's CRC and the
    /// batch's own link recomputed: every record and that batch are valid, the next
    /// batch's link no longer follows. Only the chain check of `verify` sees it.
    @Test func aRewrittenBatchLinkIsRefusedByVerify() throws {
        let dir = try StoreCommandTests.prepared()
        _ = try Self.save(dir, 71, day: 2)
        _ = try Self.save(dir, 72, day: 3)
        let (record, batchOffset, batchEnd) = try Self.record(holding: Self.valueBytes(71), in: dir.fs)
        let log = dir.url.appendingPathComponent(LogWriter.logFileName)
        var bytes = [UInt8](try Data(contentsOf: log))
        let start = Int(record.offset), end = start + 32 + record.payload.count
        let value = start + 32 + record.payload.firstRange(of: Self.valueBytes(71))!.lowerBound
        bytes.replaceSubrange(value..<value + 8, with: Self.valueBytes(99))
        let crc = CRC32C.checksum(Array(bytes[(start + 4)..<end]))
        bytes.replaceSubrange(start..<start + 4, with: withUnsafeBytes(of: crc.littleEndian, Array.init))
        let (from, to) = (Int(batchOffset), Int(batchEnd))
        var link = SHA256()
        link.update(Array(bytes[(from - 32)..<from]))
        link.update(Array(bytes[from..<(to - 32)]))
        bytes.replaceSubrange((to - 32)..<to, with: link.finalize().array)
        try Data(bytes).write(to: log)
        // The damage names the failing unit: the next batch's link, its last 32 bytes.
        let next = try #require(bytes.count > to ? to : nil)
        let nextLength = Int(bytes[(next + 4)..<(next + 8)].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        let nextLink = next + nextLength - 32
        let nextSequence = record.sequence + 1

        let r = try Self.run(dir, ["verify"])
        #expect(r.status == 6)
        let failed = r.stdout.split(separator: "\n").filter { $0.hasPrefix("FAILED") }
        #expect(failed.first == "FAILED log at sequence \(nextSequence), byte \(nextLink): chainMismatch (B8), in bytes known durable: damage, not a torn write")
    }
}
