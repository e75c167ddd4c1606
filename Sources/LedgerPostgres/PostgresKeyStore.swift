import Foundation
import LedgerKeys

/// An encrypted PostgreSQL ledger's key store (issue 32): one row of
/// `healthledger_keys` per ledger, holding the same sealed bytes a ledger folder keeps
/// as `keys/keys.bin` (sealed under the owner's key-encryption key, which never reaches
/// the database: the server sees ciphertext only). Beside the log, not in a worker's
/// cache: every worker of the ledger finds the same keys, and a backup or replica of
/// the database carries them with the log.
///
/// - `create`: an INSERT that refuses an existing row (`storeExists`);
/// - `replace`: one UPDATE, committed (`synchronous_commit = on`) before it returns;
///   `version` counts the writes (readers read again when it moved);
/// - `purgeEarlierVersions` (after keys were destroyed): `VACUUM FULL
///   healthledger_keys`, which writes the table anew without the dead row versions
///   that still held the destroyed keys (a plain VACUUM only marks their space free).
///   What it cannot reach — the WAL until it is recycled, WAL archives, base backups,
///   replicas' history, the file system's old blocks — DESIGN.md states.
///
/// A connection per call (a key store is read once per reader and written once per
/// new month of keys or erasure).
package final class PostgresKeyStore: KeyStoreMedium, Sendable {
    package let location: PostgresLocation
    private let ledger: String

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
            version bigint NOT NULL CHECK (version >= 1))
        """

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

    private func run<T>(_ operation: String, _ body: (PostgresConnection) throws -> T) throws(KeyStoreError) -> T {
        let connection = try connect()
        defer { connection.close() }
        do { return try body(connection) } catch let error as KeyStoreError { throw error } catch { throw io(operation, error) }
    }

    package func create(_ bytes: [UInt8]) throws(KeyStoreError) {
        try run("create the key store") { c in
            try c.execute("SELECT pg_advisory_lock(\(PostgresSchema.schemaLockKey))", operation: "schema lock")
            defer { _ = try? c.execute("SELECT pg_advisory_unlock(\(PostgresSchema.schemaLockKey))") }
            try c.execute(Self.createTable, operation: "create healthledger_keys")
            let rows = try c.execute("""
                INSERT INTO healthledger_keys (ledger, store, version) VALUES ($1, $2, 1)
                ON CONFLICT (ledger) DO NOTHING RETURNING version
                """, [.text(ledger), .bytes(bytes)], operation: "create the key store")
            guard !rows.rows.isEmpty else { throw KeyStoreError.storeExists(path: name) }
        }
    }

    package func read() throws(KeyStoreError) -> [UInt8] {
        try run("read the key store") { c in
            let rows: PostgresRows
            do {
                rows = try c.execute("SELECT store FROM healthledger_keys WHERE ledger = $1", [.text(ledger)], operation: "read the key store")
            } catch let error as PostgresError where error.isUndefinedTable {
                throw KeyStoreError.storeMissing(path: name)
            }
            guard let row = rows.rows.first, let cell = row[0] else { throw KeyStoreError.storeMissing(path: name) }
            return cell
        }
    }

    package func replace(_ bytes: [UInt8]) throws(KeyStoreError) {
        try run("write the key store") { c in
            let rows = try c.execute("UPDATE healthledger_keys SET store = $2, version = version + 1 WHERE ledger = $1 RETURNING version",
                                     [.text(ledger), .bytes(bytes)], operation: "write the key store")
            guard !rows.rows.isEmpty else { throw KeyStoreError.storeMissing(path: name) }
        }
    }

    package func version() -> [Int]? {
        try? run("read the key store's version") { c -> [Int]? in
            let rows = try c.execute("SELECT version FROM healthledger_keys WHERE ledger = $1", [.text(ledger)], operation: "key store version")
            return rows.rows.isEmpty ? nil : rows.integer(0, 0).map { [Int($0)] }
        }
    }

    package func purgeEarlierVersions() throws(KeyStoreError) {
        try run("VACUUM FULL healthledger_keys: the keys are destroyed, but earlier versions of the row may remain until it is run") { c in
            _ = try c.execute("VACUUM FULL healthledger_keys", operation: "VACUUM FULL healthledger_keys")
        }
    }
}
