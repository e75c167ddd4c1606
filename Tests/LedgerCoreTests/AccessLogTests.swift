import Foundation
import Testing
@testable import LedgerCore
import LedgerLog
import TestSupport

/// The access log: entries round-trip, concurrent records are all durable,
/// verify names damage, and the log holds no health data.
struct AccessLogTests {
    static func entry(_ i: Int) -> AccessEntry {
        AccessEntry(credential: i % 3 == 0 ? nil : CredentialID(UInt64(i)), subject: i % 2 == 0 ? "owner" : "com.example.a",
                    route: "GET /v1/samples/{type}", types: ["HKQuantityTypeIdentifierHeartRate"],
                    predicate: i % 2 == 0 ? "value > 60 count/min" : nil, returned: i * 10, status: 200,
                    ledgerSequence: UInt64(100 + i), peer: "127.0.0.1:\(40000 + i)")
    }

    @Test func entriesRecordedConcurrentlyAreAllDurableAndReadBackInOrder() async throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        let log = try AccessLog.openForWriting(ledgerPath: dir.path)
        let sequences = try await withThrowingTaskGroup(of: UInt64.self) { group in
            for i in 0..<64 { group.addTask { try await log.record(Self.entry(i)) } }
            return try await group.reduce(into: [UInt64]()) { $0.append($1) }
        }
        #expect(Set(sequences) == Set(1...64))
        log.abandon()  // as a crash would: every acknowledged entry must still be there
        let read = try AccessLog.entries(ledgerPath: dir.path)
        #expect(read.map(\.sequence) == Array(1...64))
        #expect(Set(read.map(\.entry.returned)) == Set((0..<64).map { $0 * 10 }))
        for stored in read { #expect(stored.entry == Self.entry(stored.entry.returned / 10)) }
        let v = try #require(try AccessLog.verify(ledgerPath: dir.path))
        #expect(v.isIntact && v.entries == 64)
        var st = stat()
        #expect(stat(dir.path + "/access", &st) == 0 && st.st_mode & 0o777 == 0o700)
        #expect(stat(dir.path + "/access/ledger.log", &st) == 0 && st.st_mode & 0o777 == 0o600)
    }

    /// A1, byte for byte: the payload FORMAT.md's Part 4 describes.
    @Test func a1TheAccessEntryPayloadIsTheFormatsBytes() throws {
        let e = AccessEntry(credential: CredentialID(0x81), subject: "owner", route: "GET /x", types: ["T"], predicate: nil, returned: 3,
                            status: 200, ledgerSequence: 300, peer: "unix")
        let expected: [UInt8] = [1, 0x81, 0x01]                          // u8 1 · varint 129
            + [5] + Array("owner".utf8) + [6] + Array("GET /x".utf8)     // subject, route
            + [1, 1] + Array("T".utf8)                                   // one type
            + [0]                                                        // no predicate
            + [3] + [0xC8, 0x01] + [0xAC, 0x02]                         // returned 3, status 200, sequence 300
            + [4] + Array("unix".utf8)
        #expect(e.payload == expected)
        let back = try expected.withUnsafeBytes { try AccessEntry(kind: 1, version: 1, payload: $0) }
        #expect(back == e)
        #expect(throws: EventDecodingError.unknownKind(kind: 2, version: 1)) {
            try expected.withUnsafeBytes { try AccessEntry(kind: 2, version: 1, payload: $0) }
        }
        #expect(throws: EventDecodingError.unknownVersion(kind: 1, version: 2)) {
            try expected.withUnsafeBytes { try AccessEntry(kind: 1, version: 2, payload: $0) }
        }
    }

    @Test func aFlippedByteOfTheAccessLogIsNamedByVerify() async throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        let log = try AccessLog.openForWriting(ledgerPath: dir.path)
        for i in 0..<5 { try await log.record(Self.entry(i)) }
        try await log.close()
        #expect(try AccessLog.verify(ledgerPath: dir.path)?.isIntact == true)
        let file = dir.path + "/access/ledger.log"
        var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: file)))
        bytes[120] ^= 0x01  // inside the first batch's first record
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let v = try #require(try AccessLog.verify(ledgerPath: dir.path))
        #expect(!v.isIntact)
        #expect(v.log.damage != nil)
        #expect(try AccessLog.verify(ledgerPath: dir.path + "/nothing") == nil)
    }
}
