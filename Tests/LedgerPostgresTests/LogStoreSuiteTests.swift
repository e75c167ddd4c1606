import Foundation
import LedgerLog
@testable import LedgerPostgres
import Testing
import TestSupport
import LedgerChecksums

/// The log layer's behaviour on both stores: the same writer, scanner, reader and
/// verifier over a folder and over PostgreSQL give the same bytes and the same answers.
@Suite(.enabled(if: PGTest.enabled, PGTest.reason))
struct LogStoreSuiteTests {
    /// Writes `batches` test batches into a new ledger with a fixed id and clock; returns
    /// each batch's acknowledged sequence range.
    static func fill(_ store: StoreUnderTest, batches: Int) async throws -> [ClosedRange<UInt64>] {
        let clock = FixedClock()
        let id = UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!
        let writer = try LogWriter.create(store.fs, ledgerId: id, options: LogWriterOptions(clock: clock.function))
        var acknowledged: [ClosedRange<UInt64>] = []
        for i in 0..<batches { acknowledged.append(try await writer.append(testRecords(batch: i))) }
        try await writer.close()
        return acknowledged
    }

    @Test(arguments: StoreKind.allCases)
    func roundTripGivesTheRecordsBackExactly(_ kind: StoreKind) async throws {
        let store = try StoreUnderTest(kind)
        let ranges = try await Self.fill(store, batches: 60)
        #expect(ranges.first == 1...1)
        let reader = try LogReader(store.fs)
        var seen: [StoredRecord] = []
        let end = try reader.forEachRecord(verifyChain: true) { seen.append(try $0.stored()); return true }
        let expected = (0..<60).flatMap { testRecords(batch: $0) }
        #expect(seen.count == expected.count)
        for (i, (got, want)) in zip(seen, expected).enumerated() {
            #expect(got.sequence == UInt64(i + 1))
            #expect(got.kind == want.kind && got.kindVersion == want.kindVersion)
            #expect(got.payload == want.payload, "record \(i + 1)")
        }
        #expect(end.nextSequence == UInt64(expected.count + 1))
        #expect(end.incompleteTail == nil)
        // A record fetched by its offset, as projections do.
        let tenth = try reader.record(atOffset: seen[9].offset)
        #expect(tenth.payload == expected[9].payload)
    }

    /// The same appends with the same clock and ledger id give the same bytes in a folder
    /// and in PostgreSQL (the writer and its format are one; only the storage differs).
    // P1: the rows are the log's bytes, cut at batch boundaries.
    @Test func bothStoresHoldTheSameBytes() async throws {
        let files = try StoreUnderTest(.files), pg = try StoreUnderTest(.postgres)
        _ = try await Self.fill(files, batches: 40)
        _ = try await Self.fill(pg, batches: 40)
        let a = try files.logBytes(), b = try pg.logBytes()
        #expect(a.count > 40 * 72)
        #expect(a == b)
    }

    @Test(arguments: StoreKind.allCases)
    func theChainVerifiesAndItsHeadIsTheLastLink(_ kind: StoreKind) async throws {
        let store = try StoreUnderTest(kind)
        _ = try await Self.fill(store, batches: 30)
        let report = try LogVerifier.verify(store.fs)
        #expect(report.isIntact)
        #expect(report.batches == 31)  // 30 and the seal
        #expect(report.seals == 1)
        #expect(report.records == UInt64((0..<30).reduce(0) { $0 + testRecords(batch: $1).count }))
        let bytes = try store.logBytes()
        #expect(report.bytes == UInt64(bytes.count))
        #expect(report.chainHead == SHA256Digest(Array(bytes.suffix(32))))
        // Recomputed independently: genesis = SHA-256(header), link = SHA-256(prev ‖ batch without link).
        var link = SHA256.hash(Array(bytes[0..<64]))
        var offset = 64
        while offset < bytes.count {
            let length = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
            link = SHA256.hash(link.array + Array(bytes[offset..<offset + length - 32]))
            #expect(link.array == Array(bytes[offset + length - 32..<offset + length]))
            offset += length
        }
        #expect(link == report.chainHead)
    }

