import Foundation
import LedgerLog

/// The two tables of the PostgreSQL log store (events/FORMAT.md, "The PostgreSQL store").
///
/// `healthledger_ledgers` holds each ledger's 64-byte file header; `healthledger_batches`
/// holds every batch exactly as the file format defines it (header, records, link), at
/// the byte offset it has in `ledger.log`. The log of a ledger is the header followed by
/// its batches in offset order: byte for byte the file.
public enum PostgresSchema {
    /// The statements that make the schema; idempotent, serialised by an advisory lock so
    /// that workers starting together do not race on the catalog.
    static let statements = [
        "SELECT pg_advisory_xact_lock(\(schemaLockKey))",
        """
        CREATE TABLE IF NOT EXISTS healthledger_ledgers (
            ledger text PRIMARY KEY CHECK (ledger ~ '^[A-Za-z0-9._-]{1,128}$'),
            header bytea NOT NULL CHECK (octet_length(header) = 64),
            created_at timestamptz NOT NULL DEFAULT now())
        """,
        """
        CREATE TABLE IF NOT EXISTS healthledger_batches (
            ledger text NOT NULL REFERENCES healthledger_ledgers (ledger),
            byte_offset bigint NOT NULL CHECK (byte_offset >= 64),
            first_sequence bigint NOT NULL CHECK (first_sequence >= 1),
            record_count integer NOT NULL CHECK (record_count >= 0),
            bytes bytea NOT NULL,
            PRIMARY KEY (ledger, byte_offset))
        """,
        // A batch of records is keyed by its first sequence number: two writers appending
        // after the same position collide here (or on the offset) and one of them fails.
        // A seal holds no records and shares its number with the batch after it.
        """
        CREATE UNIQUE INDEX IF NOT EXISTS healthledger_batches_first_sequence
            ON healthledger_batches (ledger, first_sequence) WHERE record_count > 0
        """,
        // Batches are already checksummed and mostly incompressible: store them as they are.
        "ALTER TABLE healthledger_batches ALTER COLUMN bytes SET STORAGE EXTERNAL",
        // LISTEN/NOTIFY as a wake-up for followers: one notification per committed
        // transaction and ledger (PostgreSQL folds duplicates within a transaction).
        """
        CREATE OR REPLACE FUNCTION healthledger_notify() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_notify('\(notifyChannel)', NEW.ledger); RETURN NULL; END $$
        """,
        "DROP TRIGGER IF EXISTS healthledger_batches_notify ON healthledger_batches",
        """
        CREATE TRIGGER healthledger_batches_notify AFTER INSERT ON healthledger_batches
            FOR EACH ROW EXECUTE FUNCTION healthledger_notify()
        """,
    ]

    /// The channel followers LISTEN on; the payload is the ledger's name.
    public static let notifyChannel = "healthledger_log"
    /// The advisory lock key serialising schema creation.
    static let schemaLockKey: Int64 = 0x484C_4C47_5343_484D

    /// Makes the tables if they are missing (one transaction).
    public static func ensure(_ connection: PostgresConnection) throws {
        let exists = try connection.execute("SELECT to_regclass('healthledger_batches') IS NOT NULL", operation: "schema check")
        if exists.bool(0, 0) == true { return }
        try connection.execute("BEGIN")
        do {
            for statement in statements { try connection.execute(statement, operation: "create schema") }
            try connection.execute("COMMIT", operation: "create schema")
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The names of the ledgers in the store, sorted (empty when the schema is absent).
    public static func ledgers(_ connection: PostgresConnection) throws -> [(name: String, bytes: Int64, batches: Int64)] {
        let exists = try connection.execute("SELECT to_regclass('healthledger_ledgers') IS NOT NULL")
        guard exists.bool(0, 0) == true else { return [] }
        let rows = try connection.execute("""
            SELECT l.ledger, 64 + coalesce(sum(octet_length(b.bytes)), 0)::bigint, count(b.byte_offset)::bigint
            FROM healthledger_ledgers l LEFT JOIN healthledger_batches b USING (ledger)
            GROUP BY l.ledger ORDER BY l.ledger
            """, operation: "list ledgers")
        return rows.rows.indices.map { (rows.text($0, 0) ?? "", rows.integer($0, 1) ?? 0, rows.integer($0, 2) ?? 0) }
    }
}
