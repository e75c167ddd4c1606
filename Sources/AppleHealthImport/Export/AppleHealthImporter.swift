import Foundation
import HealthModel
import LedgerChecksums
import LedgerCore
import LedgerLog  // Durability, of Ledger.appendBestEffort

/// Progress of an import, for a terminal.
public struct ImportProgress: Sendable {
    public let bytesRead: UInt64
    public let bytesTotal: UInt64
    public let records: Int
}

/// Options of an import.
public struct ImportOptions: Sendable {
    /// Merge an export older than one the ledger holds, or of another person (by
    /// `<Me>`, or sharing no record with what earlier imports brought): refused
    /// without it, because it would remove what the newer export (or the other
    /// person's) brought.
    public var force = false
    /// Work out what would be new, unchanged and removed, and write nothing.
    public var dryRun = false
    /// Samples per save event.
    public var samplesPerEvent = 2048
    /// Samples per log batch (one append, one checksum chain link). With two batches
    /// queued and one being appended, this bounds the import's working memory.
    public var samplesPerBatch = 2048
    /// Distinct types, units and devices the mapper keeps interned (past it, each is
    /// parsed for its record alone). Tests make it small.
    var internLimit = 100_000
    /// Encode plain quantity and category Records straight from their parts (no
    /// `Sample` built; the same bytes). Off only in tests that compare the two ways.
    var directEncoding = true
    /// Tests: stop as a killed process would, after this many sample batches were
    /// appended (made durable; no `importFinished`, no `importAborted`), throwing
    /// `SimulatedCrash`.
    var crashAfterBatches: Int?
    /// Tests of a killed import process: after this many sample batches were appended
    /// and made durable, wait (without finishing) until the process is killed, so
    /// that the kill lands mid-import at a known point whatever the machine's load.
    /// The command line sets it from `HEALTHLEDGER_TEST_IMPORT_PAUSE_AFTER_BATCHES`.
    package var pauseAfterBatches: Int?
    /// Called once the pause above is durable (the test's cue to kill the process).
    package var paused: (@Sendable () -> Void)?
    /// Called now and then with how far the import has read (on the mapping thread).
    public var progress: (@Sendable (ImportProgress) -> Void)?

    public init(force: Bool = false, dryRun: Bool = false, progress: (@Sendable (ImportProgress) -> Void)? = nil) {
        self.force = force
        self.dryRun = dryRun
        self.progress = progress
    }
}

/// Imports an Apple Health export into a ledger in **one pass** over the XML, as a
/// **transaction** in the log (rule E11): `importStarted`, then each source registered
/// as an imported app with an imported share grant for the types it wrote (where it
/// first appears), the `<Me>` characteristics, the samples in large batches, activity
/// summaries and kept elements, then `absentFromExport` (what earlier imports brought
/// and this export lacks) and `importFinished` — durable; the import is acknowledged
/// there. Until then no reader, query or change feed sees any of it; a malformed
/// export (or any failure) appends `importAborted`, and none of the import applies.
/// A killed import is aborted by the next writer to open the ledger.
///
/// Every import is a **merge** (`ImportMerge`): sample UUIDs come from content, so
/// what the ledger already holds (an earlier export of the same person, the same
/// export again) is skipped and counted; what is new is appended. An export older
/// than one imported, or of another person, is refused unless `force`, before
/// anything is written (the prolog — ExportDate and `<Me>` — comes first in the XML;
/// a record in common with earlier imports is looked for before the transaction
/// begins, `requireRecordInCommon`).
///
/// Three threads: reading, inflating, hashing and tokenizing the XML
/// (`XMLScanner(readingAhead:)`), mapping and encoding (`ExportPass`), and the ledger's
/// deciding, folding and appending.
/// Memory stays bounded by the buffers, two batches in flight and the export's
/// fingerprint tables (10–20 bytes per record), besides the ledger's projections.
public enum AppleHealthImporter {
    /// The ledger's bundle identifier for an export's `sourceName`.
    public static func bundleIdentifier(for sourceName: String) -> String { "export:" + sourceName }

