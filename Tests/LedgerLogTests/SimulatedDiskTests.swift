import Foundation
import Testing
@testable import LedgerLog

/// The simulated disk writes in place and rebuilds the durable image from an undo
/// log only when asked: these pin that the image is exactly the bytes of the last
/// sync, whatever came after it (overwrites, growth, gaps, cuts, a replacing open).
struct SimulatedDiskTests {
    @Test func theDurableImageIsTheLastSyncWhateverWasWrittenSince() throws {
        let fs = SimulatedFileSystem()
        try fs.createFolder()
        let file = try fs.open("data", .createNew)
        try [UInt8](1...10).withUnsafeBytes { try file.write($0, at: 0) }
        try file.sync()
        #expect(fs.durableBytes("data") == Array(1...10))
        // overwrite the middle, grow past the end, leave a gap of zeros, cut, grow again
        try [UInt8](repeating: 0xAA, count: 4).withUnsafeBytes { try file.write($0, at: 3) }
        try [UInt8](repeating: 0xBB, count: 4).withUnsafeBytes { try file.write($0, at: 8) }
        try [UInt8](repeating: 0xCC, count: 2).withUnsafeBytes { try file.write($0, at: 16) }
        #expect(fs.currentBytes("data") == [1, 2, 3, 0xAA, 0xAA, 0xAA, 0xAA, 8, 0xBB, 0xBB, 0xBB, 0xBB, 0, 0, 0, 0, 0xCC, 0xCC])
        try file.truncate(to: 5)
        try file.truncate(to: 7)
        try file.allocate(upTo: 9)
        #expect(fs.currentBytes("data") == [1, 2, 3, 0xAA, 0xAA, 0, 0, 0, 0])
        #expect(fs.durableBytes("data") == Array(1...10))
        try file.sync()
        #expect(fs.durableBytes("data") == [1, 2, 3, 0xAA, 0xAA, 0, 0, 0, 0])
        // a replacing open empties the file; until a sync the old bytes are what survives
        let replaced = try fs.open("data", .replace)
        try [UInt8]([9]).withUnsafeBytes { try replaced.write($0, at: 0) }
        #expect(fs.currentBytes("data") == [9])
        #expect(fs.durableBytes("data") == [1, 2, 3, 0xAA, 0xAA, 0, 0, 0, 0])
        #expect(fs.rebooted(seed: 5).currentBytes("data").count <= 9)
    }

    /// A write's cost is the write's, not the file's: 16,000 durable appends (a
    /// write and a sync each) took 7.4 s when every write after a sync copied the
    /// whole 4 MiB reserved file, 0.16 s in place. Counted, not timed (a test's clock
    /// measures the machine's load): the bytes the disk copied to carry out the
    /// writes stay within a small multiple of the bytes written, where a copy of the
    /// file per write would be 16,000 × 4 MiB.
    @Test func sixteenThousandDurableAppendsStayLinear() async throws {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs)
        for i in 0..<16_000 {
            _ = try await writer.append([LogRecord(kind: 1, kindVersion: 1, payload: [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 100))])
        }
        try await writer.close()
        #expect(fs.syncCount >= 16_000)
        let written = 16_000 * (100 + 32 + 40 + 32)  // each record, its batch's header and link
        #expect(fs.bytesCopiedByWrites < 3 * written + (8 << 20), "copied \(fs.bytesCopiedByWrites) bytes for \(written) written")
    }
}
