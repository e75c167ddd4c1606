import Foundation
import HealthLedger
import LedgerTools

/// Opening ledgers from the command line (the library's `LedgerLocation` and
/// `ReadSession`), with progress on stderr when it is a terminal.
enum LedgerAccess {
    /// The local folder of a ledger's own files (keys, the access log).
    static func localFolder(_ global: GlobalOptions) throws -> String {
        try global.reads.location.localFolder()
    }

    static func isPostgresURL(_ text: String) -> Bool { LedgerLocation.isDatabaseURL(text) }

    /// Opens for writing (lock, recovery, projections). Reports a cut tail on stderr.
    static func openForWriting(_ global: GlobalOptions, lockTimeout: Double = 0) throws -> Ledger {
        defer { Progress.finish() }
        let ledger = try global.reads.location.openForWriting(lockTimeout: lockTimeout, progress: Progress.replay())
        Progress.finish()
        report(ledger.openReport)
        return ledger
    }

    static func report(_ open: Ledger.OpenReport) {
        if let cut = open.recovery?.cut { Output.error("healthledger: recovered a torn tail: \(cut)") }
        for warning in open.warnings { Output.error("healthledger: warning: \(warning)") }
    }

    /// Warns on stderr, once, when a read of this command stopped short of the log's
    /// end (an incomplete batch: a writer mid-append, or a torn tail a writer's open
    /// will cut): what it printed may miss the bytes after that point. Every read
    /// command gets this from `main`, not each on its own.
    static func warnIfStoppedShort(_ reads: ReadSession?) {
        guard let tail = reads?.stoppedShort else { return }
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
