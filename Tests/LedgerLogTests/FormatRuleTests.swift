import Foundation
import Testing
import LedgerChecksums
@testable import LedgerLog

/// One forged, cut or flipped byte per rule of events/FORMAT.md Part 1 that had no
/// test of its own, each with the exact error the spec says. The logs: three data
/// batches of one 100-byte record each (batches of 204 bytes at 64, 268, 472), then a
/// seal (a closed log) or reserved zeros (an abandoned writer).
struct FormatRuleTests {
    static let batchLength = 40 + 32 + 100 + 32
    static func batchOffset(_ i: Int) -> Int { 64 + i * batchLength }

    /// The bytes of a log of three batches; `closed`: sealed and cut, else abandoned (reserved zeros after).
    static func threeBatches(closed: Bool) async throws -> (fs: SimulatedFileSystem, bytes: [UInt8]) {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, options: testOptions)
        for i in 0..<3 { try await writer.append([LogRecord(kind: 1, kindVersion: 1, payload: payload(seed: UInt64(i), length: 100))]) }
        if closed { try await writer.close() } else { writer.abandon() }
        return (fs, fs.currentBytes(LogWriter.logFileName))
    }

    /// A log file holding `bytes` (nothing else in the folder: no index).
    static func log(_ bytes: [UInt8]) -> SimulatedFileSystem {
        let fs = SimulatedFileSystem()
        fs.setBytes(LogWriter.logFileName, bytes)
        return fs
    }

    /// Changes a batch header's fields and recomputes its CRC (B2 holds, the rule under test fails).
    static func forgeBatchHeader(_ bytes: inout [UInt8], at offset: Int, _ change: (UnsafeMutableRawBufferPointer) -> Void) {
        bytes.withUnsafeMutableBytes { all in
            let b = UnsafeMutableRawBufferPointer(rebasing: all[offset..<offset + 40])
            change(b)
            b.storeBytes(of: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<36])).littleEndian, toByteOffset: 36, as: UInt32.self)
        }
    }

    /// Changes the file header and recomputes its CRC (H2 holds).
    static func forgeFileHeader(_ bytes: inout [UInt8], _ change: (UnsafeMutableRawBufferPointer) -> Void) {
        bytes.withUnsafeMutableBytes { all in
            let b = UnsafeMutableRawBufferPointer(rebasing: all[0..<64])
            change(b)
            b.storeBytes(of: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<60])).littleEndian, toByteOffset: 60, as: UInt32.self)
        }
    }

    static func damage(_ bytes: [UInt8]) throws -> LogDamage? { try LogVerifier.verify(log(bytes)).damage }

    @Test func h3ANewerMinimumReaderVersionIsRefusedByName() async throws {
        var (_, bytes) = try await Self.threeBatches(closed: true)
        Self.forgeFileHeader(&bytes) { $0.storeBytes(of: UInt16(3).littleEndian, toByteOffset: 10, as: UInt16.self) }
        let refusal = LogError.unsupportedFormatVersion(found: 1, minReader: 3, supported: 2)
        #expect(throws: refusal) { _ = try LogReader(Self.log(bytes)) }
        #expect(refusal.description == "unsupportedFormatVersion: log format 1 needs a reader of version 3; this one reads 2 [H3]")
    }

    @Test func h4AHeaderLengthOtherThan64IsNotALog() async throws {
        var (_, bytes) = try await Self.threeBatches(closed: true)
        Self.forgeFileHeader(&bytes) { $0.storeBytes(of: UInt32(65).littleEndian, toByteOffset: 12, as: UInt32.self) }
        let refusal = LogError.notALedgerLog(reason: "unexpected header length", rule: "H4")
        #expect(throws: refusal) { _ = try LogReader(Self.log(bytes)) }
        #expect(refusal.description == "notALedgerLog: unexpected header length [H4]")
    }

    @Test func b3ABatchRunningPastTheEndIsATornTail() async throws {
        let (_, full) = try await Self.threeBatches(closed: false)
        let cut = Array(full[0..<Self.batchOffset(2) + 100])  // batch 3 cut in its record
        let damage = try #require(try Self.damage(cut))
        #expect(damage == LogDamage(kind: .batchTruncated, offset: UInt64(Self.batchOffset(2)), length: 100, sequence: 3,
                                    inDurablePrefix: false))
        #expect(damage.description == "batchTruncated at byte 472 (sequence 3), in the unsynced tail: torn write or damage [B3]")
    }

    @Test func b4AFirstSequenceThatIsNotTheNextIsASequenceGap() async throws {
        var (_, bytes) = try await Self.threeBatches(closed: true)
        Self.forgeBatchHeader(&bytes, at: Self.batchOffset(1)) { $0.storeBytes(of: UInt64(5).littleEndian, toByteOffset: 8, as: UInt64.self) }
        // the seal proves batch 2 durable: damage, not a torn tail
        #expect(try Self.damage(bytes) == LogDamage(kind: .sequenceGap, offset: 268, length: 40, sequence: 2, inDurablePrefix: true))
        #expect(try Self.damage(bytes)?.description == "sequenceGap at byte 268 (sequence 2), in bytes known durable: damage [B4]")
    }

    @Test func b5AReservedFieldSetIsNotABatchHeader() async throws {
        var (_, bytes) = try await Self.threeBatches(closed: true)
        Self.forgeBatchHeader(&bytes, at: Self.batchOffset(1)) { $0.storeBytes(of: UInt16(1).littleEndian, toByteOffset: 22, as: UInt16.self) }
        #expect(try Self.damage(bytes) == LogDamage(kind: .batchHeader, offset: 268, length: 40, sequence: 2, inDurablePrefix: true))
        #expect(try Self.damage(bytes)?.description == "batchHeader at byte 268 (sequence 2), in bytes known durable: damage [B1/B2/B5]")
    }

    /// The decision table counts a later header only when it passes B1, B2, B5 and B6:
    /// a later header that vouches for P but breaks B5 proves nothing, so the bad
    /// batch is a torn tail, not damage.
    @Test func theRecoveryTableIgnoresALaterHeaderFailingB5() async throws {
        var (_, bytes) = try await Self.threeBatches(closed: false)
        bytes[Self.batchOffset(1) + 40 + 32 + 10] ^= 0x01  // batch 2's record fails R1
        let proven = LogDamage(kind: .recordChecksum, offset: UInt64(Self.batchOffset(1) + 40), length: 132, sequence: 2,
                               inDurablePrefix: true)
        #expect(try Self.damage(bytes) == proven)  // batch 3 (syncedLength 472 > 268) proves it durable
        Self.forgeBatchHeader(&bytes, at: Self.batchOffset(2)) { $0.storeBytes(of: UInt32(1).littleEndian, toByteOffset: 32, as: UInt32.self) }
        #expect(try Self.damage(bytes) == proven.withDurability(false))
    }

    @Test func b6ABatchVouchingForBytesAfterItIsRefused() async throws {
        var (_, bytes) = try await Self.threeBatches(closed: true)
        Self.forgeBatchHeader(&bytes, at: Self.batchOffset(1)) { $0.storeBytes(of: UInt64(269).littleEndian, toByteOffset: 24, as: UInt64.self) }
        #expect(try Self.damage(bytes) == LogDamage(kind: .syncedLengthInvalid, offset: 268, length: 40, sequence: 2, inDurablePrefix: true))
        #expect(try Self.damage(bytes)?.description.hasSuffix("[B6]") == true)
    }

    @Test func b7ARecordCountTheRecordsDoNotFillIsFraming() async throws {
        var (_, bytes) = try await Self.threeBatches(closed: true)
        Self.forgeBatchHeader(&bytes, at: Self.batchOffset(1)) { $0.storeBytes(of: UInt32(2).littleEndian, toByteOffset: 16, as: UInt32.self) }
        #expect(try Self.damage(bytes) == LogDamage(kind: .recordFraming, offset: 268, length: 204, sequence: 3, inDurablePrefix: true))
        #expect(try Self.damage(bytes)?.description == "recordFraming at byte 268 (sequence 3), in bytes known durable: damage [R2/B7]")
    }

    @Test func r2APayloadLengthPastTheBatchIsFraming() async throws {
        var (_, bytes) = try await Self.threeBatches(closed: true)
        let record = Self.batchOffset(1) + 40
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(101).littleEndian, toByteOffset: record + 4, as: UInt32.self) }
        #expect(try Self.damage(bytes) == LogDamage(kind: .recordFraming, offset: UInt64(record), length: 132, sequence: 2,
                                                    inDurablePrefix: true))
    }

    /// Z1: zeros a writer reserved after the last batch are the end of the log; a
    /// byte that is not zero there is not a batch (a torn tail: nothing vouches for it).
    @Test func z1ReservedZerosEndTheLogAndAnythingElseThereIsATail() async throws {
        var (_, bytes) = try await Self.threeBatches(closed: false)
        let end = Self.batchOffset(3)
        #expect(bytes.count > end)  // reserved in steps of testOptions' chunk
        #expect(bytes[end...].allSatisfy { $0 == 0 })
        let report = try LogVerifier.verify(Self.log(bytes))
        #expect(report.isIntact && report.records == 3 && report.nextSequence == 4)
        bytes[bytes.count - 1] = 1
        #expect(try Self.damage(bytes) == LogDamage(kind: .batchHeader, offset: UInt64(end), length: 40, sequence: 4, inDurablePrefix: false))
    }

    /// W4: a batch's syncedLength is what was durable when it was encoded: with each
    /// append synced before the next, every batch vouches exactly for the bytes before it.
    @Test func w4EachBatchVouchesForWhatWasDurableWhenItWasWritten() async throws {
        let (_, bytes) = try await Self.threeBatches(closed: true)
        for (i, offset) in [64, 268, 472, 676].enumerated() {
            let synced = bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self)) }
            #expect(synced == UInt64(offset), "batch \(i + 1)")
        }
    }

    /// W6: a clean close syncs, appends a seal whose syncedLength is its own offset,
    /// and cuts the reserved space: the file ends exactly at the seal.
    @Test func w6ACleanCloseEndsTheFileAtASealThatVouchesForEverything() async throws {
        let (_, bytes) = try await Self.threeBatches(closed: true)
        let seal = Self.batchOffset(3)
        #expect(bytes.count == seal + LogFormat.batchLengthMin)
        let header = try #require(bytes.withUnsafeBytes { BatchHeader.decode(UnsafeRawBufferPointer(rebasing: $0[seal..<seal + 40])) })
        #expect(header == BatchHeader(batchLength: 72, firstSequence: 4, recordCount: 0, isSeal: true, syncedLength: UInt64(seal)))
    }

    /// I1: an index is used only when it holds and matches the log; each refusal says why.
    @Test func i1AnIndexThatDoesNotMatchIsIgnoredSayingWhy() async throws {
        let (fs, bytes) = try await Self.threeBatches(closed: true)
        let index = fs.currentBytes(LogCheckpoint.fileName)
        #expect(index.count == 96 + 16)  // one sparse entry
        let reader = try LogReader(fs)
        func rejection(_ indexBytes: [UInt8], log logBytes: [UInt8] = bytes) throws -> LogCheckpoint.Rejection? {
            let copy = Self.log(logBytes)
            copy.setBytes(LogCheckpoint.fileName, indexBytes)
            let file = try copy.open(LogWriter.logFileName, .readOnly)
            do {
                _ = try LogCheckpoint.loadChecked(copy, log: file, logLength: UInt64(logBytes.count), ledgerId: reader.header.ledgerId,
                                                  genesis: BatchChain.genesis(fileHeader: Array(logBytes[0..<64])))
                return nil
            } catch { return error }
        }
        #expect(try rejection(index) == nil)
        var flipped = index
        flipped[40] ^= 1
        #expect(try rejection(flipped) == LogCheckpoint.Rejection(reason: "checksum"))
        #expect(try rejection(flipped)?.description == "index/log.idx ignored: checksum [I1]")
        // Another ledger's index (intact: its checksum holds); a flipped ledgerId byte is
        // damage, not another ledger (the checksum is checked first).
        let foreign = try #require(LogCheckpoint.decode(index, ledgerId: reader.header.ledgerId))
            .encoded(ledgerId: UUID(uuidString: "6C656467-6572-4000-8000-0000000000FF")!)
        #expect(try rejection(foreign) == LogCheckpoint.Rejection(reason: "another ledger's index"))
        var flippedId = index
        flippedId[8] ^= 1
        #expect(try rejection(flippedId) == LogCheckpoint.Rejection(reason: "checksum"))
        #expect(try rejection(index, log: Array(bytes[0..<Self.batchOffset(2)]))
                == LogCheckpoint.Rejection(reason: "coveredLength \(bytes.count) outside the log's 472 bytes"))
    }

    /// I2: a writer validates from the index's coveredLength on; the older part is
    /// verify's job (a flipped byte there does not stop the writer, verify names it).
    @Test func i2AWriterValidatesOnlyPastTheIndex() async throws {
        let (fs, bytes) = try await Self.threeBatches(closed: true)
        var damaged = bytes
        damaged[Self.batchOffset(0) + 40 + 32 + 5] ^= 0x10
        let copy = Self.log(damaged)
        copy.setBytes(LogCheckpoint.fileName, fs.currentBytes(LogCheckpoint.fileName))
        let writer = try LogWriter.open(copy, options: testOptions)
        #expect(writer.recovery?.scannedFrom == UInt64(bytes.count))
        try await writer.close()
        #expect(try LogVerifier.verify(copy).damage == LogDamage(kind: .recordChecksum, offset: 104, length: 132, sequence: 1,
                                                                 inDurablePrefix: true))
    }
}
