import Foundation
import LedgerLog
@testable import LedgerPostgres
import Testing
import TestSupport

/// The server the PostgreSQL tests run against: `HEALTHLEDGER_TEST_POSTGRES`
/// (tools/pg_test.sh starts a throwaway one and sets it).
enum PGTest {
    static let url = ProcessInfo.processInfo.environment["HEALTHLEDGER_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
    static let enabled = url != nil
    static let reason: Comment = "needs a PostgreSQL server: HEALTHLEDGER_TEST_POSTGRES=postgres://… (tools/pg_test.sh starts one)"
    /// The script that restarts the server (tools/pg_server.sh writes it).
    static let restartScript = ProcessInfo.processInfo.environment["HEALTHLEDGER_TEST_PG_RESTART"]

    /// A ledger name no other test uses.
    static func freshName(_ prefix: String) -> String {
        "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    static func location(_ ledger: String) throws -> PostgresLocation {
        try PostgresLocation(url! + "?ledger=" + ledger)
    }

    /// `postgres://…?ledger=NAME` for the CLI.
    static func ledgerURL(_ ledger: String) -> String { url! + "?ledger=" + ledger }

    /// A store for a new ledger, with its cache in `cache`.
    static func store(_ ledger: String, cache: TemporaryDirectory, advisoryLock: Bool = true) throws -> PostgresLogFileSystem {
        try PostgresLogFileSystem(location(ledger), cacheRoot: cache.path, advisoryLock: advisoryLock)
    }

    /// A plain connection for tampering and inspection.
    static func connection() throws -> PostgresConnection {
        let l = try PostgresLocation(url!)
        return try PostgresConnection(conninfo: l.conninfo, serverDescription: l.description)
    }

    /// The ledger's log as the store holds it: header then batches in offset order.
    static func storedLog(_ ledger: String) throws -> [UInt8] {
        let c = try connection()
        defer { c.close() }
        var bytes = try c.execute("SELECT header FROM healthledger_ledgers WHERE ledger = $1", [.text(ledger)]).rows[0][0]!
        let rows = try c.execute("SELECT bytes FROM healthledger_batches WHERE ledger = $1 ORDER BY byte_offset", [.text(ledger)])
        for row in rows.rows { bytes += row[0]! }
        return bytes
    }

    /// Flips bits of one byte of the stored log with an UPDATE (header or batch row).
    static func flip(_ ledger: String, at offset: UInt64, mask: UInt8 = 0x01) throws {
        let c = try connection()
        defer { c.close() }
        if offset < 64 {
            try c.execute("UPDATE healthledger_ledgers SET header = set_byte(header, $2::int, get_byte(header, $2::int) # $3::int) WHERE ledger = $1",
                          [.text(ledger), .text(String(offset)), .text(String(mask))])
            return
        }
        let rows = try c.execute("""
            UPDATE healthledger_batches SET bytes = set_byte(bytes, ($2::bigint - byte_offset)::int,
                get_byte(bytes, ($2::bigint - byte_offset)::int) # $3::int)
            WHERE ledger = $1 AND byte_offset = (SELECT max(byte_offset) FROM healthledger_batches
                                                 WHERE ledger = $1 AND byte_offset <= $2::bigint)
            RETURNING byte_offset
            """, [.text(ledger), .text(String(offset)), .text(String(mask))])
        precondition(rows.rows.count == 1, "no batch row holds byte \(offset)")
    }
}

/// The two stores the log layer's suite runs on.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case files, postgres
    var testDescription: String { rawValue }
}

/// One ledger in one store, for the shared suite.
final class StoreUnderTest: @unchecked Sendable {
    let kind: StoreKind
    let cache = TemporaryDirectory("cache")
    let folder = TemporaryDirectory("ledger")
    let name: String
    let fs: any LogFileSystem

    init(_ kind: StoreKind) throws {
        self.kind = kind
        name = PGTest.freshName("suite")
        switch kind {
        case .files: fs = folder.fs
        case .postgres: fs = try PGTest.store(name, cache: cache)
        }
    }

    /// The log's bytes as stored.
    func logBytes() throws -> [UInt8] {
        switch kind {
        case .files: return Array(try Data(contentsOf: folder.url.appendingPathComponent(LogWriter.logFileName)))
        case .postgres: return try PGTest.storedLog(name)
        }
    }

    /// Changes one byte of the stored log behind the log layer's back.
    func flip(at offset: UInt64, mask: UInt8 = 0x01) throws {
        switch kind {
        case .files:
            let path = folder.url.appendingPathComponent(LogWriter.logFileName)
            var bytes = try Data(contentsOf: path)
            bytes[Int(offset)] ^= mask
            try bytes.write(to: path)
        case .postgres:
            try PGTest.flip(name, at: offset, mask: mask)
        }
    }
}

/// A clock that ticks one microsecond per call from a fixed instant: the same appends
/// give the same bytes on every run and in every store.
final class FixedClock: @unchecked Sendable {
    private let lock = NSLock()
    private var now: Int64 = 1_764_547_200_000_000_000
    func next() -> Int64 { lock.withLock { now += 1_000; return now } }
    var function: @Sendable () -> Int64 { { [self] in self.next() } }
}

/// Records for batch `i` of a test: 1–4 records of deterministic payloads, some empty, one large.
func testRecords(batch i: Int) -> [LogRecord] {
    (0..<(1 + i % 4)).map { j in
        let length = i % 17 == 5 ? 70_000 : (i + j) % 9 == 4 ? 0 : 10 + (i * 31 + j * 7) % 300
        return LogRecord(kind: UInt16(1 + (i + j) % 12), kindVersion: 1, payload: payload(seed: UInt64(i * 8 + j), length: length))
    }
}
