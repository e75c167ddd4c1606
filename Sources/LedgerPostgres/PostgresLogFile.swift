import Foundation
import LedgerLog

/// `ledger.log` as rows: byte offset 0..<64 is the ledger's header row, and every
/// batch is one row at its byte offset. Reading maps a byte range to the rows that
/// overlap it; appending parses the writer's bytes into whole batches and inserts them.
///
/// - `write` only appends (at the end the handle knows); bytes are sent in whole
///   batches, 4 MiB at a time inside one open transaction, and `sync` commits: what a
///   crash (or `kill -9`, or a lost connection) interrupts is rolled back whole, and an
///   append is acknowledged only after COMMIT returned (synchronous commit).
/// - A row the keys refuse (another writer already committed at that offset or first
///   sequence number) fails the whole transaction: `ledgerLocked`, nothing stored.
/// - `allocate` reserves nothing in the database; it only moves the length this handle
///   reports (Z1 has no meaning for rows), and `truncate` gives that back. Committed
///   batches are never cut.
/// - A batch row that is missing (deleted behind the store's back) reads as zeros, so
///   the scanner reports damage at its offset.
final class PostgresLogFile: LogFile, @unchecked Sendable {
    enum Mode { case reading, creating, appending }

    /// The first key of the advisory lock of every ledger ('HL'); the second is hashtext(name).
    static let lockClass: Int32 = 0x484C
    /// Batches are sent to the server once this many bytes are pending (inside a transaction).
    static let sendBytes = 4 << 20
    /// A small read is served from a window of this many bytes, kept for the next read.
    static let readWindow = 1 << 20

    private let connection: PostgresConnection
    private let owned: Bool
    private let ledger: String
    private let location: String
    private let mode: Mode
    private let advisoryLock: Bool
    private let lock = NSLock()

    /// The header bytes, once known (creating: before they are stored).
    private var header: [UInt8]?
    private var headerStored: Bool
    /// The header row was inserted in the open transaction (gone again on rollback).
    private var headerUncommitted = false
    /// End of the rows committed, as this appending handle knows them.
    private var committedEnd: UInt64
    /// End of the rows sent (committed, or inserted in the open transaction).
    private var sentEnd: UInt64
    /// Bytes written after `sentEnd`, not yet sent.
    private var pending: [UInt8] = []
    private var inTransaction = false
    /// The length `allocate` reserved (reported by `size`, nothing stored).
    private var reservedEnd: UInt64 = 0
    /// Reading handles: the last window of committed bytes (they never change).
    private var window: (start: UInt64, bytes: [UInt8])?

    init(connection: PostgresConnection, owned: Bool, ledger: String, location: String, mode: Mode,
         advisoryLock: Bool = true) throws {
        self.advisoryLock = advisoryLock
        self.connection = connection
        self.owned = owned
        self.ledger = ledger
        self.location = location
        self.mode = mode
        headerStored = mode != .creating
        if mode == .appending {
            committedEnd = try Self.storedLength(connection, ledger: ledger, location: location)
        } else {
            // Creating: batches follow the header, which is stored with the first commit.
            committedEnd = 64
        }
        sentEnd = committedEnd
    }

    deinit { close() }

    /// The stored log's length: 64 (the header) plus every batch up to the last one.
    static func storedLength(_ connection: PostgresConnection, ledger: String, location: String) throws -> UInt64 {
        try mapped(location) {
            let rows = try connection.execute("""
                SELECT byte_offset + octet_length(bytes) FROM healthledger_batches
                WHERE ledger = $1 ORDER BY byte_offset DESC LIMIT 1
                """, [.text(ledger)], operation: "read the log's length")
            guard !rows.rows.isEmpty else { return 64 }
            guard let end = rows.integer(0, 0), end >= 64 else {
                throw LogError.notALedgerLog(reason: "\(location): the last batch row has no valid offset", rule: "P1")
            }
            return UInt64(end)
        }
    }

    private static func mapped<T>(_ location: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as PostgresError {
            throw PostgresLogFileSystem.logError(error, location: location)
        }
    }

    private func mapped<T>(_ body: () throws -> T) throws -> T { try Self.mapped(location, body) }

    // MARK: LogFile

