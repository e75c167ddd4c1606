import Foundation
import Testing
import LedgerChecksums
@testable import LedgerLog

/// `index/log.idx` is derived data. A flipped byte anywhere in it is
/// damage to that file — I1: ignored and rebuilt — never a finding against the log
/// (it made `verify` say "the log was cut or replaced?", exit 6).
struct LogIndexVerifyTests {
    @Test func aFlippedByteAnywhereInTheLogIndexIsIgnoredNotBlamedOnTheLog() async throws {
        let (fs, bytes) = try await FormatRuleTests.threeBatches(closed: true)
        let index = fs.currentBytes(LogCheckpoint.fileName)
        #expect(index.count == 96 + 16)
        for i in index.indices {
            for mask: UInt8 in [0x01, 0x80] {
                var flipped = index
                flipped[i] ^= mask
                let copy = FormatRuleTests.log(bytes)
                copy.setBytes(LogCheckpoint.fileName, flipped)
                let report = try LogVerifier.verify(copy)
                #expect(report.damage == nil, "byte \(i) ^ \(mask)")
                #expect(!report.staleIndex, "byte \(i) ^ \(mask)")
                #expect(report.ignoredIndex == "index/log.idx ignored: \(Self.reason(flippingByte: i, mask: mask)) [I1]",
                        "byte \(i) ^ \(mask)")
            }
        }
        // The intact index: used, nothing to say.
        let report = try LogVerifier.verify(fs)
        #expect(report.isIntact && report.indexDisagreement == nil && report.ignoredIndex == nil)
    }

    /// What I1 says of an index of one entry (112 bytes) with byte `i` flipped by `mask`:
    /// the magic, the entry count (checked against the size first), else the checksum.
    static func reason(flippingByte i: Int, mask: UInt8) -> String {
        switch i {
        case 0..<8: return "not an index (magic)"
        case 80..<88:
            let count = UInt64(1) ^ (UInt64(mask) << (8 * UInt64(i - 80)))
            return count <= 1 ? "112 bytes for \(count) entries" : "entryCount \(count) does not fit the file's 112 bytes"
        default: return "checksum"
        }
    }

    /// An intact index (checksum good) that does not fit the log is still a finding: another
    /// ledger's, or one written for a history the log no longer holds.
    @Test func anIntactIndexThatDoesNotFitTheLogIsStillAFinding() async throws {
        let (fs, bytes) = try await FormatRuleTests.threeBatches(closed: true)
        let index = fs.currentBytes(LogCheckpoint.fileName)
        let ledgerId = try LogReader(fs).header.ledgerId
        let checkpoint = try #require(LogCheckpoint.decode(index, ledgerId: ledgerId))

        let foreign = FormatRuleTests.log(bytes)
        foreign.setBytes(LogCheckpoint.fileName, checkpoint.encoded(ledgerId: UUID(uuidString: "6C656467-6572-4000-8000-0000000000FF")!))
        let other = try LogVerifier.verify(foreign)
        #expect(other.damage == nil && other.ignoredIndex == nil)
        #expect(other.indexDisagreement == "another ledger's index")

        // The log's last batch rewritten (its record's CRC and its link recomputed, so the
        // log alone is valid) under the index written for the old one.
        var rewritten = bytes
        let last = FormatRuleTests.batchOffset(2)
        let end = last + FormatRuleTests.batchLength
        rewritten[last + 40 + 32] ^= 1
        rewritten.withUnsafeMutableBytes { b in
            let record = UnsafeMutableRawBufferPointer(rebasing: b[(last + 40)..<(end - 32)])
            record.storeBytes(of: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: record[4...])).littleEndian, toByteOffset: 0,
                              as: UInt32.self)
        }
        let previous = SHA256Digest(Array(rewritten[(last - 32)..<last]))
        var chain = SHA256()
        chain.update(previous.array)
        chain.update(Array(rewritten[last..<(end - 32)]))
        rewritten.replaceSubrange((end - 32)..<end, with: chain.finalize().array)
        let cut = FormatRuleTests.log(rewritten)
        let sealLink = SHA256.hash(Array(rewritten[(end - 32)..<end]) + Array(rewritten[end..<(rewritten.count - 32)]))
        rewritten.replaceSubrange((rewritten.count - 32)..<rewritten.count, with: sealLink.array)
        cut.setBytes(LogWriter.logFileName, rewritten)
        #expect(try LogVerifier.verify(cut).isIntact)  // no index: a valid log
        cut.setBytes(LogCheckpoint.fileName, index)
        let replaced = try LogVerifier.verify(cut)
        #expect(replaced.damage == nil && replaced.ignoredIndex == nil)
        #expect(replaced.indexDisagreement == "its link is not the log's at byte \(bytes.count)")
    }
}
