import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import TestSupport

/// `events/type-codes.tsv` lists every type code of the event format with its
/// identifier (FORMAT.md, Part 2). Codes never change: this test fails when a code
/// moved, and regenerates the file (HEALTHLEDGER_REGENERATE_GOLDEN=1) only to add
/// new types at the end.
struct TypeCodeTableTests {
    static let url = SharedData.repositoryRoot.appendingPathComponent("events/type-codes.tsv")

    static func table() -> String {
        var lines = ["code\tkind\tidentifier"]
        for type in ObjectType.allTypes {
            let kind: String
            switch type {
            case .characteristic: kind = "characteristic"
            case .quantity: kind = "quantity"
            case .category: kind = "category"
            case .correlation: kind = "correlation"
            case .workout: kind = "workout"
            case .activitySummary: kind = "activitySummary"
            }
            lines.append(String(format: "0x%04X", type.code) + "\t\(kind)\t\(type.identifier)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func theCheckedInTableMatchesTheCode() throws {
        if ProcessInfo.processInfo.environment["HEALTHLEDGER_REGENERATE_GOLDEN"] == "1" {
            try Self.table().write(to: Self.url, atomically: true, encoding: .utf8)
        }
        let stored = try String(contentsOf: Self.url, encoding: .utf8)
        let current = Self.table()
        // Every stored line is still there, unchanged (codes are forever)…
        let currentLines = Set(current.split(separator: "\n"))
        for line in stored.split(separator: "\n") { #expect(currentLines.contains(line), "type code changed: \(line)") }
        // …and the file lists them all.
        #expect(stored == current)
    }

    @Test func sampleSlotsHaveTheDocumentedLayout() throws {
        // FORMAT.md, Part 3 (S3): the snapshot's slots column is an array of 24-byte
        // records (version 3: no UUID, the log holds it): f64 start · f64 end · u64 word (record offset bits 0–39, type
        // code 40–50, state 51–52, app 53–63 with 2047 meaning "in the overflow section").
        typealias S = SampleIndex.Slot
        #expect(MemoryLayout<S>.stride == 24)
        #expect(MemoryLayout<S>.offset(of: \S.start) == 0)
        #expect(MemoryLayout<S>.offset(of: \S.end) == 8)
        #expect(MemoryLayout<S>.offset(of: \S.word) == 16)
        let slot = S(start: 1, end: 2, recordOffset: 0xAB_CDEF_0123, typeCode: 0x06FF, state: 3, appField: 2046)
        let word: UInt64 = 0xAB_CDEF_0123 | 0x06FF << 40 | 3 << 51 | 2046 << 53
        #expect(slot.word == word)
        #expect(slot.recordOffset == 0xAB_CDEF_0123 && slot.typeCode == 0x06FF && slot.state == 3 && slot.appField == 2046)
        var changed = slot
        changed.state = 1
        #expect(changed.state == 1 && changed.recordOffset == slot.recordOffset && changed.typeCode == 0x06FF && changed.appField == 2046)
    }
}
