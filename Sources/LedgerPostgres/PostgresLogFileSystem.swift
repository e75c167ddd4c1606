import Foundation
import LedgerLog

/// A ledger whose log lives in PostgreSQL and whose derived files live in a local cache.
///
/// `ledger.log` is the ledger's rows (`PostgresLogFile`); every other name — the
/// checkpoint index, snapshots, the Merkle tree, quarantine — is a file in the
/// worker's cache folder (an encrypted ledger's keys are a row beside the log,
/// `PostgresKeyStore`, reached through `recordKeys`) (`PosixFileSystem`), rebuilt from the log when absent or
/// stale exactly as beside a file log (each derived file is checked against the log's
/// links before it is used). The writer lock is a session advisory lock on the ledger's
/// name, held by the connection the writer appends through: another worker on any
/// machine gets `ledgerLocked`; if the session dies, the lock goes with it.
public final class PostgresLogFileSystem: LogFileSystem, CommittedLogStore, @unchecked Sendable {
    /// The store and ledger.
    public let location: PostgresLocation
    /// The cache folder for derived files.
    public let cache: PosixFileSystem
    private let ledger: String
    private let stateLock = NSLock()
    /// The session holding the advisory lock (the writer's), while held.
    private var writerSession: PostgresConnection?
    /// False only in tests that show the keys alone refuse a fork.
    let advisoryLock: Bool
    /// The keys that open an encrypted ledger's sealed records (a `LedgerKeyRing` over
    /// its `PostgresKeyStore`), nil for a plain ledger or without the key file.
    public let recordKeys: (any RecordKeys)?

    /// The default cache root: `$HEALTHLEDGER_CACHE`, else `$XDG_CACHE_HOME/healthledger`,
    /// else `~/.cache/healthledger`.
    public static var defaultCacheRoot: String {
        let env = ProcessInfo.processInfo.environment
        if let dir = env["HEALTHLEDGER_CACHE"], !dir.isEmpty { return dir }
        if let xdg = env["XDG_CACHE_HOME"], !xdg.isEmpty { return xdg + "/healthledger" }
        return NSHomeDirectory() + "/.cache/healthledger"
    }

    /// The ledger at `location` (which must name one), caching derived files under
    /// `cacheRoot/<host-port-db>/<ledger>`. `advisoryLock: false` leaves the writer
    /// lock out (tests use it to show that the keys alone refuse a fork).
    public init(_ location: PostgresLocation, cacheRoot: String = PostgresLogFileSystem.defaultCacheRoot,
                advisoryLock: Bool = true, recordKeys: (any RecordKeys)? = nil) throws {
        self.advisoryLock = advisoryLock
        self.recordKeys = recordKeys
        guard let ledger = location.ledger else {
            throw PostgresLocationError(url: location.description, reason: "no ledger= in the URL")
        }
        self.location = location
        self.ledger = ledger
        cache = PosixFileSystem(path: cacheRoot + "/" + location.cacheKey + "/" + ledger)
    }

    public var path: String { location.description }

    /// A new connection to the store.
    func connect() throws -> PostgresConnection {
        do {
            return try PostgresConnection(conninfo: location.conninfo, serverDescription: location.description)
        } catch let error as PostgresError {
            throw Self.logError(error, location: location.description)
        }
    }

    /// The log layer's error for a database failure: a fork refused by the keys is
    /// `ledgerLocked` (another writer committed at this position); anything else is
    /// `io` naming the statement and the server's message.
    static func logError(_ error: PostgresError, location: String) -> LogError {
        if error.isUniqueViolation {
            return .ledgerLocked(path: location + " (another writer committed a batch at the same position: \(error.message))")
        }
        let operation = "postgres \(error.operation) (\(error.message)\(error.connectionLost ? "; connection lost: the last commit's outcome is known only after reopening" : ""))"
        return .io(operation: operation, path: location, errno: EIO)
    }

    public func folderExists() -> Bool { cache.folderExists() || exists(LogWriter.logFileName) }

    /// Makes the cache folder and, when missing, the schema.
    public func createFolder() throws {
        try cache.createFolder()
        let connection = try connect()
        defer { connection.close() }
        do { try PostgresSchema.ensure(connection) } catch let error as PostgresError {
            throw Self.logError(error, location: path)
        }
    }

    public func exists(_ name: String) -> Bool {
        guard name == LogWriter.logFileName else { return cache.exists(name) }
        guard let connection = try? session() else { return false }
        defer { release(connection) }
        return (try? ledgerExists(connection)) ?? false
    }

