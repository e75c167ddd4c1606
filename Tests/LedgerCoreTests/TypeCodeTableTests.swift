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

    @Test func sampleSlotsHaveTheDocumentedLayout() {
        // FORMAT.md, Part 3: the snapshot's slots column is an array of 56-byte records.
        typealias S = SampleIndex.Slot
        #expect(MemoryLayout<S>.stride == 56)
        #expect(MemoryLayout<S>.offset(of: \S.uuid) == 0)
        #expect(MemoryLayout<S>.offset(of: \S.recordOffset) == 16)
        #expect(MemoryLayout<S>.offset(of: \S.start) == 24)
        #expect(MemoryLayout<S>.offset(of: \S.end) == 32)
        #expect(MemoryLayout<S>.offset(of: \S.position) == 40)
        #expect(MemoryLayout<S>.offset(of: \S.app) == 44)
        #expect(MemoryLayout<S>.offset(of: \S.typeCode) == 48)
        #expect(MemoryLayout<S>.offset(of: \S.state) == 50)
    }
}