    /// A byte changed anywhere is found at the unit it damaged, with the same rule in
    /// both stores, by the verifier and by a chain-checking reader; nothing else changes.
    @Test(arguments: StoreKind.allCases)
    func aChangedByteIsDetectedAtTheDamagedUnit(_ kind: StoreKind) async throws {
        let store = try StoreUnderTest(kind)
        _ = try await Self.fill(store, batches: 12)
        let pristine = try store.logBytes()
        // The first batch holds one record of 10 payload bytes: header 40, record 32 + 10, link 32.
        let firstLength = Int(pristine[68]) | Int(pristine[69]) << 8
        try #require(firstLength == 114)
        let cases: [(offset: UInt64, kind: LogDamage.Kind, at: UInt64)] = [
            (66, .batchHeader, 64),                    // the batch magic
            (64 + 40 + 32 + 5, .recordChecksum, 104),  // a payload byte of record 1
            (64 + 40 + 8, .recordChecksum, 104),       // record 1's sequence number (under its CRC)
            (64 + 113, .chainMismatch, 64 + 114 - 32), // the first batch's link
            (20, .fileHeader, 0),                      // the ledger id in the file header
        ]
        for c in cases {
            try store.flip(at: c.offset)
            let report = try LogVerifier.verify(store.fs)
            #expect(report.damage?.kind == c.kind, "byte \(c.offset)")
            #expect(report.damage?.offset == c.at, "byte \(c.offset)")
            #expect(report.damage?.inDurablePrefix == true, "byte \(c.offset)")
            if c.offset >= 64 {
                #expect(throws: LogError.self, "byte \(c.offset)") {
                    try LogReader(store.fs).forEachRecord(verifyChain: true) { _ in true }
                }
            }
            #expect(try store.logBytes() == Self.flipped(pristine, at: c.offset), "nothing else changed")
            try store.flip(at: c.offset)  // back
            #expect(try LogVerifier.verify(store.fs).isIntact)
        }
    }

    static func flipped(_ bytes: [UInt8], at offset: UInt64) -> [UInt8] {
        var b = bytes
        b[Int(offset)] ^= 1
        return b
    }

    /// The last batch damaged: in a folder a possible torn tail (no later batch vouches
    /// for it), in PostgreSQL damage (every stored row was committed) — never cut there.
    // P5: every stored row was committed: a bad last batch is damage, never a torn tail.
    @Test func aDamagedLastBatchIsDamageInPostgresNotATornTail() async throws {
        let store = try StoreUnderTest(.postgres)
        _ = try await Self.fill(store, batches: 5)
        let bytes = try store.logBytes()
        let seal = UInt64(bytes.count - 72)
        try store.flip(at: seal + 10)  // inside the seal's header
        let report = try LogVerifier.verify(store.fs)
        #expect(report.damage?.kind == .batchHeader)
        #expect(report.damage?.offset == seal)
        #expect(report.damage?.inDurablePrefix == true)
        // Without the cached index, a writer's open scans to the end: damage, nothing cut.
        try store.fs.remove("index/log.idx")
        do {
            _ = try LogWriter.open(store.fs)
            Issue.record("opened over a damaged last batch")
        } catch LogError.damaged(let damage) {
            #expect(damage.offset == seal)
            #expect(damage.inDurablePrefix)
        }
        #expect(try store.logBytes().count == bytes.count)
        #expect(store.fs.list("quarantine").isEmpty)
    }

    /// Readers scanning while a writer appends see a consistent, growing prefix: dense
    /// sequence numbers from 1, a valid chain, never a partial batch.
    @Test(arguments: StoreKind.allCases)
    func concurrentReadersSeeConsistentPrefixes(_ kind: StoreKind) async throws {
        let store = try StoreUnderTest(kind)
        let writer = try LogWriter.create(store.fs)
        let total = 120
        let failures = LockedStrings()
        let done = LockedFlag()
        let readers = (0..<3).map { _ in
            Thread.detachNewThreadWithResult {
                var lastCount: UInt64 = 0, scans = 0
                while true {
                    let finished = done.value
                    do {
                        let reader = try LogReader(store.fs)
                        var next: UInt64 = 1
                        let end = try reader.forEachRecord(verifyChain: true) { r in
                            if r.sequence != next { failures.add("gap at \(next): \(r.sequence)") }
                            next += 1
                            return true
                        }
                        if end.nextSequence - 1 < lastCount { failures.add("went back from \(lastCount) to \(end.nextSequence - 1)") }
                        lastCount = end.nextSequence - 1
                        scans += 1
                    } catch {
                        failures.add("\(error)")
                    }
                    if finished { return (lastCount, scans) }
                }
            }
        }
        var expected: UInt64 = 0
        for i in 0..<total {
            try await writer.append(testRecords(batch: i))
            expected += UInt64(testRecords(batch: i).count)
        }
        done.set()
        let results = readers.map { $0.wait() }
        try await writer.close()
        #expect(failures.all.isEmpty, "\(failures.all.prefix(5))")
        for (count, scans) in results {
            #expect(count == expected)
            #expect(scans >= 1)
        }
    }
}

/// Strings collected from several threads.
final class LockedStrings: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ s: String) { lock.withLock { items.append(s) } }
    var all: [String] { lock.withLock { items } }
}

/// A flag set once, read from several threads.
final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false
    func set() { lock.withLock { flag = true } }
    var value: Bool { lock.withLock { flag } }
}

/// A thread whose result can be awaited (blocking).
final class ThreadResult<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: T?
    func finish(_ value: T) { result = value; done.signal() }
    func wait() -> T { done.wait(); return result! }
}

extension Thread {
    static func detachNewThreadWithResult<T: Sendable>(_ body: @escaping @Sendable () -> T) -> ThreadResult<T> {
        let r = ThreadResult<T>()
        Thread.detachNewThread { r.finish(body()) }
        return r
    }
}
