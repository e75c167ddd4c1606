import AppleHealthImport
import Foundation
import HealthLedger
import LedgerCore
import LedgerLog

/// `healthledger import-apple-health PATH`: an Apple Health export into the ledger.
enum ImportAppleHealthCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] import-apple-health EXPORT [--dry-run] [--force] [--json]

        Import an Apple Health export ("Export All Health Data" on the iPhone): the
        export.zip, its unzipped folder, or the export XML itself. The XML is found by
        its content, whatever its (localized) name. A new ledger is created when PATH
        holds none.

        One pass over the XML, as a transaction in the log: nothing of the import is
        seen by any query, replay or change feed until its last event, and a malformed
        export (a bad date or number, broken XML: the error names its line and column)
        appends importAborted instead, so none of it applies (into a new ledger, no
        ledger is left). A killed import is aborted by the next writer. It appends:
          - importStarted (ExportDate, locale, <Me> verbatim);
          - each sourceName as an imported app ("export:NAME") with an imported share
            grant for the types it wrote;
          - <Me> characteristics that are set;
          - Records as quantity/category samples (unit, value, dates with their UTC
            offsets, device, metadata verbatim, HRV beats); unknown types and records
            without value or unit kept raw, never dropped;
          - Correlations with their member Records (the top-level copies of members
            are stored once, as the members); Workouts with events, statistics,
            metadata and routes (GPX read from the export);
          - ActivitySummaries;
          - elements with no model of their own (ClinicalRecord, Audiogram,
            VisionPrescription, ...) kept as written, attributes and children;
          - importFinished with the counts and the export's SHA-256 — durable: the
            import is acknowledged here.
        Exact repeats in the export are imported as they are and counted.

        Every import merges: a sample's UUID comes from its content (events/FORMAT.md,
        "Record identity"), so a newer export of the same person appends only what
        is new, skips (and counts) what the ledger holds, and removes what earlier
        imports brought and this export no longer has, in one absentFromExport event
        ("absent from the export dated D"; `audit UUID` names it). The same export
        twice appends only the import's start and finish; an interrupted import is
        aborted, and importing the same export again brings it all. Refused (exit 5),
        before anything is written, unless --force:
        an export older than one already imported (it would remove newer data),
        one whose <Me> has another date of birth or biological sex, or one that
        shares no record with what earlier imports brought (another person's: it
        would remove all of that).

        Route files (FileReference) are read only from inside the export: a path
        leading out (.., a symlink) is counted as a missing route file, like one
        that is not there; a FIFO, device or file over 64 MiB is refused (exit 3).

          --dry-run   print new / unchanged / removed per type; write nothing (no
                      lock is taken; a killed import stays for a writer to abort)
          --force     merge an older export, or another person's, anyway

        Prints a summary (--json: one JSON object). Progress on stderr at a terminal.

        \(ExitStatus.table)
        """

    static let command = Command(name: "import-apple-health", abstract: "Import an Apple Health export (zip, folder or XML)",
                                 help: help) { args, global in
        if handledHelp(&args, help) { return }
        let force = args.flag("--force")
        let dryRun = args.flag("--dry-run")
        guard let path = args.positional() else { throw CLIError.usage("import-apple-health needs the export's path") }
        try args.finish()
        let source = try ExportSource(path: path)
        var options = ImportOptions(force: force, dryRun: dryRun)
        // The kill -9 test's fixed point (ImportKillTests); a whole number ≥ 1 or nothing.
        if let text = ProcessInfo.processInfo.environment["HEALTHLEDGER_TEST_IMPORT_PAUSE_AFTER_BATCHES"],
           let n = Int(text), n >= 1 {
            options.pauseAfterBatches = n
            options.paused = { FileHandle.standardError.write(Data("healthledger: test pause: paused after \(n) batches\n".utf8)) }
        }
        if Output.stderrIsTerminal {
            let start = Date()
            options.progress = { p in
                let seconds = Date().timeIntervalSince(start)
                let rate = seconds > 0 ? Double(p.bytesRead) / seconds / 1e6 : 0
                let fraction = p.bytesTotal > 0 ? Double(p.bytesRead) / Double(p.bytesTotal) : 0
                let eta = rate > 0 ? (Double(p.bytesTotal) - Double(p.bytesRead)) / 1e6 / rate : 0
                Progress.line(String(format: "importing: %.0f%% of %.1f MB, %d records, %.0f MB/s, %.0f s left",
                                     fraction * 100, Double(p.bytesTotal) / 1e6, p.records, rate, eta))
            }
        }
        let fs = try LedgerAccess.fileSystem(global)
        let summary: ImportSummary
        if dryRun {
            summary = try await dryRunImport(source, options: options, fs: fs, global: global)
        } else if fs.exists(LogWriter.logFileName) {
            summary = try await importIntoExisting(source, options: options, fs: fs, global: global)
        } else {
            summary = try await importIntoNew(source, options: options, fs: fs)
            Output.error("healthledger: created a new ledger at \(global.ledgerPath)")
        }
        if global.json {
            Output.line(summary.json)
        } else {
            for line in summary.lines { Output.line(line) }
        }
    }

    /// Into an existing ledger. What the import refuses (an older export, another
    /// person's) is refused before the ledger is opened for writing — over
    /// projections loaded without a writer —, since opening for writing writes (it
    /// aborts a killed import, rule E11): a refused import leaves every byte as it
    /// was. The importer checks again once it holds the lock. A failure before the
    /// import appended anything gives the ledger up without a seal (`abandon`); one
    /// after (its `importAborted` durable) closes it. An existing ledger keeps an
    /// aborted import (append-only), and every projection as it was.
    static func importIntoExisting(_ source: ExportSource, options: ImportOptions, fs: any LogFileSystem,
                                   global: GlobalOptions) async throws -> ImportSummary {
        try await checkRefusal(source, options: options, fs: fs)
        let ledger = try LedgerAccess.openForWriting(global)
        let opened = await ledger.lastSequence
        do {
            let summary = try await AppleHealthImporter.run(source, into: ledger, options: options)
            Progress.finish()
            try await ledger.close()
            return summary
        } catch {
            Progress.finish()
            if await ledger.lastSequence == opened {
                // Nothing of this import was written: no seal either. What opening wrote
                // (a killed import's abort) is made durable; it would be written again anyway.
                try? await ledger.sync()
                ledger.abandon()
            } else {
                try? await ledger.close()
            }
            throw error
        }
    }

    /// Throws the import's refusal, judged over the ledger's projections loaded
    /// without a writer (mapped: no more read than a query reads). A refusal over a
    /// mapped snapshot found damaged is not trusted: the writer's own check decides.
    static func checkRefusal(_ source: ExportSource, options: ImportOptions, fs: any LogFileSystem) async throws {
        guard !options.force else { return }
        try await AppleHealthImporter.refusal(source, over: try ReadOnlyLedger(fs, reader: try LogReader(fs)), options: options)
    }

    /// Into a new ledger, created here. If the import fails, the ledger is removed —
    /// the folder, if this command made it, else every entry the folder did not hold
    /// before (an empty folder is left empty) — **while this command still holds its
    /// lock**: a writer waiting for the lock then finds no ledger, rather than one it
    /// writes into (acknowledged) just before it is removed.
    static func importIntoNew(_ source: ExportSource, options: ImportOptions, fs: any LogFileSystem) async throws -> ImportSummary {
        var createdIn: (folder: String, entriesBefore: Set<String>?)?
        if fs is PosixFileSystem {
            createdIn = (fs.path, fs.folderExists() ? Set(try FileManager.default.contentsOfDirectory(atPath: fs.path)) : nil)
        }
        let ledger = try Ledger.create(fs)
        do {
            let summary = try await AppleHealthImporter.run(source, into: ledger, options: options)
            Progress.finish()
            try await ledger.close()
            return summary
        } catch {
            Progress.finish()
            if let createdIn {
                testPauseBeforeRemovingCreatedLedger()
                Self.removeCreatedLedger(createdIn.folder, entriesBefore: createdIn.entriesBefore)
                ledger.abandon()  // the lock released only now, with nothing left to lock
            } else {
                try? await ledger.close()
            }
            throw error
        }
    }

    /// Tests: with `HEALTHLEDGER_TEST_PAUSE_BEFORE_REMOVING_CREATED_LEDGER` set, says so
    /// on stderr and waits until standard input ends.
    static func testPauseBeforeRemovingCreatedLedger() {
        guard ProcessInfo.processInfo.environment["HEALTHLEDGER_TEST_PAUSE_BEFORE_REMOVING_CREATED_LEDGER"] != nil else { return }
        FileHandle.standardError.write(Data("healthledger: test pause: removing the ledger this import created\n".utf8))
        _ = FileHandle.standardInput.readDataToEndOfFile()
    }

    /// Removes the ledger a failed import created in `folder`: the folder itself when
    /// it did not exist before (`entriesBefore` nil), else the entries it did not hold.
    static func removeCreatedLedger(_ folder: String, entriesBefore: Set<String>?) {
        guard let before = entriesBefore else {
            try? FileManager.default.removeItem(atPath: folder)
            return
        }
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where !before.contains(entry) {
            try? FileManager.default.removeItem(atPath: folder + "/" + entry)
        }
    }

    /// `--dry-run`: the merge counted against the ledger's projections loaded as a
    /// query loads them — no lock, no write (not even the abort of a killed import
    /// that a writer's open appends) — or against none when there is no ledger.
    static func dryRunImport(_ source: ExportSource, options: ImportOptions, fs: any LogFileSystem,
                             global: GlobalOptions) async throws -> ImportSummary {
        do {
            let ledger = fs.exists(LogWriter.logFileName) ? try LedgerView.open(global) : nil
            let summary = try await AppleHealthImporter.dryRun(source, over: ledger, options: options)
            Progress.finish()
            return summary
        } catch {
            Progress.finish()
            throw error
        }
    }
}
