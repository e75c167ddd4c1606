import Testing
@testable import LedgerLog

/// An encoder appending a record to a batch is given a writer of that
/// record's payload alone, never the batch's buffer.
struct PayloadWriterTests {
    /// The second record's encoder starts at an empty payload, sees only its own
    /// bytes, and its patches (relative to its payload) land in its payload: the
    /// first record is untouched.
    @Test func anEncoderReachesOnlyItsOwnPayload() async throws {
        var batch = RecordBatch()
        batch.append(kind: 1, version: 1, payload: [1, 2, 3])
        var seen: (count: Int, bytes: [UInt8])?
        batch.append(kind: 2, version: 1) { w in
            #expect(w.count == 0)
            w.append(9)
            w.append(contentsOf: [8, 7, 6])
            w.overwrite(at: 0, with: 5)
            w.replaceSubrange(1..<2, with: [4, 4, 4])
            seen = (w.count, w.bytes)
        }
        #expect(seen?.count == 6)
        #expect(seen?.bytes == [5, 4, 4, 4, 7, 6])
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, options: testOptions)
        try await writer.append(batch)
        try await writer.close()
        #expect(try allRecords(fs).map(\.payload) == [[1, 2, 3], [5, 4, 4, 4, 7, 6]])
    }

    /// On its own a writer writes a buffer of its own; `bytes` is that buffer.
    @Test func aWriterOfItsOwnBufferGivesItBack() {
        var w = PayloadWriter(capacity: 4)
        w.append(contentsOf: [1, 2])
        w.overwrite(at: 1, with: 3)
        #expect(w.count == 2)
        #expect(w.bytes == [1, 3])
    }
}
