import Foundation
import HealthModel
import LedgerCore
import LedgerReporting

/// A page of samples already written as JSON Lines (`SampleJSONWriter`, one object and
/// a newline each): what a front end that forwards many samples sends on, written
/// while the ledger is read, plain samples straight from their stored bytes.
package struct SampleLinesPage: Sendable {
    /// The lines, each ending in a newline.
    package let lines: [UInt8]
    /// Samples in `lines`.
    package let count: Int
    /// Pass as `after` to read the next page; nil on the last.
    package let next: UUID?
}

extension LedgerReadView {
    /// One page of `query` (its limit) after `after` as JSON Lines, the lines
    /// `SampleJSONWriter.append` writes for the same samples.
    mutating func sampleLines(_ query: SampleQuery, after: UUID?) throws -> SampleLinesPage {
        var lines: [UInt8] = []
        var count = 0
        let next = try forEach(query, after: after, plain: { s in
            SampleJSONWriter.append(s, to: &lines)
            lines.append(0x0A)
            count += 1
        }) { sample in
            SampleJSONWriter.append(sample, to: &lines)
            lines.append(0x0A)
            count += 1
        }
        return SampleLinesPage(lines: lines, count: count, next: next)
    }
}

extension HealthStore {
    /// `samples(_:after:)` as JSON Lines: the same samples, the same order and cursor.
    package func sampleLines(_ query: SampleQuery, after: UUID? = nil) async throws -> SampleLinesPage {
        try await read { try $0.sampleLines(query, after: after) }
    }
}

extension OwnerStore {
    /// `samples(_:after:)` as JSON Lines: the same samples, the same order and cursor.
    package func sampleLines(_ query: SampleQuery, after: UUID? = nil) async throws -> SampleLinesPage {
        try await ledger.read(as: .owner) { try $0.sampleLines(query, after: after) }
    }
}
