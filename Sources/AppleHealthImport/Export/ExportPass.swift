import Foundation
import HealthModel
import LedgerCore
import LedgerLog  // Locked

/// The import's one pass over an export, on a thread of its own: mapping the XML's
/// tags into batches of ledger commands (plain Records encoded straight from their
/// parts, `.saveEncoded`) while the ledger appends the previous batch, at most `depth`
/// messages ahead (so memory stays bounded). Reading, inflating, hashing and
/// tokenizing the XML run on a third thread (`XMLScanner(readingAhead:)`).
///
/// It yields, in order: the **prolog** (locale, ExportDate, `<Me>`, the export
/// version: what the importer checks before it writes anything), the **batches**,
/// and at the **end** the summary with the export's SHA-256 (known only then).
///
/// What a two-pass import learnt from its first pass is learnt here as it goes:
/// - sources are registered, and granted the types they wrote, in the batch where
///   they first appear, before the save that needs them;
/// - exact repeats get their occurrence numbers in document order (`RecordIdentity`);
/// - a sample whose sync identifier (per source) came earlier in the export at the
///   same or a newer version is not saved (HealthKit would refuse it);
/// - top-level Records that a Correlation may repeat as a member (quantities of a
///   type some correlation admits: blood pressure, food) are **held back** to the end
///   of the export, where those a Correlation holds are dropped (stored once, as the
///   members) and the rest saved. Memory: the held Records (none in most exports).
final class ExportPass: @unchecked Sendable {
    // @unchecked: `credit` and `cancelled` are guarded by `condition`; the mapper,
    // scanner and every other piece of mapping state are confined to the pass's thread.

    /// What the export says before its first sample.
    struct Prolog: Sendable {
        var locale: String?
        var exportDate: String?
        var me: [MetadataEntry] = []
        var exportVersion: String?
    }

    enum Message: Sendable {
        case prolog(Prolog)
        /// Commands, and the same-record fingerprints of the Records read since the last
        /// message (the consumer counts repeats of them: work taken off this thread).
        case batch([LedgerCommand], logical: [UInt64])
        /// The whole export's counts and content hash (the merge's counts, and the
        /// same-record repeats, are the consumer's to add).
        case end(ImportSummary, logical: [UInt64])
    }

    private let source: ExportSource
    private let options: ImportOptions
    /// Messages the pass may still send before the consumer takes one: `depth` at
    /// first, one less per message sent, one more per message consumed. Guarded by
    /// `condition`, as is `cancelled`. (A counter of our own, not a DispatchSemaphore:
    /// one dropped with messages in flight traps in libdispatch.)
    private var credit: Int
    private var cancelled = false
    private let condition = NSCondition()

    init(source: ExportSource, options: ImportOptions, depth: Int = 2) {
        self.source = source
        self.options = options
        self.credit = depth
    }

    /// Encoded samples the consumer is done with, emptied, for the pass to fill again:
    /// the same few buffers go round (no allocation per save, and no heap left
    /// fragmented by hundreds of short-lived buffers between the projections' blocks).
    private let spareRuns = Locked<[EncodedSamples]>([])

    /// An empty run of encoded samples, with room for a few.
    private static func newRun() -> EncodedSamples { EncodedSamples(reservingSamples: 64, bytes: 64 * 96) }

    /// Hands the encoded samples of a batch the consumer is done with back to the pass.
    func recycle(_ commands: consuming [LedgerCommand]) {
        var commands = commands
        var spares: [EncodedSamples] = []
        while let command = commands.popLast() {
            guard case .saveEncoded(_, var samples) = consume command else { continue }
            samples.removeAll()  // in place when the consumer kept no reference
            spares.append(samples)
        }
        guard !spares.isEmpty else { return }
        spareRuns.withLock { $0 += spares.prefix(max(0, 4 - $0.count)) }
    }

    /// Records the last `run` encoded directly, from their parts (tests).
    private(set) var directRecords = 0
    /// Types, units and devices the last `run`'s mapper held interned (tests).
    private(set) var interned = (types: 0, units: 0, devices: 0)