    func size() throws -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        switch mode {
        case .reading:
            return try Self.storedLength(connection, ledger: ledger, location: location)
        case .creating where header == nil:
            return reservedEnd
        case .creating, .appending:
            return max(sentEnd + UInt64(pending.count), reservedEnd)
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        lock.lock()
        defer { lock.unlock() }
        guard buffer.count > 0 else { return 0 }
        // Bytes not yet sent are this handle's own (creating or appending).
        if mode != .reading, !headerStored, offset < 64 {
            let h = header ?? []
            guard offset < UInt64(h.count) else { return 0 }
            let n = min(buffer.count, h.count - Int(offset))
            h.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + Int(offset), byteCount: n) }
            return n
        }
        let end = offset + UInt64(buffer.count)
        if mode == .reading, let w = window, offset >= w.start, end <= w.start + UInt64(w.bytes.count) {
            let start = Int(offset - w.start)
            w.bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + start, byteCount: buffer.count) }
            return buffer.count
        }
        if mode == .reading, buffer.count < Self.readWindow {
            var bytes = [UInt8](repeating: 0, count: Self.readWindow)
            let got = try bytes.withUnsafeMutableBytes { try readStored(into: $0, at: offset) }
            bytes.removeLast(bytes.count - got)
            window = (offset, bytes)
            let n = min(got, buffer.count)
            bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: n) }
            return n
        }
        var got = try readStored(into: buffer, at: offset)
        if mode != .reading, !pending.isEmpty, end > sentEnd {
            // The pending tail follows the sent rows directly.
            let from = max(offset, sentEnd)
            if from == offset + UInt64(got) {
                let start = Int(from - sentEnd)
                let n = min(pending.count - start, Int(end - from))
                if n > 0 {
                    pending.withUnsafeBytes {
                        (buffer.baseAddress! + got).copyMemory(from: $0.baseAddress! + start, byteCount: n)
                    }
                    got += n
                }
            }
        }
        return got
    }

    /// Reads stored bytes (header row, batch rows) at `offset`; gaps between rows read as zeros.
    private func readStored(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        let end = offset + UInt64(buffer.count)
        var covered = offset  // bytes before this are filled
        var filledTo = offset  // the end of real bytes seen (gaps before a later row count as read)
        try mapped {
            if offset < 64 {
                let rows = try connection.execute("SELECT header FROM healthledger_ledgers WHERE ledger = $1", [.text(ledger)],
                                                  operation: "read the header")
                guard let h = rows.rows.first?[0] else { throw LogError.ledgerNotFound(path: location) }
                let n = Int(min(UInt64(h.count), end) - min(offset, UInt64(h.count)))
                if n > 0 {
                    h.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + Int(offset), byteCount: n) }
                    covered = offset + UInt64(n)
                    filledTo = covered
                }
                if covered < 64 { return }
            }
            let rows = try connection.execute("""
                SELECT byte_offset, bytes FROM healthledger_batches
                WHERE ledger = $1 AND byte_offset < $3 AND byte_offset >= coalesce(
                    (SELECT max(byte_offset) FROM healthledger_batches WHERE ledger = $1 AND byte_offset <= $2), 0)
                ORDER BY byte_offset
                """, [.text(ledger), .text(String(covered)), .text(String(end))], operation: "read batches")
            for i in rows.rows.indices {
                guard let start = rows.integer(i, 0).flatMap({ UInt64(exactly: $0) }), let bytes = rows.rows[i][1] else { continue }
                let rowEnd = start + UInt64(bytes.count)
                guard rowEnd > covered else { continue }
                if start > covered {
                    // A missing batch: zeros, so the scanner names the damage at this offset.
                    let gap = Int(min(start, end) - covered)
                    (buffer.baseAddress! + Int(covered - offset)).initializeMemory(as: UInt8.self, repeating: 0, count: gap)
                    covered += UInt64(gap)
                }
                guard covered < end else { break }
                let from = Int(covered - start)
                let n = Int(min(rowEnd, end) - covered)
                bytes.withUnsafeBytes {
                    (buffer.baseAddress! + Int(covered - offset)).copyMemory(from: $0.baseAddress! + from, byteCount: n)
                }
                covered += UInt64(n)
                filledTo = covered
                if covered >= end { break }
            }
        }
        return Int(filledTo - offset)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        lock.lock()
        defer { lock.unlock() }
        switch mode {
        case .reading:
            throw LogError.io(operation: "write (a reading handle)", path: location, errno: EBADF)
        case .creating where header == nil:
            guard offset == 0, bytes.count == 64 else {
                throw LogError.io(operation: "write the header (64 bytes at offset 0 first)", path: location, errno: EINVAL)
            }
            header = Array(bytes)
        case .creating, .appending:
            guard offset == sentEnd + UInt64(pending.count) else {
                throw LogError.io(operation: "write at byte \(offset) (the PostgreSQL store only appends, at byte \(sentEnd + UInt64(pending.count)))",
                                  path: location, errno: EINVAL)
            }
            pending.append(contentsOf: bytes)
            if pending.count >= Self.sendBytes { try send(commit: false) }
        }
    }

    func sync() throws {
        lock.lock()
        defer { lock.unlock() }
        guard mode != .reading, headerStored || header != nil else { return }
        try send(commit: true)
    }

    /// Sends the whole batches pending; with `commit`, commits everything sent (a
    /// lone batch goes as one autocommitted INSERT: one round trip).
    private func send(commit: Bool) throws {
        var batches: [(offset: UInt64, first: UInt64, count: UInt32, bytes: ArraySlice<UInt8>)] = []
        var i = 0
        while pending.count - i >= 24 {
            let length = pending.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: i + 4, as: UInt32.self))) }
            guard length >= 72, length <= 1 << 30 else {
                throw LogError.io(operation: "append a batch of \(length) bytes (not a batch)", path: location, errno: EINVAL)
            }
            guard pending.count - i >= length else { break }
            let first = pending.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)) }
            let count = pending.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: i + 16, as: UInt32.self)) }
            batches.append((sentEnd + UInt64(i), first, count, pending[i..<i + length]))
            i += length
        }
        if commit, i != pending.count {
            throw LogError.io(operation: "sync inside a batch (\(pending.count - i) bytes of an unfinished batch)",
                              path: location, errno: EINVAL)
        }
        // A new ledger's header row goes in the same transaction as its first batches.
        let headerRow = headerStored ? nil : header
        guard !batches.isEmpty || (commit && (inTransaction || headerRow != nil)) else { return }
        do {
            let insert = """
                INSERT INTO healthledger_batches (ledger, byte_offset, first_sequence, record_count, bytes)
                VALUES ($1, $2, $3, $4, $5)
                """
            let lone = commit && !inTransaction && batches.count + (headerRow == nil ? 0 : 1) == 1
            if !lone, !inTransaction {
                try connection.execute("BEGIN", operation: "BEGIN")
                inTransaction = true
            }
            if let headerRow {
                do {
                    try connection.execute("INSERT INTO healthledger_ledgers (ledger, header) VALUES ($1, $2)",
                                           [.text(ledger), .bytes(headerRow)], operation: "create the ledger")
                } catch let error as PostgresError where error.isUniqueViolation {
                    if inTransaction { _ = try? connection.execute("ROLLBACK") }
                    inTransaction = false
                    sentEnd = committedEnd
                    pending = []
                    throw LogError.ledgerExists(path: location)
                }
                headerStored = true
                headerUncommitted = inTransaction
            }
            for b in batches {
                try connection.execute(insert, [.text(ledger), .text(String(b.offset)), .text(String(b.first)),
                                                .text(String(b.count)), .bytes(Array(b.bytes))],
                                       operation: "INSERT batch at byte \(b.offset)")
            }
            if commit, inTransaction {
                try connection.execute("COMMIT", operation: "COMMIT")
                inTransaction = false
                headerUncommitted = false
            }
        } catch let error as PostgresError {
            if inTransaction { _ = try? connection.execute("ROLLBACK") }
            inTransaction = false
            sentEnd = committedEnd
            pending = []
            if headerUncommitted { headerStored = false }
            headerUncommitted = false
            throw PostgresLogFileSystem.logError(error, location: location)
        }
        sentEnd += UInt64(i)
        pending.removeFirst(i)
        if !inTransaction { committedEnd = sentEnd }
    }

    func truncate(to length: UInt64) throws {
        lock.lock()
        defer { lock.unlock() }
        guard mode != .reading else { throw LogError.io(operation: "truncate (a reading handle)", path: location, errno: EBADF) }
        let dataEnd = header == nil && !headerStored ? 0 : sentEnd + UInt64(pending.count)
        if length >= dataEnd {
            reservedEnd = length
            return
        }
        guard length >= sentEnd else {
            throw LogError.io(operation: "cut the log to \(length) bytes (the PostgreSQL store never cuts stored batches)",
                              path: location, errno: EPERM)
        }
        pending.removeLast(Int(dataEnd - length))
        reservedEnd = length
    }

    func allocate(upTo length: UInt64) throws {
        lock.lock()
        defer { lock.unlock() }
        reservedEnd = max(reservedEnd, length)
    }

    func beginWriteback(offset: UInt64, length: UInt64) {}

    func lockExclusive() throws {
        guard advisoryLock else { return }
        // Reentrant on the writer's session (it already holds the ledger's lock); on any
        // other session a real attempt.
        let got = try mapped {
            try connection.execute("SELECT pg_try_advisory_lock(\(Self.lockClass), hashtext($1))", [.text(ledger)],
                                   operation: "advisory lock").bool(0, 0)
        }
        guard got == true else { throw LogError.ledgerLocked(path: location) }
    }

    func unlock() {
        guard advisoryLock else { return }
        _ = try? connection.execute("SELECT pg_advisory_unlock(\(Self.lockClass), hashtext($1))", [.text(ledger)])
    }

    func close() {
        lock.lock()
        defer { lock.unlock() }
        if inTransaction {
            // Unsynced writes are lost, as on a disk.
            _ = try? connection.execute("ROLLBACK")
            inTransaction = false
        }
        if owned { connection.close() }
    }
}
