import AppleHealthImport
import Foundation
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

        Two passes over the XML: the first checks everything (malformed XML or a bad
        date or number stops the import with its line and column, and nothing is
        written); the second appends it, durably:
          - importStarted (the export's SHA-256, ExportDate, locale, <Me> verbatim);
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
          - importFinished with the counts.
        Exact repeats in the export are imported as they are and counted.

        Every import merges: a sample's UUID comes from its content (events/FORMAT.md,
        "Record identity"), so a newer export of the same person appends only what
        is new, skips (and counts) what the ledger holds, and removes what earlier
        imports brought and this export no longer has, in one absentFromExport event
        ("absent from the export dated D"; `audit UUID` names it). The same export
        twice appends only the import's start and finish; an interrupted import is
        finished by importing the same export again. Refused (exit 5) unless --force:
        an export older than one already imported (it would remove newer data), or
        one whose <Me> has another date of birth or biological sex.

          --dry-run   print new / unchanged / removed per type; write nothing
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
                Progress.line(String(format: "%@: %.0f%% of %.1f MB, %d records, %.0f MB/s, %.0f s left",
                                     p.pass == 1 ? "checking" : "importing", fraction * 100, Double(p.bytesTotal) / 1e6,
                                     p.records, rate, eta))
            }
        }
        // Pass 1 before the ledger is touched: a malformed export creates nothing.
        let checked: AppleHealthImporter.CheckedExport
        do {
            checked = try AppleHealthImporter.check(source, options: options)
        } catch {
            Progress.finish()
            throw error
        }
        let fs = try LedgerAccess.fileSystem(global)
        if dryRun {
            try await dryRunImport(checked, fs: fs, global: global)
            return
        }
        if !fs.exists(LogWriter.logFileName) {
            try await Ledger.create(fs).close()
            Output.error("healthledger: created a new ledger at \(global.ledgerPath)")
        }
        let ledger = try LedgerAccess.openForWriting(global)
        let startSequence = await ledger.state.lastSequence
        let summary: ImportSummary
        do {
            summary = try await AppleHealthImporter.run(checked, into: ledger)
            Progress.finish()
            try await ledger.close()
        } catch {
            Progress.finish()
            if await ledger.state.lastSequence > startSequence { try? await ledger.close() } else { ledger.abandon() }
            throw error
        }
        if global.json {
            Output.line(summary.json)
        } else {
            for line in summary.lines { Output.line(line) }
        }
    }

    /// `--dry-run`: the merge counted against the ledger (an empty one when there is
    /// none, made in a temporary folder and removed), nothing written to it.
    static func dryRunImport(_ checked: AppleHealthImporter.CheckedExport, fs: any LogFileSystem, global: GlobalOptions) async throws {
        let summary: ImportSummary
        if fs.exists(LogWriter.logFileName) {
            let ledger = try LedgerAccess.openForWriting(global)
            defer { ledger.abandon() }
            summary = try await AppleHealthImporter.run(checked, into: ledger)
        } else {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("healthledger-dry-run-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let ledger = try Ledger.create(PosixFileSystem(path: folder.path))
            defer { ledger.abandon() }
            summary = try await AppleHealthImporter.run(checked, into: ledger)
        }
        Progress.finish()
        if global.json {
            Output.line(summary.json)
        } else {
            for line in summary.lines { Output.line(line) }
        }
    }
}
