import Foundation
import HealthLedger
import LedgerTools
import LedgerReporting

/// `healthledger copy SRC DST`: a ledger's log from one store to another, byte for byte.
enum CopyCommand {
    static let help = """
        USAGE: healthledger copy SRC DST [--json]

        Copy a ledger's log, byte for byte, from SRC to DST. Each is a ledger folder
        or, in a build with PostgreSQL (HEALTHLEDGER_POSTGRES=1), a URL
        postgres://[user@]host[:port]/db?ledger=ID. SRC is verified first (every
        checksum and the whole hash chain) and only then copied; DST must hold no
        ledger, is written under its writer lock and synced once at the end (in
        PostgreSQL: one transaction, so the copy is all there or absent), then
        verified: same bytes, same chain head. Derived files (snapshots, indexes)
        are not copied; they are rebuilt beside the copy when needed. A ledger
        copied to PostgreSQL and back is identical to the original.
        Exit 6 when SRC is damaged (nothing written), 5 when DST already holds a
        ledger, 7 when another writer holds DST.

        \(ExitStatus.table)
        """

    static let command = Command(name: "copy", abstract: "Copy a ledger's log between folders and PostgreSQL", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let source = try args.required("SRC")
        let destination = try args.required("DST")
        try args.finish()
        let report = try LedgerLocation(source).copy(to: LedgerLocation(destination))
        if global.json {
            var o = JSONObject()
            o.set("from", report.from)
            o.set("to", report.to)
            o.set("bytes", report.bytes)
            o.set("batches", report.batches)
            o.set("records", report.records)
            o.set("chainHead", report.chainHead)
            Output.line(o.string)
        } else {
            Output.line("copied \(report.records) records in \(report.batches) batches (\(report.bytes) bytes) from \(report.from) to \(report.to); chain head \(report.chainHead)")
        }
    }
}
