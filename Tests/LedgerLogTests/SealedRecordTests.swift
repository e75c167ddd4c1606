import Foundation
import LedgerChecksums
import LedgerCrypto
import Testing
@testable import LedgerLog

/// Sealed records (format version 2, issue 32): encrypted under a data key named by
/// id, the CRC, chain and Merkle leaf over the ciphertext, opened only with the key
/// and only in their own record of their own ledger.
struct SealedRecordTests {
    /// A key store of fixed keys: ids 1 and 2 live, 3 destroyed, anything else unknown.
    struct FixedKeys: RecordKeys {
        static let one = try! SealKey(bytes: (0..<32).map { UInt8($0) })
        static let two = try! SealKey(bytes: (0..<32).map { UInt8(0xA0 &+ $0) })
        func lookup(keyId: UInt64) -> RecordKeyLookup {
            switch keyId {
            case 1: .live(Self.one)
            case 2: .live(Self.two)
            case 3: .destroyed
            default: .unknown
            }
        }
    }

    static let secret = Array("weight 123.456 kg, note ZZ-ERASE-ME".utf8)
    static let salt: UInt32 = 0xA1B2_C3D4
    static let ledgerId = UUID(uuidString: "5EA1ED00-0000-4000-8000-000000000032")!

    static var options: LogWriterOptions {
        var o = testOptions
        o.sealedFormat = true
        o.recordKeys = FixedKeys()
        o.sealSalt = salt
        return o
    }