    /// Imports `source` into `ledger` (or, `dryRun`, counts what it would do and
    /// writes nothing). Throws `ImportError` or a ledger error; an import that had
    /// begun is aborted first (`importAborted`: none of it applies).
    public static func run(_ source: ExportSource, into ledger: Ledger, options: ImportOptions = ImportOptions()) async throws
        -> ImportSummary {
        try await run(source, reading: MergeReader(ledger), options: options)
    }

    /// What importing `source` into `ledger` would do — a dry run against a ledger
    /// read without its writer (no lock taken, no byte written: not even the abort of
    /// a killed import, which a writer's open appends), or against none (nil: no
    /// ledger yet). Refuses what `run` refuses.
    package static func dryRun(_ source: ExportSource, over ledger: consuming ReadOnlyLedger?,
                               options: ImportOptions = ImportOptions()) async throws -> ImportSummary {
        var options = options
        options.dryRun = true
        return try await run(source, reading: MergeReader(loadedFrom: ledger), options: options)
    }

    /// Throws what `run` would refuse before writing anything (`olderExport`,
    /// `otherPerson`, `unrelatedExport`, or the export's own errors met meanwhile),
    /// judged over `ledger` (read without its writer): the prolog, then the records up
    /// to the first the ledger holds. A command checks this before it opens the ledger
    /// for writing, since opening writes (it aborts a killed import). A refusal judged
    /// over a mapped snapshot found damaged is not trusted: nothing is thrown then,
    /// and the writer's own check decides.
    package static func refusal(_ source: ExportSource, over ledger: consuming ReadOnlyLedger,
                                options: ImportOptions = ImportOptions()) async throws {
        guard !options.force else { return }
        let reader = MergeReader(loadedFrom: ledger)
        do {
            try await refusal(source, over: reader, options: options)
        } catch let error as ImportError {
            switch error {
            case .olderExport, .otherPerson, .unrelatedExport:
                if await !reader.projectionsAreIntact() { return }
            default: break
            }
            throw error
        }
    }

    private static func refusal(_ source: ExportSource, over reader: MergeReader, options: ImportOptions) async throws {
        let pass = ExportPass(source: source, options: options)
        var messages = pass.messages().makeAsyncIterator()
        let prolog = try await firstProlog(&messages, pass)
        let imports = try await reader.imports().imports
        try checkMergeable(prolog, after: imports)
        _ = try await requireRecordInCommon(&messages, pass: pass, reading: reader, imports: imports)
    }

    private static func run(_ source: ExportSource, reading access: MergeReader, options: ImportOptions) async throws
        -> ImportSummary {
        let t0 = Date()
        var pass = ExportPass(source: source, options: options)
        var messages = pass.messages().makeAsyncIterator()
        var prolog = try await firstProlog(&messages, pass)
        let (imports, nextSequence) = try await access.imports()
        if !options.force {
            try checkMergeable(prolog, after: imports)
            // Before anything is written: a record in common with what earlier imports
            // brought, or the refusal. Found, the pass starts again from the top (what
            // it read of the export was only looked at, usually one batch).
            if !options.dryRun, try await requireRecordInCommon(&messages, pass: pass, reading: access, imports: imports) {
                pass = ExportPass(source: source, options: options)
                messages = pass.messages().makeAsyncIterator()  // the old pass, dropped, is cancelled
                prolog = try await firstProlog(&messages, pass)
            }
        }
        var summary = ImportSummary()
        summary.importId = importId(prolog, source: source, nextSequence: nextSequence)
        summary.dryRun = options.dryRun
        var transaction: ImportTransaction?
        if !options.dryRun, let ledger = access.ledger {
            transaction = try await ledger.beginImport(ExportImportStart(
                importId: summary.importId, exportDate: prolog.exportDate, locale: prolog.locale,
                exportVersion: prolog.exportVersion, sourcePath: source.path, me: prolog.me))
            summary.firstSequence = transaction!.startedAt
        }
        do {
            try await write(&messages, pass: pass, prolog: prolog, reading: access, imports: imports, transaction: transaction,
                            summary: &summary, options: options)
        } catch let crash as SimulatedCrash {
            throw crash  // a killed process aborts nothing: the next writer does
        } catch {
            if let transaction, let ledger = access.ledger {
                try? await ledger.abortImport(transaction, reason: "\(error)")
            }
            throw error
        }
        summary.seconds = Date().timeIntervalSince(t0)
        return summary
    }

