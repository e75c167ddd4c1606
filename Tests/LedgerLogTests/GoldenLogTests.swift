import Foundation
import Testing
@testable import LedgerLog

/// `events/golden/log-v1-tiny.hex` is a complete log written byte for byte as
/// events/FORMAT.md says, annotated field by field. The code must write exactly
/// these bytes for the same input, and read them back: the spec, the golden file
/// and the code cannot drift apart. Regenerate (only for a new format version!)
/// with HEALTHLEDGER_REGENERATE_GOLDEN=1.
struct GoldenLogTests {
    static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("events/golden/log-v1-tiny.hex")

    /// The input: two batches and a seal, fixed ledger id and clock.
    static func write() async throws -> [UInt8] {
        let fs = SimulatedFileSystem()
        let clock = SteppingClock(start: 1_767_225_600_000_000_000)  // 2026-01-01T00:00:00Z
        let writer = try LogWriter.create(fs, ledgerId: fixedLedgerId, options: clock.options)
        try await writer.append([LogRecord(kind: 1, kindVersion: 1, payload: Array("hello".utf8)),
                                 LogRecord(kind: 2, kindVersion: 3, payload: [])])
        try await writer.append([LogRecord(kind: 7, kindVersion: 1, payload: [0xCA, 0xFE])])
        try await writer.close()
        return fs.currentBytes(LogWriter.logFileName)
    }

    static func hex(_ bytes: ArraySlice<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined(separator: " ") }

    /// The log as annotated hex: one field per line, `#` comments.
    static func annotate(_ log: [UInt8]) -> String {
        var lines = ["# HealthLedger log, format v1: two batches and a seal (see events/FORMAT.md).",
                     "# Regenerate only with a new format version. Bytes are hex; '#' starts a comment.", ""]
        func field(_ range: Range<Int>, _ note: String) {
            // 16 bytes a line; the comment on the first
            var start = range.lowerBound
            var first = true
            repeat {
                let end = min(start + 16, range.upperBound)
                let text = hex(log[start..<end])
                lines.append(first ? text + String(repeating: " ", count: max(1, 50 - text.count)) + "# " + note : text)
                first = false
                start = end
            } while start < range.upperBound
        }
        func u32(_ at: Int) -> UInt32 { log.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt32.self)) } }
        func u64(_ at: Int) -> UInt64 { log.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt64.self)) } }
        lines.append("## file header (offset 0)")
        field(0..<8, "H1 magic \\x89HLOG\\r\\n\\x1A")
        field(8..<10, "formatVersion 1")
        field(10..<12, "minReaderVersion 1")
        field(12..<16, "headerLength 64")
        field(16..<32, "ledgerId \(fixedLedgerId.uuidString)")
        field(32..<40, "createdAt \(Int64(bitPattern: u64(32))) ns")
        field(40..<60, "reserved")
        field(60..<64, "H2 headerCRC")
        var o = 64
        while o < log.count {
            let length = Int(u32(o + 4)), count = Int(u32(o + 16))
            lines.append("")
            lines.append("## batch at offset \(o)" + (count == 0 ? " (seal)" : ""))
            field(o..<o + 4, "B1 magic HLB1")
            field(o + 4..<o + 8, "batchLength \(length)")
            field(o + 8..<o + 16, "firstSequence \(u64(o + 8))")
            field(o + 16..<o + 20, "recordCount \(count)")
            field(o + 20..<o + 22, "flags" + (count == 0 ? " (seal)" : ""))
            field(o + 22..<o + 24, "reserved")
            field(o + 24..<o + 32, "syncedLength \(u64(o + 24))")
            field(o + 32..<o + 36, "reserved")
            field(o + 36..<o + 40, "B2 headerCRC")
            var r = o + 40
            while r < o + length - 32 {
                let payloadLength = Int(u32(r + 4))
                lines.append("### record \(u64(r + 8)) at offset \(r)")
                field(r..<r + 4, "R1 crc")
                field(r + 4..<r + 8, "payloadLength \(payloadLength)")
                field(r + 8..<r + 16, "R3 sequence \(u64(r + 8))")
                field(r + 16..<r + 24, "R4 recordedAt \(Int64(bitPattern: u64(r + 16))) ns")
                field(r + 24..<r + 26, "R5 kind \(log[r + 24])")
                field(r + 26..<r + 28, "kindVersion \(log[r + 26])")
                field(r + 28..<r + 32, "R6 reserved")
                if payloadLength > 0 { field(r + 32..<r + 32 + payloadLength, "payload") }
                r += 32 + payloadLength
            }
            field(o + length - 32..<o + length, "B8 link")
            o += length
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func parseHex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for line in text.split(separator: "\n") {
            let data = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            for token in data.split(separator: " ") { bytes.append(UInt8(token, radix: 16)!) }
        }
        return bytes
    }

    @Test func theCodeWritesAndReadsTheGoldenLogExactly() async throws {
        let written = try await Self.write()
        if ProcessInfo.processInfo.environment["HEALTHLEDGER_REGENERATE_GOLDEN"] == "1" {
            try Self.annotate(written).write(to: Self.url, atomically: true, encoding: .utf8)
        }
        let golden = Self.parseHex(try String(contentsOf: Self.url, encoding: .utf8))
        #expect(golden == written, "the writer no longer produces events/golden/log-v1-tiny.hex")

        let fs = SimulatedFileSystem()
        fs.setBytes(LogWriter.logFileName, golden)
        let records = try allRecords(fs)
        #expect(records.map(\.sequence) == [1, 2, 3])
        #expect(records.map(\.kind) == [1, 2, 7])
        #expect(records.map(\.kindVersion) == [1, 3, 1])
        #expect(records[0].payload == Array("hello".utf8))
        #expect(records[1].payload == [])
        #expect(records[2].payload == [0xCA, 0xFE])
        #expect(records[0].recordedAt == 1_767_225_600_002_000_000)
        let report = try LogVerifier.verify(fs)
        #expect(report.isIntact && report.batches == 3 && report.seals == 1)
        #expect(try LogReader(fs).header.ledgerId == fixedLedgerId)
    }
}