    /// A closed sealed log: batch 1 = a plain record (kind 1) and a record sealed
    /// under key 1 (kind 6); batch 2 = a record sealed under key 2 of the same length.
    static func sealedLog() async throws -> (fs: SimulatedFileSystem, bytes: [UInt8]) {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, ledgerId: ledgerId, options: options)
        var batch = RecordBatch()
        batch.append(kind: 1, version: 1, payload: Array("plain".utf8))
        batch.append(kind: 6, version: 2, sealedUnder: 1) { $0.append(contentsOf: secret) }
        _ = try await writer.append(batch)
        var second = RecordBatch()
        second.append(kind: 6, version: 2, sealedUnder: 2) { $0.append(contentsOf: secret.reversed()) }
        _ = try await writer.append(second)
        try await writer.close()
        return (fs, fs.currentBytes(LogWriter.logFileName))
    }

    /// Where the n-th record (0-based, over the whole log) starts, walking the bytes as
    /// FORMAT.md describes them.
    static func recordOffsets(_ log: [UInt8]) -> [Int] {
        var out: [Int] = []
        var at = 64
        while at + 40 <= log.count {
            let length = Int(u32(log, at + 4)), count = Int(u32(log, at + 16))
            var o = at + 40
            for _ in 0..<count {
                out.append(o)
                o += 32 + Int(u32(log, o + 4))
            }
            at += length
        }
        return out
    }

    static func u32(_ b: [UInt8], _ at: Int) -> UInt32 {
        b.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
    }
    static func u64(_ b: [UInt8], _ at: Int) -> UInt64 {
        b.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
    }

    /// Recomputes the CRC of the record at `at` (R1 holds again after a forgery).
    static func fixCRC(_ log: inout [UInt8], record at: Int) {
        let length = Int(u32(log, at + 4))
        let crc = log.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[at + 4..<at + 32 + length])) }
        log.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, toByteOffset: at, as: UInt32.self) }
    }

    /// Every record, read with `keys`: (sequence, payload, failure).
    static func read(_ bytes: [UInt8], keys: (any RecordKeys)?) throws -> [(UInt64, [UInt8], RecordSealFailure.Reason?)] {
        var out: [(UInt64, [UInt8], RecordSealFailure.Reason?)] = []
        try LogReader(FormatRuleTests.log(bytes), keys: keys).forEachRecord { r in
            out.append((r.sequence, r.payloadCopy(), r.sealFailure?.reason))
            return true
        }
        return out
    }

    @Test func aSealedLogHoldsNoPlaintextAndReadsBackOnlyWithItsKeys() async throws {
        let (_, bytes) = try await Self.sealedLog()
        #expect(Self.u32(bytes, 8) & 0xFFFF == 2 && Self.u32(bytes, 8) >> 16 == 2, "formatVersion 2, minReaderVersion 2")
        for needle in [Self.secret, Array(Self.secret.reversed()), Array("ZZ-ERASE-ME".utf8), Array("123.456".utf8)] {
            #expect(bytes.firstRange(of: needle) == nil)
        }
        #expect(bytes.firstRange(of: Array("plain".utf8)) != nil, "an unsealed record stays as it was")

        let opened = try Self.read(bytes, keys: FixedKeys())
        #expect(opened.map(\.0) == [1, 2, 3])
        #expect(opened.map(\.1) == [Array("plain".utf8), Self.secret, Array(Self.secret.reversed())])
        #expect(opened.allSatisfy { $0.2 == nil })

        // Without keys: the plain record reads, the sealed ones are named, never guessed.
        let closed = try Self.read(bytes, keys: nil)
        #expect(closed.map(\.1) == [Array("plain".utf8), [], []])
        #expect(closed.map(\.2) == [nil, .noKeys, .noKeys])

        // One record by its offset, as projections fetch them.
        let offsets = Self.recordOffsets(bytes)
        let reader = try LogReader(FormatRuleTests.log(bytes), keys: FixedKeys())
        #expect(try reader.record(atOffset: UInt64(offsets[1])).payload == Self.secret)
        let keyless = try LogReader(FormatRuleTests.log(bytes))
        #expect(throws: LogError.sealedRecordUnopened(sequence: 2, failure: RecordSealFailure(keyId: 1, reason: .noKeys))) {
            _ = try keyless.record(atOffset: UInt64(offsets[1]))
        }
        #expect(try keyless.record(atOffset: UInt64(offsets[0])).payload == Array("plain".utf8))

        // The structure is checked without any key: framing, CRCs, the chain.
        let report = try LogVerifier.verify(FormatRuleTests.log(bytes))
        #expect(report.damage == nil)
        #expect(report.records == 3)
    }

    /// FORMAT.md's recipe, followed by a stranger with nothing but an RFC 8439 AEAD:
    /// the key id at payload byte 0, the salt at 8, nonce = salt ‖ sequence (LE),
    /// associated data = ledger id ‖ header bytes 8..<32 ‖ payload bytes 0..<12.
    @Test func aStrangerOpensASealedRecordFromTheFormatAlone() async throws {
        let (_, bytes) = try await Self.sealedLog()
        let at = Self.recordOffsets(bytes)[1]
        let length = Int(Self.u32(bytes, at + 4))
        #expect(length == Self.secret.count + 28)
        #expect(Self.u32(bytes, at + 28) == 1, "flags: sealed")
        #expect(Self.u64(bytes, at + 32) == 1, "the key id")
        #expect(Self.u32(bytes, at + 40) == Self.salt)
        let sequence = Self.u64(bytes, at + 8)
        var nonce: [UInt8] = []
        withUnsafeBytes(of: Self.salt.littleEndian) { nonce += $0 }
        withUnsafeBytes(of: sequence.littleEndian) { nonce += $0 }
        var aad: [UInt8] = []
        withUnsafeBytes(of: Self.ledgerId.uuid) { aad += $0 }
        aad += bytes[at + 8..<at + 32]
        aad += bytes[at + 32..<at + 44]
        let sealed = Array(bytes[at + 44..<at + 32 + length])
        let plaintext = try ChaCha20Poly1305.open(sealed: sealed, key: FixedKeys.one, nonce: SealNonce(bytes: nonce),
                                                  associatedData: aad)
        #expect(plaintext == Self.secret)
        // And sealing the plaintext so gives the stored bytes exactly.
        #expect(try ChaCha20Poly1305.seal(plaintext: Self.secret, key: FixedKeys.one, nonce: SealNonce(bytes: nonce),
                                          associatedData: aad) == sealed)
    }

    /// R8: a tag that does not verify is named, never read as plaintext.
    @Test func everyBitOfTheTagAndCiphertextFlippedIsRefusedThoughItsCRCWasMadeToFit() async throws {
        let (_, bytes) = try await Self.sealedLog()
        let at = Self.recordOffsets(bytes)[1]
        let length = Int(Self.u32(bytes, at + 4))
        // Every bit of the payload after the key id: salt, ciphertext, tag.
        for byte in (at + 40)..<(at + 32 + length) {
            for bit in 0..<8 {
                var forged = bytes
                forged[byte] ^= UInt8(1 << bit)
                Self.fixCRC(&forged, record: at)
                let read = try Self.read(forged, keys: FixedKeys())
                #expect(read[1].2 == .authenticationFailed && read[1].1.isEmpty, "byte \(byte - at), bit \(bit)")
                #expect(read[0].1 == Array("plain".utf8) && read[2].2 == nil)
            }
        }
        // Without the CRC made to fit, a flip is damage (R1), as for any record.
        var flipped = bytes
        flipped[at + 50] ^= 1
        #expect(throws: LogError.self) { _ = try Self.read(flipped, keys: FixedKeys()) }
    }

    @Test func aSealedPayloadOpensOnlyInItsOwnRecordOfItsOwnLedger() async throws {
        let (_, bytes) = try await Self.sealedLog()
        let offsets = Self.recordOffsets(bytes)
        let (a, b) = (offsets[1], offsets[2])
        let length = Int(Self.u32(bytes, a + 4))
        #expect(Int(Self.u32(bytes, b + 4)) == length)
        // Record 2's payload (sealed under key 1) moved into record 3, and back: the
        // key id travels with it, the sequence in the nonce and associated data does not.
        var swapped = bytes
        swapped[a + 32..<a + 32 + length] = bytes[b + 32..<b + 32 + length]
        swapped[b + 32..<b + 32 + length] = bytes[a + 32..<a + 32 + length]
        Self.fixCRC(&swapped, record: a)
        Self.fixCRC(&swapped, record: b)
        #expect(try Self.read(swapped, keys: FixedKeys()).map(\.2) == [nil, .authenticationFailed, .authenticationFailed])
        // The kind changed (associated data), CRC fixed.
        var rekinded = bytes
        rekinded[a + 24] = 7
        Self.fixCRC(&rekinded, record: a)
        #expect(try Self.read(rekinded, keys: FixedKeys())[1].2 == .authenticationFailed)
        // The key id changed to the other live key (a forged `keyId` opens nothing).
        var rekeyed = bytes
        rekeyed[a + 32] = 2
        Self.fixCRC(&rekeyed, record: a)
        #expect(try Self.read(rekeyed, keys: FixedKeys())[1].2 == .authenticationFailed)
        // The same bytes in another ledger (its id in the file header, header CRC fixed).
        var foreign = bytes
        FormatRuleTests.forgeFileHeader(&foreign) { $0[16] ^= 0xFF }
        #expect(try Self.read(foreign, keys: FixedKeys()).map(\.2) == [nil, .authenticationFailed, .authenticationFailed])
    }

    @Test func aDestroyedOrUnknownKeyIsNamedAndTheRestStillReads() async throws {
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, ledgerId: Self.ledgerId, options: Self.options)
        var batch = RecordBatch()
        batch.append(kind: 6, version: 2, sealedUnder: 1) { $0.append(contentsOf: Self.secret) }
        _ = try await writer.append(batch)
        try await writer.close()
        /// Key 1 destroyed after the write (an erasure), or never known (another store).
        struct Erased: RecordKeys { func lookup(keyId: UInt64) -> RecordKeyLookup { .destroyed } }
        struct Foreign: RecordKeys { func lookup(keyId: UInt64) -> RecordKeyLookup { .unknown } }
        let bytes = fs.currentBytes(LogWriter.logFileName)
        #expect(try Self.read(bytes, keys: Erased()).map(\.2) == [.keyDestroyed])
        #expect(try Self.read(bytes, keys: Foreign()).map(\.2) == [.keyUnknown])
        #expect(RecordSealFailure(keyId: 1, reason: .keyDestroyed).description
                == "sealed under key 1, which was destroyed (erased)")
    }

    /// W9: a sealed record only in a version 2 log, only under a live key; refused
    /// for the whole batch before anything is written.
    @Test func aSealedRecordIsRefusedBeforeAnythingIsWrittenWhereItCannotBeSealed() async throws {
        // A plain log (version 1) has no flags: no sealed record, whatever the keys.
        let plainFS = SimulatedFileSystem()
        var plainOptions = Self.options
        plainOptions.sealedFormat = false
        let plain = try LogWriter.create(plainFS, options: plainOptions)
        _ = try await plain.append([LogRecord(kind: 1, kindVersion: 1, payload: [1, 2, 3])])
        let before = plainFS.currentBytes(LogWriter.logFileName)
        var batch = RecordBatch()
        batch.append(kind: 6, version: 2, sealedUnder: 1) { $0.append(contentsOf: Self.secret) }
        await #expect(throws: LogError.sealedRecordInPlainLog) { _ = try await plain.append(batch) }
        #expect(plainFS.currentBytes(LogWriter.logFileName) == before)
        _ = try await plain.append([LogRecord(kind: 1, kindVersion: 1, payload: [4])])  // still writes
        try await plain.close()
        #expect(Self.u32(plainFS.currentBytes(LogWriter.logFileName), 8) == 0x0001_0001, "version 1, reader 1")

        // A sealed log, a key the writer does not hold live: unknown, destroyed, or no store.
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, options: Self.options)
        for id: UInt64 in [3, 9] {
            var b = RecordBatch()
            b.append(kind: 1, version: 1, payload: [1])
            b.append(kind: 6, version: 2, sealedUnder: id) { $0.append(contentsOf: Self.secret) }
            await #expect(throws: LogError.sealKeyUnavailable(keyId: id)) { _ = try await writer.append(b) }
        }
        _ = try await writer.append([LogRecord(kind: 1, kindVersion: 1, payload: [2])])
        try await writer.close()
        var keyless = testOptions
        keyless.recordKeys = nil
        let reopened = try LogWriter.open(fs, options: keyless)
        var b = RecordBatch()
        b.append(kind: 6, version: 2, sealedUnder: 1) { $0.append(contentsOf: Self.secret) }
        await #expect(throws: LogError.sealKeyUnavailable(keyId: 1)) { _ = try await reopened.append(b) }
        try await reopened.close()
        #expect(try Self.read(fs.currentBytes(LogWriter.logFileName), keys: FixedKeys()).map(\.1) == [[2]])
    }

    /// R6 and R7: flags other than `sealed`, `sealed` in a version 1 log, and a sealed
    /// payload too short for its key id, salt and tag are damage, CRC notwithstanding.
    @Test func recordFlagsAreCheckedByTheFormatVersion() async throws {
        let (_, sealed) = try await Self.sealedLog()
        let at = Self.recordOffsets(sealed)[0]
        var unknownFlag = sealed
        unknownFlag[at + 28] = 2
        Self.fixCRC(&unknownFlag, record: at)
        #expect(try LogVerifier.verify(FormatRuleTests.log(unknownFlag)).damage?.kind == .recordFields)

        var short = sealed
        short[at + 28] = 1  // "plain" (5 bytes) claimed sealed: shorter than 28
        Self.fixCRC(&short, record: at)
        #expect(try LogVerifier.verify(FormatRuleTests.log(short)).damage?.kind == .recordFields)

        let (_, plain) = try await FormatRuleTests.threeBatches(closed: true)
        let p = Self.recordOffsets(plain)[0]
        var flagged = plain
        flagged[p + 28] = 1
        Self.fixCRC(&flagged, record: p)
        #expect(try LogVerifier.verify(FormatRuleTests.log(flagged)).damage?.kind == .recordFields)
        #expect(try LogVerifier.verify(FormatRuleTests.log(plain)).damage == nil)
    }

    /// Reopened, a sealed log takes more sealed records under its keys; the new
    /// writer's records carry its own salt.
    @Test func aReopenedWriterAppendsSealedRecordsWithItsOwnSalt() async throws {
        let (fs, _) = try await Self.sealedLog()
        var options = Self.options
        options.sealSalt = 0x0102_0304
        let writer = try LogWriter.open(fs, options: options)
        var batch = RecordBatch()
        batch.append(kind: 6, version: 2, sealedUnder: 1) { $0.append(contentsOf: Self.secret) }
        _ = try await writer.append(batch)
        try await writer.close()
        let bytes = fs.currentBytes(LogWriter.logFileName)
        let offsets = Self.recordOffsets(bytes)
        #expect(offsets.map { Self.u32(bytes, $0 + 40) }.suffix(3) == [Self.salt, Self.salt, 0x0102_0304])
        #expect(try Self.read(bytes, keys: FixedKeys()).map(\.1).last == Self.secret)
    }
}
