import CLibPQ
import Foundation

/// A failure reported by libpq or the server, with the server's SQLSTATE when it sent one.
public struct PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done (`connect`, `INSERT batch`, `COMMIT`, …).
    public let operation: String
    /// The five-character SQLSTATE (`23505` unique violation, …); empty for a client-side failure.
    public let sqlState: String
    /// libpq's message, on one line.
    public let message: String
    /// True when the connection itself is gone (server restart, network): the outcome
    /// of a COMMIT in flight is then unknown until someone reads the table again.
    public let connectionLost: Bool

    public var description: String {
        "\(operation): \(message)" + (sqlState.isEmpty ? "" : " (SQLSTATE \(sqlState))")
    }

    /// SQLSTATE 23505: a primary key or unique index refused a row.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// SQLSTATE 42P01: a table that does not exist (the schema was never made here).
    public var isUndefinedTable: Bool { sqlState == "42P01" }
}

/// One value bound to a `$n` parameter: text (libpq converts) or raw bytes (bytea, binary).
public enum PostgresParameter: Sendable {
    case text(String)
    case bytes([UInt8])
}

/// A result set copied out of libpq: every cell as bytes in binary format (nil = NULL).
public struct PostgresRows: Sendable {
    /// Rows of cells.
    public let rows: [[[UInt8]?]]

    /// The cell as a big-endian binary `int8`/`int4`/`int2` (PostgreSQL's binary format).
    public func integer(_ row: Int, _ column: Int) -> Int64? {
        guard let cell = rows[row][column], [2, 4, 8].contains(cell.count) else { return nil }
        var value: Int64 = cell[0] & 0x80 != 0 ? -1 : 0
        for byte in cell { value = (value << 8) | Int64(byte) }
        return value
    }

    /// The cell as UTF-8 text.
    public func text(_ row: Int, _ column: Int) -> String? {
        rows[row][column].map { String(decoding: $0, as: UTF8.self) }
    }

    /// The cell as a boolean (binary: one byte).
    public func bool(_ row: Int, _ column: Int) -> Bool? {
        rows[row][column].flatMap { $0.count == 1 ? $0[0] != 0 : nil }
    }
}

/// One libpq connection, used by one thread at a time (a lock serialises callers).
///
/// Every session sets `synchronous_commit = on`: a COMMIT returns only once the
/// server flushed its WAL (and, when the server is configured with synchronous
/// standbys, once they confirmed), whatever the server's default.
public final class PostgresConnection: @unchecked Sendable {
    private let lock = NSLock()
    private var connection: OpaquePointer?
    /// The server, for messages (no password).
    public let serverDescription: String

    /// Connects with a libpq connection string or URI (`postgresql://…`).
    public init(conninfo: String, serverDescription: String) throws {
        self.serverDescription = serverDescription
        guard let conn = PQconnectdb(conninfo) else {
            throw PostgresError(operation: "connect to \(serverDescription)", sqlState: "", message: "out of memory",
                                connectionLost: true)
        }
        guard PQstatus(conn) == CONNECTION_OK else {
            let message = Self.oneLine(String(cString: PQerrorMessage(conn)))
            PQfinish(conn)
            throw PostgresError(operation: "connect to \(serverDescription)", sqlState: "", message: message,
                                connectionLost: true)
        }
        connection = conn
        // One round trip (a simple query may hold several statements); notices such as
        // "trigger does not exist, skipping" stay off stderr.
        let settings = PQexec(conn, "SET synchronous_commit TO on; SET client_min_messages TO warning")
        let ok = settings.map { PQresultStatus($0) == PGRES_COMMAND_OK } ?? false
        if let settings { PQclear(settings) }
        guard ok else {
            let message = Self.oneLine(String(cString: PQerrorMessage(conn)))
            PQfinish(conn)
            connection = nil
            throw PostgresError(operation: "configure the session on \(serverDescription)", sqlState: "", message: message,
                                connectionLost: true)
        }
    }

    deinit { close() }

