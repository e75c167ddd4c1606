import Foundation
import HealthModel
import LedgerChecksums
import LedgerCore
import LedgerLog  // Durability, of Ledger.appendGroup

/// Progress of an import, for a terminal.
public struct ImportProgress: Sendable {
    /// 1: checking the whole export; 2: writing it.
    public let pass: Int
    public let bytesRead: UInt64
    public let bytesTotal: UInt64
    public let records: Int
}

/// Options of an import.
public struct ImportOptions: Sendable {
    /// Merge an export older than one the ledger holds, or of another person (by
    /// `<Me>`): refused without it, because it would remove what the newer export brought.
    public var force = false
    /// Work out what would be new, unchanged and removed, and write nothing.
    public var dryRun = false
    /// Samples per save event.
    public var samplesPerEvent = 2048
    /// Samples per log batch (one append, one checksum chain link). With two batches
    /// queued and one being appended, this bounds the import's working memory:
    /// 8,192 measured 117 MB peak on the 741,499-record export against 130 MB for
    /// 16,384 and 111 MB for 4,096, at the same speed within the noise.
    public var samplesPerBatch = 8192
    /// Tests: stop as a killed process would, after this many sample batches were
    /// appended (made durable, no `importFinished`), throwing `SimulatedCrash`.
    var crashAfterBatches: Int?
    /// Tests of a killed import process: after this many sample batches were appended
    /// and made durable, wait (without finishing) until the process is killed, so
    /// that the kill lands mid-import at a known point whatever the machine's load.
    /// The command line sets it from `HEALTHLEDGER_TEST_IMPORT_PAUSE_AFTER_BATCHES`.
    package var pauseAfterBatches: Int?
    /// Called once the pause above is durable (the test's cue to kill the process).
    package var paused: (@Sendable () -> Void)?
    /// Called now and then with how far a pass has come (on the importing thread).
    public var progress: (@Sendable (ImportProgress) -> Void)?

    public init(force: Bool = false, dryRun: Bool = false, progress: (@Sendable (ImportProgress) -> Void)? = nil) {
        self.force = force
        self.dryRun = dryRun
        self.progress = progress
    }
}

/// Imports an Apple Health export into a ledger, in two passes over the XML:
///
/// 1. **Check**: parse and map everything (malformed XML, an unparsable date or
///    number, a bad route file stop the import here, with line and column, before
///    anything is written); hash the XML (SHA-256) to recognize the export; find
///    the top-level Records that correlations repeat; count.
/// 2. **Write**: `importStarted`, each source registered as an imported app with an
///    imported share grant for the types it wrote, the `Me` characteristics, the
///    samples in large batches, activity summaries, then `importFinished` — durable.
///
/// Every import is a **merge** (`ImportMerge`): sample UUIDs come from content, so
/// what the ledger already holds (an earlier export of the same person, the same
/// export again, an interrupted import of it) is skipped and counted; what is new is
/// appended; what earlier imports brought and this export lacks is removed by one
/// `absentFromExport` event. An export older than one imported, or of another person,
/// is refused unless `force`.
///
/// Memory stays bounded by the buffers and the per-record duplicate table (16 bytes
/// per Record), whatever the export's size.
public enum AppleHealthImporter {
    /// The ledger's bundle identifier for an export's `sourceName`.
    public static func bundleIdentifier(for sourceName: String) -> String { "export:" + sourceName }

    /// Imports `source` into `ledger`: `check`, then `run(_:into:)`. Throws
    /// `ImportError` (nothing written) or a ledger error.
    public static func run(_ source: ExportSource, into ledger: Ledger, options: ImportOptions = ImportOptions()) async throws
        -> ImportSummary {
        try await run(try check(source, options: options), into: ledger)
    }

    /// Pass 1 on its own, needing no ledger: a malformed or invalid export is refused
    /// here, before a caller creates or opens anything.
    public static func check(_ source: ExportSource, options: ImportOptions = ImportOptions()) throws -> CheckedExport {
        let t0 = Date()
        var result = try survey(of: source, options: options)
        result.summary.checkSeconds = Date().timeIntervalSince(t0)
        return CheckedExport(source: source, options: options, survey: result)
    }

