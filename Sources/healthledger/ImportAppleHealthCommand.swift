import AppleHealthImport
import Foundation
import HealthLedger
import LedgerTools

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
        appends importAborted instead, so none of it applies (into a new ledger folder,
        no ledger is left: the folder is removed, or in a folder that was there, what
        the import added; a new PostgreSQL ledger keeps the aborted import). A killed import is aborted by the next writer. It appends:
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
        let summary: ImportSummary
        do {
            let done = try await ledgerImport(source, options: options, dryRun: dryRun, global: global)
            Progress.finish()
            summary = done.summary
            if done.created { Output.error("healthledger: created a new ledger at \(global.ledgerPath)") }
        } catch {
            Progress.finish()
            throw error
        }
        if global.json {
            Output.line(summary.json)
        } else {
            for line in summary.lines { Output.line(line) }
        }
    }

    /// The import into the ledger at `--ledger`: a dry run (no lock, no write), into the
    /// ledger there, or into one it creates (`AppleHealthLedgerImport`).
    static func ledgerImport(_ source: ExportSource, options: ImportOptions, dryRun: Bool,
                             global: GlobalOptions) async throws -> (summary: ImportSummary, created: Bool) {
        let location = global.reads.location
        if dryRun {
            let ledger = try location.holdsLedger() ? try LedgerView.open(global) : nil
            return (try await AppleHealthImporter.dryRun(source, over: ledger, options: options), false)
        }
        if try location.holdsLedger() {
            return (try await AppleHealthLedgerImport.intoExisting(source, options: options, location: location,
                                                                   open: { try LedgerAccess.openForWriting(global) }), false)
        }
        return (try await AppleHealthLedgerImport.intoNew(source, options: options, location: location), true)
    }
}
