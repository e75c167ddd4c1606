import Foundation
import LedgerLog

/// A PostgreSQL store as a whole: the ledgers it holds.
public enum PostgresStore {
    /// Every ledger of the store (sorted by name) with its log's length in bytes.
    public static func ledgers(_ location: PostgresLocation) throws -> [(name: String, bytes: Int64)] {
        do {
            let connection = try PostgresConnection(conninfo: location.conninfo, serverDescription: location.description)
            defer { connection.close() }
            return try PostgresSchema.ledgers(connection).map { ($0.name, $0.bytes) }
        } catch let error as PostgresError {
            throw PostgresLogFileSystem.logError(error, location: location.description)
        }
    }
}