    /// The pass's first message, its prolog (consumed).
    private static func firstProlog(_ messages: inout AsyncThrowingStream<ExportPass.Message, Error>.AsyncIterator,
                                    _ pass: ExportPass) async throws -> ExportPass.Prolog {
        guard case .prolog(let prolog)? = try await messages.next() else {
            preconditionFailure("an export pass begins with its prolog")
        }
        pass.consumed()
        return prolog
    }

    /// Reads the pass's records, writing nothing, until one the ledger holds (live)
    /// from before: true, the pass partly read (true too when the export turns out
    /// broken first: undecided, the import then meets the error itself). When the ledger holds nothing a merge
    /// could remove (no live sample of an imported source, no activity summary),
    /// false, the pass untouched. When the export ends with no record in common and
    /// the merge would remove what earlier imports brought — all of it — throws
    /// `unrelatedExport`: another person's export, whatever its `<Me>` says.
    private static func requireRecordInCommon(_ messages: inout AsyncThrowingStream<ExportPass.Message, Error>.AsyncIterator,
                                              pass: ExportPass, reading access: MergeReader,
                                              imports: [ImportEntry]) async throws -> Bool {
        guard try await access.holdsLiveImports() else { return false }
        let merge = try await access.startMerge()
        while true {
            let next: ExportPass.Message?
            do {
                next = try await messages.next()
            } catch {
                // The export is broken before a record in common: undecided. The import
                // meets the same error inside its transaction and aborts it, as documented.
                return true
            }
            guard let message = next else { break }
            switch consume message {
            case .prolog:
                preconditionFailure("one prolog per export")
            case .batch(let commands, _):
                _ = try await access.filter(commands, by: merge)
                pass.consumed()
                if merge.inCommon > 0 { return true }
            case .end:
                pass.consumed()
                let absent = try await access.absences(of: merge)
                try refuseUnrelated(merge, absent: absent, imports: imports)
                return true
            }
        }
        preconditionFailure("an export pass ends with its summary")
    }

    /// Throws `unrelatedExport` when the merge found no record in common and would
    /// remove what earlier imports brought (`absent`).
    private static func refuseUnrelated(_ merge: ImportMerge, absent: (objects: [DeletedObject], days: [DateOfBirth]),
                                        imports: [ImportEntry]) throws(ImportError) {
        guard merge.inCommon == 0, !absent.objects.isEmpty || !absent.days.isEmpty else { return }
        func count(_ n: Int, _ one: String, _ many: String) -> String? { n == 0 ? nil : "\(n) \(n == 1 ? one : many)" }
        let what = [count(absent.objects.count, "sample", "samples"),
                    count(absent.days.count, "activity summary", "activity summaries")].compactMap { $0 }.joined(separator: " and ")
        let last = imports.last.map { " (the last at event #\($0.startedAt), exported \($0.start.exportDate ?? "?"))" } ?? ""
        throw .unrelatedExport("this export shares no record with what the ledger's earlier imports brought\(last): merging it would remove all \(what) of theirs still in the ledger, as absent from it (is it another person's export?)")
    }

    /// Reads the whole export without a ledger: what it holds, or the first reason
    /// it cannot be imported (malformed XML, an unparsable date or number, a bad route
    /// file). Nothing is written anywhere.
    @discardableResult
    public static func check(_ source: ExportSource, options: ImportOptions = ImportOptions()) throws -> ImportSummary {
        try ExportPass(source: source, options: options).summaryOnly()
    }

