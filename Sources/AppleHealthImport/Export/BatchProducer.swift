import Foundation
import HealthModel
import LedgerCore

/// The writing pass's mapping, on a thread of its own: it reads and maps the XML
/// into batches of save commands while the ledger appends the previous batch, at
/// most `depth` batches ahead (so memory stays bounded).
final class BatchProducer: @unchecked Sendable {
    // @unchecked: `tally` and `cancelled` are guarded by `lock`; the mapper, scanner
    // and everything else the thread uses are confined to it.

    /// What the producer counted, read after the last batch.
    struct Tally: Sendable {
        var samplesSaved = 0
        var recordsKeptRaw = 0
        var rawReasons: [String: Int] = [:]
        var recordsStoredAsMembers = 0
        var notSavedSyncVersion = 0
    }

    struct Batch: Sendable {
        let commands: [LedgerCommand]
    }

    private let source: ExportSource
    private let sources: [String]
    private let memberFingerprints: [UInt64: Int]
    private let notSaved: Set<Int>
    private let repeatedRecords: Set<UInt64>
    private let options: ImportOptions
    private let slots: DispatchSemaphore
    private let lock = NSLock()
    private var cancelled = false
    private var counted = Tally()

    init(source: ExportSource, sources: [String], survey: AppleHealthImporter.Survey, options: ImportOptions,
         depth: Int = 2) {
        self.source = source
        self.sources = sources
        self.memberFingerprints = survey.memberFingerprints
        self.notSaved = survey.notSaved
        self.repeatedRecords = survey.repeatedRecords
        self.options = options
        self.slots = DispatchSemaphore(value: depth)
    }

    var tally: Tally { lock.withLock { counted } }

    /// The consumer is done with a batch: the producer may make another.
    func consumed() { slots.signal() }

    /// Starts the thread; batches arrive in document order. Stopping early (an error
    /// in the consumer) cancels the thread.
    func batches() -> AsyncThrowingStream<Batch, Error> {
        AsyncThrowingStream { continuation in
            let thread = Thread { [self] in
                do {
                    try produce { batch in
                        slots.wait()
                        if lock.withLock({ cancelled }) { return false }
                        continuation.yield(batch)
                        return true
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            thread.name = "healthledger.import.map"
            thread.stackSize = 4 << 20
            continuation.onTermination = { [self] _ in
                lock.withLock { cancelled = true }
                slots.signal()
                slots.signal()
            }
            thread.start()
        }
    }

    private func produce(_ emit: (Batch) -> Bool) throws {
        let scanner = XMLScanner(stream: ReadAheadStream(try source.openXML()), predefinedNames: ExportName.all)
        let mapper = ExportMapper(scanner: scanner, file: source.xmlName,
                                  routeFile: { [source] in try source.routeLocations($0) })
        mapper.repeatedRecords = repeatedRecords
        var tally = Tally()
        var members = memberFingerprints
        var commands: [LedgerCommand] = []
        var batchSamples = 0
        var run: [Sample] = []
        var runSource = -1
        var summaries: [ActivitySummary] = []
        var kept: [ExportElement] = []
        var sampleIndex = 0
        var recordsSeen = 0
        var lastProgress: UInt64 = 0
        var stopped = false

        func endRun() {
            if !run.isEmpty {
                commands.append(.save(bundleIdentifier: AppleHealthImporter.bundleIdentifier(for: sources[runSource]), samples: run))
                run = []
                run.reserveCapacity(options.samplesPerEvent)  // no regrowth copies while the run fills
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
            lock.withLock { counted = tally }
            if !emit(Batch(commands: commands)) { stopped = true }
            commands = []
            batchSamples = 0
        }
        func add(_ sample: Sample, source: Int) {
            defer { sampleIndex += 1 }
            if !notSaved.isEmpty && notSaved.contains(sampleIndex) {
                tally.notSavedSyncVersion += 1
                return
            }
            if source != runSource || run.count >= options.samplesPerEvent { endRun() }
            runSource = source
            run.append(sample)
            tally.samplesSaved += 1
            batchSamples += 1
            if batchSamples >= options.samplesPerBatch { flush() }
        }

        while !stopped, let item = try mapper.next() {
            let children = mapper.takeKeptChildren()
            if !children.isEmpty {
                kept += children
                if kept.count >= 256 { endRun(); commands.append(.keepExportElements(kept)); kept = [] }
            }
            switch item {
            case .record(let r):
                recordsSeen += 1
                if let n = members[r.exactFingerprint], n > 0 {
                    // This top-level Record is a correlation's member: stored once, as the member.
                    members[r.exactFingerprint] = n == 1 ? nil : n - 1
                    tally.recordsStoredAsMembers += 1
                    sampleIndex += 1
                    continue
                }
                if let reason = r.rawReason {
                    tally.recordsKeptRaw += 1
                    tally.rawReasons["\(r.typeName): \(reason)", default: 0] += 1
                }
                add(r.sample, source: r.source)
            case .correlation(let c):
                add(c.sample, source: c.source)
                for u in c.unlinked { add(u.sample, source: u.source) }
            case .workout(let w):
                add(w.sample, source: w.source)
            case .activitySummary(let a):
                summaries.append(a)
                if summaries.count >= 1000 { endRun(); commands.append(.recordActivitySummaries(summaries)); summaries = [] }
            case .kept(let element):
                kept.append(element)
                if kept.count >= 256 { endRun(); commands.append(.keepExportElements(kept)); kept = [] }
            case .healthData, .exportDate, .me:
                break
            }
            if let progress = options.progress, scanner.bytesConsumed - lastProgress > 8 << 20 {
                lastProgress = scanner.bytesConsumed
                progress(ImportProgress(pass: 2, bytesRead: lastProgress, bytesTotal: source.xmlSize, records: recordsSeen))
            }
        }
        if !stopped { flush() }
        lock.withLock { counted = tally }
    }
}
