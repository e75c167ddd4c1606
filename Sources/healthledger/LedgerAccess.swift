import Foundation
import HealthLedger
import LedgerCore
import LedgerLog
#if HEALTHLEDGER_POSTGRES
import LedgerPostgres
#endif

/// Opening ledgers from the command line, with progress on stderr when it is a terminal.
enum LedgerAccess {
    static func fileSystem(_ global: GlobalOptions) throws -> any LogFileSystem {
        try store(global.ledgerPath)
    }

    /// A ledger by location: a folder path, or (in a build with PostgreSQL) a
    /// `postgres://host/db?ledger=ID` URL, whose derived files are cached locally.
    static func store(_ location: String) throws -> any LogFileSystem {
        if isPostgresURL(location) {
            #if HEALTHLEDGER_POSTGRES
            return try PostgresLogFileSystem(PostgresLocation(location))
            #else
            throw CLIError.usage("\(location.prefix(while: { $0 != ":" })):// needs a build with PostgreSQL (HEALTHLEDGER_POSTGRES=1 swift build)")
            #endif
        }
        return PosixFileSystem(path: location)
    }

    /// The local folder of a ledger's own files (keys): the ledger folder, or for a
    /// PostgreSQL ledger the worker's cache folder for it.
    static func localFolder(_ global: GlobalOptions) throws -> String {
        #if HEALTHLEDGER_POSTGRES
        if let pg = try fileSystem(global) as? PostgresLogFileSystem {
            try pg.cache.createFolder()
            return pg.cache.path
        }
        #endif
        return global.ledgerPath
    }

    static func isPostgresURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Opens for writing (lock, recovery, projections). Reports a cut tail on stderr.
    static func openForWriting(_ global: GlobalOptions, lockTimeout: Double = 0) throws -> Ledger {
        let fs = try fileSystem(global)
        guard fs.exists(LogWriter.logFileName) else { throw LogError.ledgerNotFound(path: fs.path) }
        let ledger = try Ledger.open(fs, options: LedgerOptions(log: LogWriterOptions(lockTimeout: lockTimeout)),
                                     progress: Progress.replay())
        Progress.finish()
        report(ledger.openReport)
        return ledger
    }

    static func report(_ open: Ledger.OpenReport) {
        if let cut = open.recovery?.cut { Output.error("healthledger: recovered a torn tail: \(cut)") }
        for warning in open.warnings { Output.error("healthledger: warning: \(warning)") }
    }

    /// Opens for reading only (no lock). Every reader is remembered, so that
    /// `warnIfStoppedShort` can tell whether any read stopped before the file's end.
    static func reader(_ global: GlobalOptions) throws -> (any LogFileSystem, LogReader) {
        let fs = try fileSystem(global)
        let reader = try LogReader(fs)
        openedReaders.append(reader)
        openedFileSystem = fs
        return (fs, reader)
    }

    nonisolated(unsafe) private static var openedReaders: [LogReader] = []
    nonisolated(unsafe) static var openedFileSystem: (any LogFileSystem)?

    /// Warns on stderr, once, when a read command stopped short of the log's end (an
    /// incomplete batch: a writer mid-append, or a torn tail a writer's open will cut):
    /// what it printed may miss the bytes after that point. Every read command gets
    /// this from `main`, not each on its own.
    /// The damage records of the snapshots this command mapped (rule S8).
    nonisolated(unsafe) private static var watched: [SnapshotDamage] = []

    /// Remembers a mapped snapshot's damage record, for `checkMappedSnapshots`.
    static func watchForDamage(_ damage: SnapshotDamage?) {
        if let damage { watched.append(damage) }
    }

    /// After a read command: a mapped snapshot whose checks failed while it was read
    /// fails the command (exit 6) — what was printed may rest on it. Every read
    /// command gets this from `main`.
    static func checkMappedSnapshots() throws {
        if let problem = damageFound { throw problem }
    }

    /// The first problem the checks of a mapped snapshot found while this command ran
    /// (rule S8), if any. `main` reports it in place of the error a command failed
    /// with: that error (a UUID "not found", say) may rest on the zeros a damaged
    /// block reads as.
    static var damageFound: SnapshotProblem? { watched.lazy.compactMap(\.problem).first }

    /// Sets aside every mapped snapshot found damaged, so that the next read rebuilds
    /// from the log (`main`, after any command, failed or not).
    static func setAsideDamagedSnapshots() {
        guard let fs = openedFileSystem else { return }
        for damage in watched where damage.problem != nil { SnapshotFile.setAside(fs, damage.file) }
    }

    static func warnIfStoppedShort() {
        guard let tail = openedReaders.lazy.compactMap(\.stoppedShort).first else { return }
        Output.error("healthledger: warning: the log ends with an incomplete batch (\(tail)); this read stopped there, and a writer's next open will cut it")
    }

    /// Parses `--as-of` text: ISO 8601 (date or date-time), into ns since the epoch.
    static func instant(_ text: String) throws -> Int64 {
        let date = try Parse.date(text, "--as-of")
        return try ReplayLimit.nanoseconds(date, field: "--as-of")
    }

    static func sequence(_ text: String, _ option: String) throws -> UInt64 {
        guard let n = UInt64(text), n >= 1 else { throw CLIError.usage("\(option) takes a sequence number ≥ 1") }
        return n
    }
}

/// Progress lines on stderr, only when stderr is a terminal.
enum Progress {
    nonisolated(unsafe) static var shown = false

    static func replay() -> ((ReplayProgress) -> Void)? {
        guard Output.stderrIsTerminal else { return nil }
        let start = Date()
        return { p in
            let seconds = Date().timeIntervalSince(start)
            let rate = seconds > 0 ? Double(p.events) / seconds : 0
            let percent = p.totalBytes > 0 ? Double(p.bytes) * 100 / Double(p.totalBytes) : 100
            line(String(format: "replaying: %.0f%% of %.1f MB, %llu events, %.0f events/s",
                        percent, Double(p.totalBytes) / 1e6, p.events, rate))
        }
    }

    static func line(_ text: String) {
        shown = true
        let bytes = Array(("\r\u{1B}[K" + text).utf8)
        bytes.withUnsafeBytes { _ = write(2, $0.baseAddress!, $0.count) }
    }

    static func finish() {
        if shown {
            let bytes = Array("\r\u{1B}[K".utf8)
            bytes.withUnsafeBytes { _ = write(2, $0.baseAddress!, $0.count) }
            shown = false
        }
    }
}