    /// The import's id: SHA-256 over what names this import of this export in this
    /// ledger — the position it starts at, the XML's name and size, ExportDate, locale
    /// and `<Me>` — as a version 8 UUID. The same export into the same ledger history
    /// gives the same events (but for `recordedAt`); another import never the same id.
    static func importId(_ prolog: ExportPass.Prolog, source: ExportSource, nextSequence: UInt64) -> UUID {
        var sha = SHA256()
        func add(_ text: String?) {
            var bytes = Array((text ?? "").utf8)
            bytes.append(text == nil ? 1 : 0)
            bytes.withUnsafeBytes { sha.update($0) }
        }
        add("healthledger import transaction")
        withUnsafeBytes(of: nextSequence.bigEndian) { sha.update($0) }
        withUnsafeBytes(of: source.xmlSize.bigEndian) { sha.update($0) }
        add(source.xmlName)
        add(prolog.exportDate)
        add(prolog.locale)
        for entry in prolog.me {
            add(entry.key)
            add(entry.value.description)
        }
        var digest = sha.finalize().array
        digest[6] = (digest[6] & 0x0F) | 0x80
        digest[8] = (digest[8] & 0x3F) | 0x80
        return UUID(uuid: digest.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) })
    }

    /// Refuses an export older than one the ledger holds (by ExportDate), or whose
    /// `<Me>` names another person (date of birth or biological sex set in both and
    /// different) than the latest import that had one.
    static func checkMergeable(_ prolog: ExportPass.Prolog, after imports: [ImportEntry]) throws(ImportError) {
        func instant(_ text: String?) -> Double? {
            guard var text else { return nil }
            return text.withUTF8 { ExportValues.date($0)?.seconds }
        }
        if let mine = instant(prolog.exportDate) {
            for entry in imports {
                if let theirs = instant(entry.start.exportDate), theirs > mine {
                    throw .olderExport(exportDate: prolog.exportDate, newer: entry.start.exportDate ?? "?",
                                       sequence: entry.startedAt)
                }
            }
        }
        guard let previous = imports.last(where: { !$0.start.me.isEmpty }) else { return }
        for key in ["HKCharacteristicTypeIdentifierDateOfBirth", "HKCharacteristicTypeIdentifierBiologicalSex"] {
            func value(_ me: [MetadataEntry]) -> String? {
                guard let v = me.first(where: { $0.key == key })?.value.description, !v.isEmpty, !v.hasSuffix("NotSet") else { return nil }
                return v
            }
            if let a = value(previous.start.me), let b = value(prolog.me), a != b {
                throw .otherPerson("the export's <Me> has \(key)=\(b), the import at event #\(previous.startedAt) had \(a)")
            }
        }
    }

    /// The import's body, inside its transaction (nil: a dry run, nothing written).
    private static func write(_ messages: inout AsyncThrowingStream<ExportPass.Message, Error>.AsyncIterator, pass: ExportPass,
                              prolog: ExportPass.Prolog, reading access: MergeReader, imports: [ImportEntry],
                              transaction: ImportTransaction?, summary: inout ImportSummary, options: ImportOptions) async throws {
        let ledger = access.ledger
        func append(_ commands: [LedgerCommand], durability: Durability = .deferred) async throws {
            guard let transaction, let ledger, !commands.isEmpty else { return }
            let outcome = try await ledger.appendBestEffort(commands, durability: durability, in: transaction)
            if let first = outcome.refused.first { throw ImportError.refused("\(first.violation)") }
            if let range = outcome.sequences { summary.lastSequence = range.upperBound }
        }

        // The characteristics `<Me>` sets.
        var characteristics: [LedgerCommand] = []
        for entry in prolog.me {
            guard let type = try? CharacteristicType(identifier: entry.key) else { continue }
            let text = entry.value.description
            guard !text.isEmpty, !text.hasSuffix("NotSet"),
                  let value = try? CharacteristicValue(type: type, text: text) else { continue }
            characteristics.append(.setCharacteristic(value))
            summary.characteristicsSet += 1
        }
        try await append(characteristics)

        let merge = try await access.startMerge(in: transaction)
        if transaction != nil, let ledger, merge.priorSlots == 0 {
            // A first import: room for about as many samples as the XML's size suggests
            // (~260 bytes per Record in real exports; slot capacity is virtual until used).
            await ledger.reserveSamples(Int(min(pass.sourceSize / 300, 1 << 30)))
        }
        var batchesAppended = 0
        var totals: ImportSummary?
        // Same-record repeats are counted here, beside the ledger's work, not on the
        // mapping thread (the busier of the two).
        var repeats = ExportPass.SameRecordCounter(expected: Int(min(pass.sourceSize / 300, 1 << 28)))
        while let message = try await messages.next() {
            // Consumed: a batch's commands are then held only here, and their encoded
            // samples' buffers can go back to the pass unshared (`recycle`).
            switch consume message {
            case .prolog:
                preconditionFailure("one prolog per export")
            case .end(let end, let logical):
                totals = end
                repeats.add(logical)
                pass.consumed()
            case .batch(let commands, let logical):
                repeats.add(logical)
                var fresh = try await access.filter(commands, by: merge, in: transaction)
                pass.consumed()
                guard transaction != nil, !fresh.isEmpty else {
                    fresh = []
                    pass.recycle(commands)
                    continue
                }
                try await append(fresh)
                fresh = []  // the ledger has copied the samples' bytes: their buffers go back to the pass
                pass.recycle(commands)
                batchesAppended += 1
                if let limit = options.crashAfterBatches, batchesAppended >= limit, let ledger {
                    try await ledger.sync()
                    throw SimulatedCrash()
                }
                if let limit = options.pauseAfterBatches, batchesAppended == limit, let ledger {
                    try await ledger.sync()
                    options.paused?()
                    while true { try await Task.sleep(nanoseconds: 1_000_000_000) }
                }
            }
        }
        guard var totals else { preconditionFailure("an export pass ends with its summary") }
        totals.logicalDuplicateRecords = repeats.repeats
        // What the pass counted, with this import's identity and what the merge did.
        totals.importId = summary.importId
        totals.dryRun = summary.dryRun
        totals.characteristicsSet = summary.characteristicsSet
        totals.firstSequence = summary.firstSequence
        totals.lastSequence = summary.lastSequence
        let hash = totals.contentSHA256
        totals.again = try await access.holdsImport(ofContent: hash, in: transaction)
        // What the export no longer holds: removed with the finish, in one batch.
        let absent = try await access.absences(of: merge, in: transaction)
        // A dry run says what the import would refuse; an import checked before it
        // began (`requireRecordInCommon`), and refuses here only if the ledger changed since.
        if !options.force { try refuseUnrelated(merge, absent: absent, imports: imports) }
        totals.merge = merge.counts
        totals.samplesSaved = merge.counts.filter { $0.key != "ActivitySummary" }.values.reduce(0) { $0 + $1.new }
        totals.notSavedSyncVersion += merge.syncVersionKept
        totals.previouslyDeleted = merge.previouslyDeleted
        summary = totals
        guard let transaction, let ledger else { return }
        let absence = absent.objects.isEmpty && absent.days.isEmpty ? nil
            : ExportAbsence(importId: summary.importId, exportDate: summary.exportDate, objects: absent.objects, days: absent.days)
        let stored = try await ledger.commitImport(transaction, absence: absence,
                                                   finish: ExportImportFinish(importId: summary.importId, counts: summary.counts,
                                                                              contentSHA256: summary.contentSHA256))
        if let last = stored.last { summary.lastSequence = last.sequence }
    }
}

/// What `ImportOptions.crashAfterBatches` throws (tests of interrupted imports).
struct SimulatedCrash: Error {}
