import Foundation
import LedgerLog
#if HEALTHLEDGER_POSTGRES
import LedgerPostgres
#endif

/// Where a ledger lives: a folder, or (in a build with PostgreSQL) a
/// `postgres://host/db?ledger=ID` URL whose derived files are cached in a local folder.
/// The one place a location's text becomes a file system, for every front end.
package struct LedgerLocation: Sendable, CustomStringConvertible {
    /// The text it was given (a path or a URL).
    package let text: String

    package init(_ text: String) { self.text = text }

    package var description: String { text }

    /// Whether the text names a PostgreSQL ledger (whatever this build can open).
    package var isDatabase: Bool { Self.isDatabaseURL(text) }

    package static func isDatabaseURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// The ledger's files: a folder, or the PostgreSQL store. A `postgres://` location in
    /// a build without PostgreSQL is `LedgerLocationError.needsPostgres`.
    package func fileSystem() throws -> any LogFileSystem {
        if isDatabase {
            #if HEALTHLEDGER_POSTGRES
            let location = try Self.postgresLocation(text)
            do { return try PostgresLogFileSystem(location) } catch let e as PostgresLocationError {
                throw LedgerLocationError.malformedURL(e.description)  // e.g. no ledger= in it
            }
            #else
            throw LedgerLocationError.needsPostgres(scheme: String(text.prefix(while: { $0 != ":" })))
            #endif
        }
        return PosixFileSystem(path: text)
    }

    #if HEALTHLEDGER_POSTGRES
    /// The URL parsed; a malformed one is `LedgerLocationError.malformedURL` (usage).
    static func postgresLocation(_ text: String) throws(LedgerLocationError) -> PostgresLocation {
        do { return try PostgresLocation(text) } catch { throw .malformedURL("\(error)") }
    }
    #endif

    /// Whether a ledger's log is there.
    package func holdsLedger() throws -> Bool { try fileSystem().exists(LogWriter.logFileName) }

    /// The local folder of the ledger's own files (keys, the access log): the ledger
    /// folder, or for a PostgreSQL ledger the worker's cache folder for it (created).
    package func localFolder() throws -> String {
        #if HEALTHLEDGER_POSTGRES
        if let pg = try fileSystem() as? PostgresLogFileSystem {
            try pg.cache.createFolder()
            return pg.cache.path
        }
        #endif
        return text
    }
}

/// A location this build cannot open.
package enum LedgerLocationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `postgres://` in a build without PostgreSQL.
    case needsPostgres(scheme: String)
    /// A `postgres://` URL that does not parse (the parser's message).
    case malformedURL(String)

    package var description: String {
        switch self {
        case .needsPostgres(let scheme):
            "usage: \(scheme):// needs a build with PostgreSQL (HEALTHLEDGER_POSTGRES=1 swift build)"
        case .malformedURL(let message): message
        }
    }
}
