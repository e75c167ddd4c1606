import Foundation
import Testing
@testable import LedgerLog

/// `LogReader.record(atOffset:)` — how `prove`, the sample fetcher
/// and the audit history read one record by the offset a projection holds, without a
/// scan — checks the record against its own CRC (R1). Breaking that comparison passed
/// the whole suite.
struct RecordAtOffsetTests {
    /// The second record of the three-batch log: batch 1's records start 40 bytes in.
    static let offset = FormatRuleTests.batchOffset(1) + 40

    @Test func aRecordReadByItsOffsetIsItsBytesAndAFlippedByteFailsItsChecksum() async throws {
        let (_, bytes) = try await FormatRuleTests.threeBatches(closed: true)
        let intact = try LogReader(FormatRuleTests.log(bytes)).record(atOffset: UInt64(Self.offset))
        #expect(intact.sequence == 2)
        #expect(intact.offset == UInt64(Self.offset))
        #expect(intact.payload == payload(seed: 1, length: 100))

        let damage = LogError.damaged(LogDamage(kind: .recordChecksum, offset: UInt64(Self.offset), length: nil, sequence: nil,
                                                inDurablePrefix: true))
        // Every byte of the record: the CRC, the header it covers (a changed payloadLength
        // reads fewer or more bytes, or past the file's end), every payload byte.
        for i in 0..<(32 + 100) {
            var flipped = bytes
            flipped[Self.offset + i] ^= 0x04
            let reader = try LogReader(FormatRuleTests.log(flipped))
            #expect(throws: damage, "byte \(i)") { _ = try reader.record(atOffset: UInt64(Self.offset)) }
        }
    }
}
