import Foundation
import LedgerCore
import LedgerKeys
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
    /// The owner's key-encryption-key file (`--key-file`, else `HEALTHLEDGER_KEY_FILE`),
    /// nil when neither names one: an encrypted ledger's sealed records then stay shut.
    package let keyFile: String?

    package init(_ text: String, keyFile: String? = nil) {
        self.text = text
        self.keyFile = keyFile
    }

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
            do {
                // An encrypted ledger's keys are a row beside its log (`PostgresKeyStore`).
                let keys = try kek().map { LedgerKeyRing(medium: try postgresKeyStore(), kek: $0) }
                return try PostgresLogFileSystem(location, recordKeys: keys)
            } catch let e as PostgresLocationError {
                throw LedgerLocationError.malformedURL(e.description)  // e.g. no ledger= in it
            }
            #else
            throw LedgerLocationError.needsPostgres(scheme: String(text.prefix(while: { $0 != ":" })))
            #endif
        }
        return PosixFileSystem(path: text, recordKeys: try keyRing())
    }

    /// The ledger's keys under the key file, when one was given (read lazily: a
    /// plain ledger never opens a store).
    /// - Throws: `LedgerLocationError.keyFile` when the file is missing or malformed.
    package func keyRing() throws(LedgerLocationError) -> LedgerKeyRing? {
        try kek().map { LedgerKeyRing(folder: LedgerKeyRing.folder(ofLedger: text), kek: $0) }
    }

    /// The key-encryption key of the key file, when one was given.
    /// - Throws: `LedgerLocationError.keyFile` when the file is missing or malformed.
    func kek() throws(LedgerLocationError) -> KeyEncryptionKey? {
        guard let keyFile else { return nil }
        do { return try KeyEncryptionKey.load(from: keyFile) } catch { throw .keyFile(error.description) }
    }

    #if HEALTHLEDGER_POSTGRES
    /// The key store of this PostgreSQL ledger (its row of `healthledger_keys`); a URL
    /// without a ledger is `LedgerLocationError.malformedURL`.
    func postgresKeyStore() throws(LedgerLocationError) -> PostgresKeyStore {
        let location = try Self.postgresLocation(text)
        do { return try PostgresKeyStore(location) } catch { throw .malformedURL("\(error)") }  // no ledger= in it
    }

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
    /// The key-encryption-key file could not be used (the key store's message:
    /// missing, malformed, unprotected, or already there for `init --encrypt`).
    case keyFile(String)
    /// An encrypted ledger asked of a location that cannot hold one yet.
    case encryptionUnsupported(String)

    package var description: String {
        switch self {
        case .needsPostgres(let scheme):
            "usage: \(scheme):// needs a build with PostgreSQL (HEALTHLEDGER_POSTGRES=1 swift build)"
        case .malformedURL(let message): message
        case .keyFile(let message): message
        case .encryptionUnsupported(let message): message
        }
    }
}