    func ledgerExists(_ connection: PostgresConnection) throws -> Bool {
        do {
            let rows = try connection.execute("SELECT 1 FROM healthledger_ledgers WHERE ledger = $1", [.text(ledger)],
                                              operation: "find ledger")
            return !rows.rows.isEmpty
        } catch let error as PostgresError where error.isUndefinedTable {
            return false
        } catch let error as PostgresError {
            throw Self.logError(error, location: path)
        }
    }

    /// The writer's session when one holds the lock, else a new connection.
    private func session() throws -> PostgresConnection {
        if let held = stateLock.withLock({ writerSession }) { return held }
        return try connect()
    }

    private func release(_ connection: PostgresConnection) {
        if stateLock.withLock({ writerSession }) !== connection { connection.close() }
    }

    public func open(_ name: String, _ mode: LogFileOpenMode) throws -> any LogFile {
        guard name == LogWriter.logFileName else { return try cache.open(name, mode) }
        switch mode {
        case .readOnly:
            let connection = try connect()
            guard try ledgerExists(connection) else {
                connection.close()
                throw LogError.ledgerNotFound(path: path)
            }
            return try PostgresLogFile(connection: connection, owned: true, ledger: ledger, location: path, mode: .reading)
        case .readWrite, .createNew:
            let held = stateLock.withLock { writerSession }
            let connection = try held ?? connect()
            do {
                let exists = try ledgerExists(connection)
                if mode == .createNew, exists { throw LogError.ledgerExists(path: path) }
                if mode == .readWrite, !exists { throw LogError.ledgerNotFound(path: path) }
                return try PostgresLogFile(connection: connection, owned: held == nil, ledger: ledger, location: path,
                                           mode: mode == .createNew ? .creating : .appending, advisoryLock: advisoryLock)
            } catch {
                if held == nil { connection.close() }
                throw error
            }
        case .replace:
            throw LogError.io(operation: "replace the log (the PostgreSQL store only appends)", path: path, errno: EPERM)
        }
    }

    public func createSubfolder(_ name: String) throws -> Bool { try cache.createSubfolder(name) }
    public func syncFolder(_ name: String?) throws { try cache.syncFolder(name) }
    public func rename(_ from: String, to: String) throws { try cache.rename(from, to: to) }

    public func remove(_ name: String) throws {
        guard name != LogWriter.logFileName else {
            throw LogError.io(operation: "remove the log (the PostgreSQL store never deletes batches)", path: path, errno: EPERM)
        }
        try cache.remove(name)
    }

    public func list(_ subfolder: String) -> [String] { cache.list(subfolder) }

    /// Takes the session advisory lock on the ledger's name, polling until `timeout`.
    public func lockExclusive(timeout: Double) throws -> any LogLock {
        let connection = try connect()
        let deadline = Date().addingTimeInterval(max(0, timeout))
        do {
            while advisoryLock {
                let rows = try connection.execute("SELECT pg_try_advisory_lock(\(PostgresLogFile.lockClass), hashtext($1))",
                                                  [.text(ledger)], operation: "advisory lock")
                if rows.bool(0, 0) == true { break }
                if Date() >= deadline {
                    connection.close()
                    throw LogError.ledgerLocked(path: path)
                }
                Thread.sleep(forTimeInterval: min(0.02, max(0.001, deadline.timeIntervalSinceNow)))
            }
        } catch let error as PostgresError {
            connection.close()
            throw Self.logError(error, location: path)
        }
        stateLock.withLock { writerSession = connection }
        return PostgresLedgerLock(fs: self, connection: connection)
    }

    func releaseLock(_ connection: PostgresConnection) {
        stateLock.withLock { if writerSession === connection { writerSession = nil } }
        // Closing the session releases its advisory lock (and rolls back anything open).
        connection.close()
    }

    // MARK: CommittedLogStore

    public func changeSignal() throws -> any LogChangeSignal {
        try PostgresChangeSignal(connection: connect(), ledger: ledger, location: path)
    }
}

/// The writer's lock: a session advisory lock, released with the session.
final class PostgresLedgerLock: LogLock, @unchecked Sendable {
    private let fs: PostgresLogFileSystem
    private let connection: PostgresConnection
    private let released = NSLock()
    private var done = false

    init(fs: PostgresLogFileSystem, connection: PostgresConnection) {
        self.fs = fs
        self.connection = connection
    }

    func release() {
        let first = released.withLock { () -> Bool in
            defer { done = true }
            return !done
        }
        if first { fs.releaseLock(connection) }
    }

    deinit { release() }
}