    /// Closes the connection (a session's advisory locks and an open transaction end with it).
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        if let connection { PQfinish(connection) }
        connection = nil
    }

    /// Runs one statement with `$1…$n` parameters; results come back in binary format.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [PostgresParameter] = [], operation: String? = nil) throws -> PostgresRows {
        lock.lock()
        defer { lock.unlock() }
        let what = operation ?? String(sql.prefix(40))
        guard let conn = connection else {
            throw PostgresError(operation: what, sqlState: "", message: "the connection is closed", connectionLost: true)
        }
        // Parameter buffers must outlive PQexecParams: keep them as C allocations.
        var values: [UnsafeMutablePointer<CChar>?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        defer { for v in values { free(v) } }
        for parameter in parameters {
            switch parameter {
            case .text(let s):
                values.append(strdup(s))
                lengths.append(0)
                formats.append(0)
            case .bytes(let b):
                let p = malloc(max(b.count, 1))!.assumingMemoryBound(to: CChar.self)
                b.withUnsafeBytes { if $0.count > 0 { memcpy(p, $0.baseAddress!, $0.count) } }
                values.append(p)
                lengths.append(Int32(b.count))
                formats.append(1)
            }
        }
        let result: OpaquePointer? = values.withUnsafeBufferPointer { v in
            v.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: max(v.count, 1)) { pv in
                PQexecParams(conn, sql, Int32(parameters.count), nil, parameters.isEmpty ? nil : pv,
                             lengths, formats, 1)
            }
        }
        guard let result else {
            throw failure(conn, what)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            let message = Self.oneLine(String(cString: PQresultErrorMessage(result)))
            throw PostgresError(operation: what, sqlState: state, message: message,
                                connectionLost: PQstatus(conn) != CONNECTION_OK)
        }
        var rows: [[[UInt8]?]] = []
        let count = PQntuples(result), columns = PQnfields(result)
        rows.reserveCapacity(Int(count))
        for r in 0..<count {
            var row: [[UInt8]?] = []
            for c in 0..<columns {
                if PQgetisnull(result, r, c) != 0 { row.append(nil); continue }
                let length = Int(PQgetlength(result, r, c))
                let base = PQgetvalue(result, r, c)!
                row.append(Array(UnsafeRawBufferPointer(start: base, count: length)))
            }
            rows.append(row)
        }
        return PostgresRows(rows: rows)
    }

    /// Runs `body` (statements on this connection) and returns the notices the server
    /// sent meanwhile (INFO, WARNING …: `VACUUM VERBOSE` reports what it could not
    /// remove, and a VACUUM of another role's table only warns that it skipped it).
    /// The receiver stays set afterwards: for a connection used for this alone.
    func collectingNotices(_ body: () throws -> Void) throws -> [String] {
        let box = NoticeBox()
        let context = Unmanaged.passRetained(box)
        defer { context.release() }
        do {
            lock.lock()
            defer { lock.unlock() }
            guard let conn = connection else {
                throw PostgresError(operation: "notices", sqlState: "", message: "the connection is closed", connectionLost: true)
            }
            _ = PQsetNoticeReceiver(conn, { arg, result in
                guard let arg, let result, let message = PQresultErrorMessage(result) else { return }
                Unmanaged<NoticeBox>.fromOpaque(arg).takeUnretainedValue().append(String(cString: message))
            }, context.toOpaque())
        }
        defer {
            lock.lock()
            if let conn = connection { _ = PQsetNoticeReceiver(conn, { _, _ in }, nil) }
            lock.unlock()
        }
        try body()
        return box.messages
    }

    /// The socket, for waiting on notifications.
    func socket() -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        return connection.map { PQsocket($0) } ?? -1
    }

    /// Reads what the server sent and returns the payloads of the notifications received.
    func notifications() throws -> [(channel: String, payload: String)] {
        lock.lock()
        defer { lock.unlock() }
        guard let conn = connection else {
            throw PostgresError(operation: "LISTEN", sqlState: "", message: "the connection is closed", connectionLost: true)
        }
        guard PQconsumeInput(conn) == 1 else { throw failure(conn, "LISTEN") }
        var out: [(String, String)] = []
        while let n = PQnotifies(conn) {
            out.append((String(cString: n.pointee.relname), String(cString: n.pointee.extra)))
            PQfreemem(n)
        }
        return out
    }

    private func failure(_ conn: OpaquePointer, _ operation: String) -> PostgresError {
        PostgresError(operation: operation, sqlState: "", message: Self.oneLine(String(cString: PQerrorMessage(conn))),
                      connectionLost: PQstatus(conn) != CONNECTION_OK)
    }

    private static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: " ")
    }
}

/// The notices a connection received (`collectingNotices`): written by libpq's notice
/// receiver on the thread running the statement, read after it.
private final class NoticeBox: @unchecked Sendable {
    private let lock = NSLock()
    private var received: [String] = []
    func append(_ message: String) { lock.withLock { received.append(message) } }
    var messages: [String] { lock.withLock { received } }
}