    /// Pass 2 of a checked export: merged into the ledger (or, `dryRun`, only
    /// counted). Throws `ImportError` (an older export, another person: nothing
    /// written) or a ledger error.
    public static func run(_ checked: CheckedExport, into ledger: Ledger) async throws -> ImportSummary {
        let imports = await ledger.read { $0.imports }
        let survey = checked.survey
        if !checked.options.force { try checkMergeable(survey, after: imports) }
        let earlier = imports.filter { $0.start.contentSHA256 == survey.summary.contentSHA256 }
        let t1 = Date()
        var summary = try await write(checked.source, survey: survey, ledger: ledger, importNumber: imports.count,
                                      sameExportBefore: !earlier.isEmpty, options: checked.options)
        summary.writeSeconds = Date().timeIntervalSince(t1)
        return summary
    }

    /// Refuses an export older than one the ledger holds (by ExportDate), or whose
    /// `<Me>` names another person (date of birth or biological sex set in both and
    /// different) than the latest import that had one.
    static func checkMergeable(_ survey: Survey, after imports: [ImportEntry]) throws(ImportError) {
        func instant(_ text: String?) -> Double? {
            guard var text else { return nil }
            return text.withUTF8 { ExportValues.date($0)?.seconds }
        }
        if let mine = instant(survey.summary.exportDate) {
            for entry in imports {
                if let theirs = instant(entry.start.exportDate), theirs > mine {
                    throw .olderExport(exportDate: survey.summary.exportDate, newer: entry.start.exportDate ?? "?",
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
            if let a = value(previous.start.me), let b = value(survey.me), a != b {
                throw .otherPerson("the export's <Me> has \(key)=\(b), the import at event #\(previous.startedAt) had \(a)")
            }
        }
    }

    /// An export that passed `check`: what pass 2 needs.
    public struct CheckedExport: Sendable {
        let source: ExportSource
        let options: ImportOptions
        let survey: Survey
        /// What pass 1 counted (the summary before anything is written).
        public var summary: ImportSummary { survey.summary }
    }

    // MARK: Pass 1

    struct Survey: Sendable {
        var summary = ImportSummary()
        var me: [MetadataEntry] = []
        /// Per source: the type codes it needs share permission for, and whether it
        /// wrote raw records.
        var sourceTypes: [Set<UInt16>] = []
        /// Exact fingerprints of correlation members, with multiplicity.
        var memberFingerprints: [UInt64: Int] = [:]
        /// Indexes (in document order of top-level samples) of samples a sync identity keeps out.
        var notSaved: Set<Int> = []
        /// Exact fingerprints of top-level Records seen more than once.
        var repeatedRecords: Set<UInt64> = []
    }

    /// Counts a sample's source and the type it needs permission for.
    private static func note(_ sample: Sample, source: Int, in survey: inout Survey) {
        while survey.sourceTypes.count <= source { survey.sourceTypes.append([]) }
        switch sample {
        case .quantity(let q): survey.sourceTypes[source].insert(ObjectType.quantity(q.type).code)
        case .category(let c): survey.sourceTypes[source].insert(ObjectType.category(c.type).code)
        case .workout: survey.sourceTypes[source].insert(ObjectType.workout.code)
        case .correlation(let c): for m in c.objects { survey.sourceTypes[source].insert(ObjectType.quantity(m.type).code) }
        case .unrecognized: break
        }
    }

    static func survey(of source: ExportSource, options: ImportOptions) throws -> Survey {
        // Hashing runs on the read-ahead thread, beside inflating: the mapper on this
        // thread is the slower half.
        let hashing = HashingStream(try source.openXML())
        let stream = ReadAheadStream(hashing)
        let scanner = XMLScanner(stream: stream, predefinedNames: ExportName.all)
        let mapper = ExportMapper(scanner: scanner, file: source.xmlName,
                                  routeFile: { try source.routeLocations($0) })
        mapper.checkOnly = true
        var survey = Survey()
        var exact = FingerprintSet(), logical = FingerprintSet()
        var days = Set<Int>()
        var syncVersions: [String: Int64] = [:]
        var sampleIndex = 0
        var lastProgress: UInt64 = 0
        func syncCheck(_ sample: Sample, source: Int) {
            syncCheck((try? sample.common.metadata.syncIdentity()) ?? nil, source: source)
        }
        func syncCheck(_ identity: (identifier: String, version: Int64)?, source: Int) {
            defer { sampleIndex += 1 }
            guard let identity else { return }
            let key = "\(source)\u{0}\(identity.identifier)"
            if let seen = syncVersions[key], seen >= identity.version {
                survey.notSaved.insert(sampleIndex)
            } else {
                syncVersions[key] = identity.version
            }
        }
        while let item = try mapper.next() {
            _ = mapper.takeKeptChildren()  // counted by the mapper; written by the second pass
            switch item {
            case .healthData(let locale):
                survey.summary.locale = locale
            case .exportDate(let value):
                survey.summary.exportDate = value
            case .me(let attributes):
                survey.me = attributes
            case .record(let r):
                survey.summary.records += 1
                survey.summary.recordsByType[r.typeName, default: 0] += 1
                if !exact.insert(r.exactFingerprint) {
                    survey.summary.exactDuplicateRecords += 1
                    survey.repeatedRecords.insert(r.exactFingerprint)
                }
                if !logical.insert(r.logicalFingerprint) { survey.summary.logicalDuplicateRecords += 1 }
                survey.summary.metadataEntries += r.metadataCount
                survey.summary.beatLists += r.beatLists
                survey.summary.beats += r.beats
                while survey.sourceTypes.count <= r.source { survey.sourceTypes.append([]) }
                if let code = r.typeCode { survey.sourceTypes[r.source].insert(code) }
                syncCheck(r.syncIdentity, source: r.source)
            case .correlation(let c):
                if case .correlation(let value) = c.sample {
                    survey.summary.correlationsByType[value.type.identifier, default: 0] += 1
                    survey.summary.correlationMembers += value.objects.count
                }
                survey.summary.correlationMembersUnlinked += c.unlinked.count
                for f in c.memberFingerprints { survey.memberFingerprints[f, default: 0] += 1 }
                note(c.sample, source: c.source, in: &survey)
                syncCheck(c.sample, source: c.source)
                for u in c.unlinked {
                    note(u.sample, source: u.source, in: &survey)
                    syncCheck(u.sample, source: u.source)
                }
            case .workout(let w):
                survey.summary.workouts += 1
                if w.rawReason != nil { survey.summary.workoutsKeptRaw += 1 }
                survey.summary.workoutEvents += w.events
                survey.summary.workoutStatistics += w.statistics
                survey.summary.workoutRoutes += w.routes
                survey.summary.routePoints += w.routePoints
                note(w.sample, source: w.source, in: &survey)
                syncCheck(w.sample, source: w.source)
            case .activitySummary(let a):
                survey.summary.activitySummaries += 1
                if !days.insert(LedgerState.dayKey(a.day)).inserted { survey.summary.duplicateActivitySummaryDays += 1 }
            case .kept(let element):
                survey.summary.keptElements[element.name, default: 0] += 1
            }
            if let progress = options.progress, scanner.bytesConsumed - lastProgress > 8 << 20 {
                lastProgress = scanner.bytesConsumed
                progress(ImportProgress(pass: 1, bytesRead: lastProgress, bytesTotal: source.xmlSize, records: survey.summary.records))
            }
        }
        // Read to the end of the stream, so that a zip entry's CRC is checked.
        let tail = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)
        defer { tail.deallocate() }
        while try stream.read(into: tail) > 0 {}
        while survey.sourceTypes.count < mapper.sources.count { survey.sourceTypes.append([]) }
        survey.summary.sources = mapper.sources
        survey.summary.keptChildren = mapper.keptChildCounts
        survey.summary.unknownAttributes = mapper.unknownAttributes
        survey.summary.missingRouteFiles = mapper.missingRouteFiles
        survey.summary.xmlName = source.xmlName
        survey.summary.xmlBytes = hashing.bytes  // complete: `stream` returned 0 (ReadAheadStream's invariant)
        survey.summary.contentSHA256 = hashing.digest()
        // "<!-- HealthKit Export Version: 13 -->", inside the DTD (or, without one, before the root).
        survey.summary.exportVersion = ([scanner.doctype ?? ""] + scanner.prologComments).lazy.compactMap { text -> String? in
            guard let r = text.range(of: "HealthKit Export Version:") else { return nil }
            return String(text[r.upperBound...].prefix { $0 != "-" && $0 != ">" && $0 != "\n" })
                .trimmingCharacters(in: .whitespaces)
        }.first
        return survey
    }

    // MARK: Pass 2

    static func write(_ source: ExportSource, survey: Survey, ledger: Ledger, importNumber: Int, sameExportBefore: Bool,
                      options: ImportOptions) async throws -> ImportSummary {
        var summary = survey.summary
        summary.again = sameExportBefore
        summary.dryRun = options.dryRun
        // The import id from the content hash and the number of imports before it.
        var seedInput = summary.contentSHA256
        withUnsafeBytes(of: UInt64(importNumber).bigEndian) { seedInput.append(contentsOf: $0) }
        let seed = SHA256.hash(seedInput).array
        summary.importId = UUID(uuid: seed.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16, as: uuid_t.self) })
        var pending: [LedgerCommand] = []
        func flush(durability: Durability = .deferred) async throws {
            guard !pending.isEmpty, !options.dryRun else { return pending.removeAll() }
            let results = try await ledger.executeGroup(pending, durability: durability)
            for r in results {
                switch r {
                case .success(let events):
                    if summary.firstSequence == 0, let first = events.first { summary.firstSequence = first.sequence }
                    if let last = events.last { summary.lastSequence = last.sequence }
                case .failure(let violation):
                    throw ImportError.refused("\(violation)")
                }
            }
            pending.removeAll(keepingCapacity: true)
        }

        pending.append(.startImport(ExportImportStart(importId: summary.importId, contentSHA256: summary.contentSHA256,
                                                      exportDate: summary.exportDate, locale: summary.locale,
                                                      exportVersion: summary.exportVersion, sourcePath: source.path,
                                                      again: summary.again, me: survey.me)))
        for (i, name) in summary.sources.enumerated() {
            let bundle = bundleIdentifier(for: name)
            pending.append(.registerApp(AppRegistration(bundleIdentifier: bundle, name: name, readPurpose: nil,
                                                        sharePurpose: nil, imported: true)))
            let codes = survey.sourceTypes[i].sorted()
            if !codes.isEmpty {
                pending.append(.decideAuthorization(bundleIdentifier: bundle,
                                                    decisions: codes.compactMap { ObjectType(code: $0) }.map { ($0, .granted, nil) },
                                                    basis: .imported))
            }
        }
        for entry in survey.me {
            guard let type = try? CharacteristicType(identifier: entry.key) else { continue }
            let text = entry.value.description
            guard !text.isEmpty, !text.hasSuffix("NotSet"),
                  let value = try? CharacteristicValue(type: type, text: text) else { continue }
            pending.append(.setCharacteristic(value))
            summary.characteristicsSet += 1
        }
        try await flush()

        let merge = ImportMerge(priorSlots: await ledger.read { $0.samples.count })
        if !options.dryRun, merge.priorSlots == 0 {
            await ledger.reserveSamples(survey.summary.records + survey.summary.workouts + survey.summary.correlationMembers)
        }
        // Mapping runs on its own thread, one batch ahead of the ledger; what the
        // ledger holds already is taken out of each batch on the ledger's actor.
        let producer = BatchProducer(source: source, sources: summary.sources, survey: survey, options: options)
        var batchesAppended = 0
        for try await batch in producer.batches() {
            let commands = batch.commands
            let fresh = await ledger.read { state in merge.filter(commands, in: state) }
            guard !options.dryRun, !fresh.isEmpty else {
                producer.consumed()
                continue
            }
            let outcome = try await ledger.appendGroup(fresh, durability: .deferred)
            producer.consumed()
            batchesAppended += 1
            if let limit = options.crashAfterBatches, batchesAppended >= limit {
                try await ledger.sync()
                throw SimulatedCrash()
            }
            if let limit = options.pauseAfterBatches, batchesAppended == limit {
                try await ledger.sync()
                options.paused?()
                while true { try await Task.sleep(nanoseconds: 1_000_000_000) }
            }
            if let first = outcome.refused.first { throw ImportError.refused("\(first.violation)") }
            if let range = outcome.sequences {
                if summary.firstSequence == 0 { summary.firstSequence = range.lowerBound }
                summary.lastSequence = range.upperBound
            }
        }
        let tally = producer.tally
        summary.recordsKeptRaw = tally.recordsKeptRaw
        summary.rawReasons = tally.rawReasons
        summary.recordsStoredAsMembers = tally.recordsStoredAsMembers
        // What the export no longer holds: removed in one event, before the finish.
        let absent = await ledger.read { state in merge.absences(in: state) }
        if !absent.objects.isEmpty || !absent.days.isEmpty {
            pending.append(.removeAbsent(ExportAbsence(importId: summary.importId, exportDate: summary.exportDate,
                                                       objects: absent.objects, days: absent.days)))
        }
        summary.merge = merge.counts
        summary.samplesSaved = merge.counts.filter { $0.key != "ActivitySummary" }.values.reduce(0) { $0 + $1.new }
        summary.notSavedSyncVersion = tally.notSavedSyncVersion + merge.syncVersionKept
        summary.previouslyDeleted = merge.previouslyDeleted
        pending.append(.finishImport(ExportImportFinish(importId: summary.importId, counts: summary.counts)))
        try await flush(durability: .durable)
        return summary
    }
}

