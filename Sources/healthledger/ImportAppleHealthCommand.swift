import AppleHealthImport
import Foundation
import LedgerCore
import LedgerLog

/// `healthledger import-apple-health PATH`: an Apple Health export into the ledger.
enum ImportAppleHealthCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] import-apple-health EXPORT [--again] [--json]

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
        Exact repeats in the export are imported as they are and counted. The same
        export (same XML content) is refused the second time unless --again.

        Prints a summary (--json: one JSON object). Progress on stderr at a terminal.

        \(ExitStatus.table)
        """

    static let command = Command(name: "import-apple-health", abstract: "Import an Apple Health export (zip, folder or XML)",
                                 help: help) { args, global in
        if handledHelp(&args, help) { return }
        let again = args.flag("--again")
        guard let path = args.positional() else { throw CLIError.usage("import-apple-health needs the export's path") }
        try args.finish()
        let source = try ExportSource(path: path)
        var options = ImportOptions(again: again)
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
}
