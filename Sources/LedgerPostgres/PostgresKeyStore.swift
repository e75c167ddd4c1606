import Foundation
import LedgerKeys
import Synchronization

/// An encrypted PostgreSQL ledger's key store (issue 32, rule P6): one row of
/// `healthledger_keys` per ledger, holding the same sealed bytes a ledger folder keeps
/// as `keys/keys.bin` (sealed under the owner's key-encryption key, which never reaches
/// the database: the server sees ciphertext only). Beside the log, not in a worker's
/// cache: every worker of the ledger finds the same keys, and a backup or replica of
/// the database carries them with the log.
///
/// - `create`: an INSERT that refuses an existing row (`storeExists`);
/// - `replace`: one UPDATE, committed (`synchronous_commit = on`) before it returns,
///   and only of the version this handle last read or wrote (a writer whose session
///   and advisory lock were lost meanwhile never writes an older store back over the
///   next writer's); `version` counts the writes (readers read again when it moved);
/// - `purgeEarlierVersions` (after keys were destroyed): `VACUUM (FULL, VERBOSE)
///   healthledger_keys`, which writes the table anew without the dead row versions
///   that still held the destroyed keys (a plain VACUUM only marks their space free).
///   It is checked, not trusted: a role that does not own the table is refused before
///   (VACUUM would only warn and skip it), and while an older transaction can still
///   see a dead version VACUUM keeps it ("N dead row versions cannot be removed yet"):
///   tried again for about ten seconds, then the erasure fails saying so, and the
///   purge stays due (`purge_pending`) until a writer's `purgeIfPending` succeeds.
///   What it cannot reach — the WAL until it is recycled, WAL archives, base backups,
///   replicas' history, the file system's old blocks — DESIGN.md states.
///
/// Reads and writes use a connection each; `version`, which a reader asks before every
/// replay and a follower at every commit, keeps one open (opened again after a failure).
package final class PostgresKeyStore: KeyStoreMedium, Sendable {
    package let location: PostgresLocation
    private let ledger: String
    /// The row's version this handle last read or wrote (what `replace` expects).
    private let known = Mutex<Int64?>(nil)
    /// The connection `version` asks on.
    private let versionConnection = Mutex<PostgresConnection?>(nil)

    /// The key store of the ledger `location` names.
    package init(_ location: PostgresLocation) throws {
        guard let ledger = location.ledger else {
            throw PostgresLocationError(url: location.description, reason: "no ledger= in the URL")
        }
        self.location = location
        self.ledger = ledger
    }

    package var name: String { location.description + " (healthledger_keys)" }

    static let createTable = """
        CREATE TABLE IF NOT EXISTS healthledger_keys (
            ledger text PRIMARY KEY CHECK (ledger ~ '^[A-Za-z0-9._-]{1,128}$'),
            store bytea NOT NULL,
            version bigint NOT NULL CHECK (version >= 1),
            purge_pending boolean NOT NULL DEFAULT false)
        """

    /// How many times a purge VACUUMs before it gives up, waiting longer each time.
    static let purgeAttempts = 8

    private func connect() throws(KeyStoreError) -> PostgresConnection {
        do {
            return try PostgresConnection(conninfo: location.conninfo, serverDescription: location.description)
        } catch {
            throw io("connect", error)
        }
    }

    private func io(_ operation: String, _ error: any Error) -> KeyStoreError {
        let message = (error as? PostgresError).map { "\($0.message)\($0.connectionLost ? "; connection lost" : "")" } ?? "\(error)"
        return .io(operation: "postgres \(operation) (\(message))", path: name, errno: EIO)
    }

    @discardableResult
    private func run<T>(_ operation: String, _ body: (PostgresConnection) throws -> T) throws(KeyStoreError) -> T {
        let connection = try connect()
        defer { connection.close() }
        do { return try body(connection) } catch let error as KeyStoreError { throw error } catch { throw io(operation, error) }
    }

    package func create(_ bytes: [UInt8]) throws(KeyStoreError) {
        try run("create the key store") { c in
            // Made once, by a role allowed to (one that may only read and write rows
            // finds it made: CREATE … IF NOT EXISTS would still need the schema's CREATE).
            if try c.execute("SELECT to_regclass('healthledger_keys') IS NOT NULL").bool(0, 0) != true {
                try c.execute("SELECT pg_advisory_lock(\(PostgresSchema.schemaLockKey))", operation: "schema lock")
                defer { _ = try? c.execute("SELECT pg_advisory_unlock(\(PostgresSchema.schemaLockKey))") }
                try c.execute(Self.createTable, operation: "create healthledger_keys")
            }
            let rows = try c.execute("""
                INSERT INTO healthledger_keys (ledger, store, version) VALUES ($1, $2, 1)
                ON CONFLICT (ledger) DO NOTHING RETURNING version
                """, [.text(ledger), .bytes(bytes)], operation: "create the key store")
            guard !rows.rows.isEmpty else { throw KeyStoreError.storeExists(path: name) }
            known.withLock { $0 = 1 }
        }
    }

    package func read() throws(KeyStoreError) -> [UInt8] {
        try run("read the key store") { c in
            let rows: PostgresRows
            do {
                rows = try c.execute("SELECT store, version FROM healthledger_keys WHERE ledger = $1", [.text(ledger)],
                                     operation: "read the key store")
            } catch let error as PostgresError where error.isUndefinedTable {
                throw KeyStoreError.storeMissing(path: name)
            }
            guard let row = rows.rows.first, let cell = row[0], let version = rows.integer(0, 1) else {
                throw KeyStoreError.storeMissing(path: name)
            }
            known.withLock { $0 = version }
            return cell
        }
    }

    package func replace(_ bytes: [UInt8], destroying: Bool) throws(KeyStoreError) {
        guard let expected = known.withLock({ $0 }) else {
            throw .io(operation: "write the key store (never read by this handle)", path: name, errno: EIO)
        }
        try run("write the key store") { c in
            let rows = try c.execute("""
                UPDATE healthledger_keys SET store = $2, version = version + 1, purge_pending = purge_pending OR $3::boolean
                WHERE ledger = $1 AND version = $4::bigint RETURNING version
                """, [.text(ledger), .bytes(bytes), .text(destroying ? "true" : "false"), .text(String(expected))],
                operation: "write the key store")
            guard let version = rows.rows.isEmpty ? nil : rows.integer(0, 0) else {
                let exists = try c.execute("SELECT version FROM healthledger_keys WHERE ledger = $1", [.text(ledger)])
                if exists.rows.isEmpty { throw KeyStoreError.storeMissing(path: name) }
                throw KeyStoreError.io(operation: "write the key store: it changed since this writer read it (version \(expected), now \(exists.integer(0, 0) ?? -1)): another writer has the ledger", path: name, errno: EIO)
            }
            known.withLock { $0 = version }
        }
    }

    package func version() -> [Int]? {
        versionConnection.withLock { held -> [Int]? in
            for _ in 0..<2 {  // a connection kept since may have been cut: one new one
                guard let c = held ?? (try? connect()) else { return nil }
                held = c
                do {
                    let rows = try c.execute("SELECT version FROM healthledger_keys WHERE ledger = $1", [.text(ledger)],
                                             operation: "key store version")
                    return rows.rows.isEmpty ? nil : rows.integer(0, 0).map { [Int($0)] }
                } catch {
                    c.close()
                    held = nil
                }
            }
            return nil
        }
    }

    package func purgeEarlierVersions() throws(KeyStoreError) {
        let what = "VACUUM FULL healthledger_keys: the keys are destroyed in the store, but"
        try run("VACUUM FULL healthledger_keys") { c in
            let owner = try c.execute("""
                SELECT pg_has_role(current_user, relowner, 'USAGE') FROM pg_class WHERE oid = 'healthledger_keys'::regclass
                """, operation: "owner of healthledger_keys")
            guard owner.bool(0, 0) == true else {
                throw KeyStoreError.io(operation: "\(what) this role does not own the table, and VACUUM would skip it: its owner must run VACUUM FULL healthledger_keys", path: name, errno: EPERM)
            }
            // Waits at most this long for the table's lock each time (readers of every
            // ledger's keys queue behind a VACUUM FULL waiting for it).
            try c.execute("SET lock_timeout TO '2s'", operation: "lock timeout")
            var kept = 0
            for attempt in 0..<Self.purgeAttempts {
                if attempt > 0 { Thread.sleep(forTimeInterval: min(0.25 * Double(1 << (attempt - 1)), 2)) }
                let notices: [String]
                do {
                    notices = try c.collectingNotices {
                        try c.execute("VACUUM (FULL, VERBOSE) healthledger_keys", operation: "VACUUM FULL healthledger_keys")
                    }
                } catch let error as PostgresError where error.sqlState == "55P03" {
                    continue  // lock_not_available: a reader held the table
                }
                if notices.contains(where: { $0.contains("skipping") }) {
                    throw KeyStoreError.io(operation: "\(what) VACUUM skipped the table: \(notices.joined(separator: " "))", path: name, errno: EPERM)
                }
                kept = Self.deadVersionsKept(notices)
                if kept == 0 {
                    try c.execute("UPDATE healthledger_keys SET purge_pending = false WHERE ledger = $1", [.text(ledger)],
                                  operation: "purge done")
                    return
                }
            }
            throw KeyStoreError.io(operation: "\(what) \(kept) dead row versions are still seen by older transactions (or its lock was not had): the next writer to open the ledger runs it again", path: name, errno: EBUSY)
        }
    }

    package func purgeIfPending() throws(KeyStoreError) {
        let pending = try run("read the key store's purge") { c in
            try c.execute("SELECT purge_pending FROM healthledger_keys WHERE ledger = $1", [.text(ledger)]).bool(0, 0) ?? false
        }
        if pending { try purgeEarlierVersions() }
    }

    /// The dead row versions VACUUM VERBOSE said it could not remove yet.
    static func deadVersionsKept(_ notices: [String]) -> Int {
        notices.reduce(0) { sum, notice in
            guard let range = notice.range(of: " dead row versions cannot be removed yet") else { return sum }
            let digits = notice[..<range.lowerBound].reversed().prefix { $0.isNumber }
            return sum + (Int(String(digits.reversed())) ?? 1)
        }
    }
}