    /// The size of the export's XML.
    var sourceSize: UInt64 { source.xmlSize }

    /// The consumer is done with a message: the pass may make another.
    func consumed() {
        condition.lock()
        credit += 1
        condition.signal()
        condition.unlock()
    }

    /// Waits for credit to send a message; false once the consumer went away.
    private func acquire() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while credit <= 0 && !cancelled { condition.wait() }
        if cancelled { return false }
        credit -= 1
        return true
    }

    private func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// Starts the thread. Stopping early (the consumer's error) cancels it.
    func messages() -> AsyncThrowingStream<Message, Error> {
        AsyncThrowingStream { continuation in
            let thread = Thread { [self] in
                do {
                    try run { message in
                        guard acquire() else { return false }
                        continuation.yield(message)
                        return true
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            thread.name = "healthledger.import.map"
            thread.stackSize = 4 << 20
            continuation.onTermination = { [self] _ in cancel() }
            thread.start()
        }
    }

    /// The whole pass on the calling thread, every message dropped but the summary:
    /// a check of the export that needs no ledger.
    func summaryOnly() throws -> ImportSummary {
        var summary: ImportSummary?
        var repeats = SameRecordCounter(expected: Int(min(source.xmlSize / 300, 1 << 28)))
        try run { message in
            switch message {
            case .prolog: break
            case .batch(_, let logical): repeats.add(logical)
            case .end(let s, let logical):
                repeats.add(logical)
                summary = s
            }
            return true
        }
        summary!.logicalDuplicateRecords = repeats.repeats
        return summary!
    }

    /// A Record held back until the end of the export (it may be a correlation's member).
    private struct Held {
        let sample: Sample
        let source: Int
        let exactFingerprint: UInt64
        let typeCode: UInt16?
        /// False: a sync identifier earlier in the export keeps it out.
        let admitted: Bool
        let rawReason: String?
        let typeName: String
    }

    /// The pass on the calling thread: `emit` gets each message in turn and returns
    /// false to stop it.
    func run(_ emit: (Message) -> Bool) throws {
        let hashing = HashingStream(try source.openXML())
        // Reading, inflating, hashing and tokenizing on a thread of their own, beside
        // the mapping (`XMLReadAhead`).
        let scanner = XMLScanner(readingAhead: hashing, predefinedNames: ExportName.all)
        // About one Record per 300 bytes of XML (real exports: 260–400): sizes the
        // identity's occurrence table once.
        let expected = Int(min(source.xmlSize / 300, 1 << 28))
        let mapper = ExportMapper(scanner: scanner, file: source.xmlName, internLimit: options.internLimit,
                                  expectedRecords: expected, routeFile: { [source] in try source.routeLocations($0) })
        var summary = ImportSummary()
        var prolog = Prolog()
        var prologSent = false
        var stopped = false

        // Sources and their grants, as they appear.
        var registered = 0
        var granted: [Set<UInt16>] = []
        var pendingGrants: [Int: Set<UInt16>] = [:]
        var pendingRegistrations: [LedgerCommand] = []
        // Batches.
        var commands: [LedgerCommand] = []
        var run = Self.newRun()
        var runSource = -1
        var batchSamples = 0
        var summaries: [ActivitySummary] = []
        var kept: [ExportElement] = []
        // What the export holds so far.
        mapper.directEncoding = options.directEncoding
        var logical: [UInt64] = []  // since the last message
        var days = Set<DateOfBirth>()
        var syncVersions: [String: Int64] = [:]
        var held: [Held] = []
        var memberFingerprints: [UInt64: Int] = [:]
        var lastProgress: UInt64 = 0
        // Records by the intern id of their type (`mapper.typeName(_:)`): the summary's
        // counts by name, made at the end.
        var recordsByTypeId: [Int] = []

        func sendProlog() {
            guard !prologSent else { return }
            prologSent = true
            // "<!-- HealthKit Export Version: 13 -->", inside the DTD (or, without one, before the root).
            prolog.exportVersion = ([scanner.doctype ?? ""] + scanner.prologComments).lazy.compactMap { text -> String? in
                guard let r = text.range(of: "HealthKit Export Version:") else { return nil }
                return String(text[r.upperBound...].prefix { $0 != "-" && $0 != ">" && $0 != "\n" })
                    .trimmingCharacters(in: .whitespaces)
            }.first
            if !emit(.prolog(prolog)) { stopped = true }
        }
        func bundle(_ s: Int) -> String { AppleHealthImporter.bundleIdentifier(for: mapper.sources[s]) }
        /// Registrations of new sources and grants of new types, before the save that needs them.
        func flushAuthorization() {
            commands += pendingRegistrations
            pendingRegistrations.removeAll()
            for s in pendingGrants.keys.sorted() {
                let codes = pendingGrants[s]!.sorted()
                commands.append(.decideAuthorization(bundleIdentifier: bundle(s),
                                                     decisions: codes.compactMap { ObjectType(code: $0) }.map { ($0, .granted, nil) },
                                                     basis: .imported))
            }
            pendingGrants.removeAll()
        }
        func register(upTo s: Int) {
            while registered <= s {
                let name = mapper.sources[registered]
                pendingRegistrations.append(.registerApp(AppRegistration(bundleIdentifier: AppleHealthImporter.bundleIdentifier(for: name),
                                                                         name: name, readPurpose: nil, sharePurpose: nil,
                                                                         imported: true)))
                granted.append([])
                registered += 1
            }
        }
        var lastGrant: (source: Int, code: UInt16) = (-1, 0)
        func grant(_ code: UInt16, to s: Int) {
            if lastGrant == (s, code) { return }  // records come in runs of one source and type
            lastGrant = (s, code)
            register(upTo: s)
            if granted[s].insert(code).inserted { pendingGrants[s, default: []].insert(code) }
        }
        func endRun() {
            flushAuthorization()
            if !run.isEmpty {
                commands.append(.saveEncoded(bundleIdentifier: bundle(runSource), samples: run))
                // A run ends where its source does, so a batch may hold hundreds of short
                // ones: each starts small and grows as it fills (the buffers the consumer
                // hands back keep what they grew to), never reserved whole.
                run = spareRuns.withLock { $0.popLast() } ?? Self.newRun()
            }
        }
        func flush() {
            endRun()
            if !summaries.isEmpty {
                commands.append(.recordActivitySummaries(summaries))
                summaries = []
            }
            if !kept.isEmpty {
                commands.append(.keepExportElements(kept))
                kept = []
            }
            guard !commands.isEmpty else { return }
            if !emit(.batch(commands, logical: logical)) { stopped = true }
            logical.removeAll(keepingCapacity: true)
            commands = []
            batchSamples = 0
        }
        /// Whether a sync identity (per source) admits the sample: not when the export
        /// held the identifier before at the same or a newer version.
        func syncAdmits(_ identity: (identifier: String, version: Int64)?, source: Int) -> Bool {
            guard let identity else { return true }
            let key = "\(source)\u{0}\(identity.identifier)"
            if let seen = syncVersions[key], seen >= identity.version { return false }
            syncVersions[key] = identity.version
            return true
        }
        func note(_ sample: Sample, source: Int) {
            register(upTo: source)
            switch sample {
            case .quantity(let q): grant(ObjectType.quantity(q.type).code, to: source)
            case .category(let c): grant(ObjectType.category(c.type).code, to: source)
            case .workout: grant(ObjectType.workout.code, to: source)
            case .correlation(let c): for m in c.objects { grant(ObjectType.quantity(m.type).code, to: source) }
            case .unrecognized: break
            }
        }
        /// Room in the run for one more sample of `source` (a new run for another source
        /// or a full one), then one more sample counted in the batch.
        func startSample(of source: Int) {
            if source != runSource || run.count >= options.samplesPerEvent { endRun() }
            runSource = source
        }
        func endSample() {
            batchSamples += 1
            if batchSamples >= options.samplesPerBatch { flush() }
        }
        func add(_ sample: Sample, source: Int, admitted: Bool, typeCode: UInt16? = nil) {
            guard admitted else {
                summary.notSavedSyncVersion += 1
                return
            }
            note(sample, source: source)
            if let typeCode { grant(typeCode, to: source) }
            startSample(of: source)
            run.append(sample)
            endSample()
        }
        func keep(_ element: ExportElement) {
            kept.append(element)
            if kept.count >= 256 { endRun(); commands.append(.keepExportElements(kept)); kept = [] }
        }
        func mayBeMember(_ sample: Sample) -> Bool {
            guard case .quantity(let q) = sample else { return false }
            return Self.memberTypes.contains(q.type)
        }

        while !stopped, let item = try mapper.next() {
            for child in mapper.takeKeptChildren() { keep(child) }
            // Consumed: each item's payload is moved out, never copied (a Record's
            // fields would otherwise be retained and released once more per record).
            switch consume item {
            case .healthData(let locale):
                prolog.locale = locale
                continue
            case .exportDate(let value):
                prolog.exportDate = value
                continue
            case .me(let attributes):
                prolog.me = attributes
                continue
            case .directRecord:
                sendProlog()
                // Never held back (a type no correlation admits), no sync identity, not raw.
                // Its fields read in place: nothing of it is copied.
                let (typeCode, source, typeId, fingerprint) = mapper.directFacts
                summary.records += 1
                if typeId >= recordsByTypeId.count { recordsByTypeId += [Int](repeating: 0, count: typeId + 1 - recordsByTypeId.count) }
                recordsByTypeId[typeId] += 1
                if mapper.identity.lastWasRepeat { summary.exactDuplicateRecords += 1 }
                logical.append(fingerprint)
                grant(typeCode, to: source)
                startSample(of: source)
                mapper.appendDirect(to: &run)
                endSample()
            case .record(let r):
                sendProlog()
                summary.records += 1
                if r.typeId == mapper.scratchId {
                    summary.recordsByType[r.typeName, default: 0] += 1  // past the intern table's limit: by name
                } else {
                    if r.typeId >= recordsByTypeId.count { recordsByTypeId += [Int](repeating: 0, count: r.typeId + 1 - recordsByTypeId.count) }
                    recordsByTypeId[r.typeId] += 1
                }
                if mapper.identity.lastWasRepeat { summary.exactDuplicateRecords += 1 }
                logical.append(r.logicalFingerprint)
                summary.metadataEntries += r.metadataCount
                summary.beatLists += r.beatLists
                summary.beats += r.beats
                let admitted = syncAdmits(r.syncIdentity, source: r.source)
                if mayBeMember(r.sample) {
                    held.append(Held(sample: r.sample, source: r.source, exactFingerprint: r.exactFingerprint,
                                     typeCode: r.typeCode, admitted: admitted, rawReason: r.rawReason, typeName: r.typeName))
                    continue
                }
                if let reason = r.rawReason {
                    summary.recordsKeptRaw += 1
                    summary.rawReasons["\(r.typeName): \(reason)", default: 0] += 1
                }
                add(r.sample, source: r.source, admitted: admitted, typeCode: r.typeCode)
            case .correlation(let c):
                sendProlog()
                if case .correlation(let value) = c.sample {
                    summary.correlationsByType[value.type.identifier, default: 0] += 1
                    summary.correlationMembers += value.objects.count
                }
                summary.correlationMembersUnlinked += c.unlinked.count
                for f in c.memberFingerprints { memberFingerprints[f, default: 0] += 1 }
                add(c.sample, source: c.source, admitted: syncAdmits(Self.syncIdentity(c.sample), source: c.source))
                for u in c.unlinked {
                    add(u.sample, source: u.source, admitted: syncAdmits(Self.syncIdentity(u.sample), source: u.source))
                }
            case .workout(let w):
                sendProlog()
                summary.workouts += 1
                if w.rawReason != nil { summary.workoutsKeptRaw += 1 }
                summary.workoutEvents += w.events
                summary.workoutStatistics += w.statistics
                summary.workoutRoutes += w.routes
                summary.routePoints += w.routePoints
                add(w.sample, source: w.source, admitted: syncAdmits(Self.syncIdentity(w.sample), source: w.source))
            case .activitySummary(let a):
                sendProlog()
                summary.activitySummaries += 1
                if !days.insert(a.day).inserted { summary.duplicateActivitySummaryDays += 1 }
                summaries.append(a)
                if summaries.count >= 1000 { endRun(); commands.append(.recordActivitySummaries(summaries)); summaries = [] }
            case .kept(let element):
                sendProlog()
                summary.keptElements[element.name, default: 0] += 1
                keep(element)
            }
            if let progress = options.progress, scanner.bytesConsumed - lastProgress > 8 << 20 {
                lastProgress = scanner.bytesConsumed
                progress(ImportProgress(bytesRead: lastProgress, bytesTotal: source.xmlSize, records: summary.records))
            }
        }
        if stopped { return }
        sendProlog()
        if stopped { return }
        // The held Records: a correlation's member is stored once, as the member (the
        // first top-level copies of each member's content, in document order, are
        // the ones dropped); the rest are saved as they are.
        for h in held {
            if let n = memberFingerprints[h.exactFingerprint], n > 0 {
                memberFingerprints[h.exactFingerprint] = n == 1 ? nil : n - 1
                summary.recordsStoredAsMembers += 1
                continue
            }
            if let reason = h.rawReason {
                summary.recordsKeptRaw += 1
                summary.rawReasons["\(h.typeName): \(reason)", default: 0] += 1
            }
            add(h.sample, source: h.source, admitted: h.admitted, typeCode: h.typeCode)
            if stopped { return }
        }
        held = []
        flush()
        if stopped { return }
        // The document has ended: the reading scanner read the stream to its end (a zip
        // entry's CRC checked) before it handed over its last batch.
        while try scanner.next() != .endOfDocument {}
        for (id, n) in recordsByTypeId.enumerated() where n > 0 { summary.recordsByType[mapper.typeName(id), default: 0] += n }
        summary.locale = prolog.locale
        summary.exportDate = prolog.exportDate
        summary.exportVersion = prolog.exportVersion
        summary.sources = mapper.sources
        summary.keptChildren = mapper.keptChildCounts
        summary.unknownAttributes = mapper.unknownAttributes
        summary.missingRouteFiles = mapper.missingRouteFiles
        summary.xmlName = source.xmlName
        directRecords = mapper.directRecords
        interned = (mapper.typeInfos.count, mapper.unitInfos.count, mapper.deviceInfos.count)
        summary.xmlBytes = hashing.bytes  // complete: the scanner has ended (the stream returned 0)
        summary.contentSHA256 = hashing.digest()
        _ = emit(.end(summary, logical: logical))
    }

    /// Counts Records repeating the type, source, interval, value and unit of an
    /// earlier one (the summary's "same type/source/time/value"), from their
    /// fingerprints in document order.
    struct SameRecordCounter {
        private var seen: FingerprintSet
        private(set) var repeats = 0

        init(expected: Int) { seen = FingerprintSet(capacity: expected) }

        mutating func add(_ fingerprints: [UInt64]) {
            // Each insert is a cache miss in a table of megabytes: the slot 8 ahead is fetched meanwhile.
            for (i, f) in fingerprints.enumerated() {
                if i + 8 < fingerprints.count { seen.prefetch(fingerprints[i + 8]) }
                if !seen.insert(f) { repeats += 1 }
            }
        }
    }

    /// The quantity types some correlation admits as a member (blood pressure, food).
    static let memberTypes = Set(QuantityType.allTypes.filter { type in CorrelationType.allCases.contains { $0.admits(type) } })

    private static func syncIdentity(_ sample: Sample) -> (identifier: String, version: Int64)? {
        (try? sample.common.metadata.syncIdentity()) ?? nil
    }
}