/// What `ImportOptions.crashAfterBatches` throws (tests of interrupted imports).
struct SimulatedCrash: Error {}

/// Passes a stream through, hashing (SHA-256) and counting its bytes.
final class HashingStream: ByteStream {
    private let inner: ByteStream
    private var sha = SHA256()
    private(set) var bytes: UInt64 = 0

    init(_ inner: ByteStream) { self.inner = inner }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try inner.read(into: buffer)
        if n > 0 {
            sha.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            bytes += UInt64(n)
        }
        return n
    }

    func digest() -> [UInt8] { sha.finalize().array }
}

/// A set of 64-bit fingerprints (open addressing; 0 is stored out of line): 16 bytes
/// per member at most, for the duplicate counts.
struct FingerprintSet {
    private var slots: [UInt64] = [UInt64](repeating: 0, count: 1024)
    private var count = 0
    private var hasZero = false

    /// Inserts; false when it was already there.
    mutating func insert(_ f: UInt64) -> Bool {
        if f == 0 {
            defer { hasZero = true }
            return !hasZero
        }
        if (count + 1) * 2 > slots.count { grow() }
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: f ^ (f >> 29)) & mask
        while true {
            let s = slots[i]
            if s == 0 {
                slots[i] = f
                count += 1
                return true
            }
            if s == f { return false }
            i = (i + 1) & mask
        }
    }

    private mutating func grow() {
        let old = slots
        slots = [UInt64](repeating: 0, count: old.count * 2)
        count = 0
        let mask = slots.count - 1
        for f in old where f != 0 {
            var i = Int(truncatingIfNeeded: f ^ (f >> 29)) & mask
            while slots[i] != 0 { i = (i + 1) & mask }
            slots[i] = f
            count += 1
        }
    }
}
