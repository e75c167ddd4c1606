import Foundation
import HealthLedger
import HealthModel
import LedgerReporting
#if canImport(Glibc)
import Glibc
#endif

/// `healthledger ingest`: JSON Lines of samples on stdin, appended in batches.
enum IngestCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] ingest --app ID [--batch N]

        Read samples as JSON Lines on stdin, one object per line, and save them as the
        app in batches of N lines (default 1000): each batch is one save, all or nothing.
        After each durable batch, print `committed FIRST-LAST` on stdout: the 1-based
        input line numbers now durable. A bad line stops the ingest: it is named on
        stderr with its line number, nothing of its batch is appended, and the exit
        status is non-zero (earlier batches stay committed). Blank lines are skipped.

        Lines are strict JSON (RFC 8259): no leading zeros or `+` in numbers, numbers
        within ±1.8e308, no member name twice, no lone surrogates, nesting at most 64
        deep, a line at most 64 MiB. Every field must have its JSON type; an unknown
        field is refused.
        If stdout cannot be written (an acknowledgement lost) or stdin cannot be read,
        the ingest stops with exit 1 and says which lines were committed.

        Fields of a line:
          type      HealthKit identifier or short form, a string (required): bodyMass,
                    heartRate, HKCategoryTypeIdentifierSleepAnalysis, …
          value     a JSON number (quantity types; "72" in quotes is refused), or a
                    value name or a whole JSON number (category types)
          unit      HKUnit string, for quantity types only (kg, count/min, mL/(kg*min), …)
          start     ISO 8601 (required); end: ISO 8601 (default: start); a date
                    alone is the start of that day in the owner's time zone
          uuid      optional; a fresh one otherwise
          metadata  optional object: strings, numbers, booleans kept as such;
                    HKMetadataKeySyncIdentifier (a string) needs HKMetadataKeySyncVersion
                    (a whole JSON number) and the other way round
          device    optional object of strings: name, manufacturer, model, hardwareVersion,
                    firmwareVersion, softwareVersion, localIdentifier, udiDeviceIdentifier
        Example:
          {"type":"heartRate","value":72,"unit":"count/min","start":"2026-03-01T08:00:00Z"}

        \(ExitStatus.table)
        """

    struct LineError: Error {
        let line: Int
        let message: String
    }

    /// The fields a line may hold; any other is refused (a misspelt "metdata" is not
    /// dropped silently). The JSON form and its reading are the library's
    /// (`SampleJSONReader`, shared with the server's `POST /v1/samples`).
    static let fields = SampleJSONReader.fields

    /// Runs a reading step, a refusal of the JSON form being invalid input (exit 3).
    static func reading<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as SampleJSONError { throw CLIError.invalidInput(e.description) }
    }

    static func wrongType(_ field: String, _ expected: String, _ got: JSONValue) -> CLIError {
        CLIError.invalidInput(SampleJSONReader.wrongType(field, expected, got).description)
    }

    static func missing(_ field: String, _ why: String = "") -> CLIError {
        CLIError.invalidInput(SampleJSONReader.missing(field, why).description)
    }

    /// A string field: nil when absent; wrong type refused.
    static func string(_ object: JSONValue, _ field: String) throws -> String? {
        try reading { try SampleJSONReader.string(object, field) }
    }

    /// A sample from one line's JSON (`SampleJSONReader.sample`). With `zone`, a date
    /// alone is the start of that day there (the owner's day).
    static func sample(_ value: JSONValue, zone: TimeZone? = nil) throws -> Sample {
        try reading { try SampleJSONReader.sample(value, zone: zone) }
    }

    /// `metadata` (`SampleJSONReader.metadata`).
    static func metadata(_ value: JSONValue?) throws -> Metadata {
        try reading { try SampleJSONReader.metadata(value) }
    }

    /// The input line a refused batch failed on, when the refusal names it.
    static func line(for error: Error, in batch: [(line: Int, sample: Sample)]) -> Int? {
        switch error {
        case HealthStoreError.refused(.duplicateUUID(let uuid)):
            return batch.last { $0.sample.uuid == uuid }?.line
        case HealthStoreError.authorizationDenied(let type), HealthStoreError.authorizationNotDetermined(let type):
            return batch.first { $0.sample.type.rawValue == type }?.line
        default:
            return batch.first?.line
        }
    }

    static let command = Command(name: "ingest", abstract: "Save JSON Lines of samples from stdin, in durable batches", help: help) { args, global in
        if handledHelp(&args, help) { return }
        guard case .app(let bundle)? = try Identity.read(&args, ownerAllowed: false) else { return }
        let batchSize = Int(try args.option("--batch") ?? "1000") ?? 0
        try args.finish()
        guard batchSize > 0 else { throw CLIError.usage("--batch takes a whole number ≥ 1") }
        try await withStore(global, .app(bundle)) { ledger, store, _ in
            // A date alone is the start of that day in the owner's time zone (`--tz` overrides).
            let zone = global.timeZone(ledgerZone: await ledger.ownerTimeZone)
            // A first ingest from a file: room for as many samples as its size suggests
            // (one per 128 bytes; a file of shorter lines grows the tables once more),
            // so that the UUID table is sized once instead of rebuilt at every doubling
            // (5 % of a 1M-line ingest's CPU). Slot and column capacity stays virtual
            // until used; a ledger with samples keeps its tables (they may be mapped).
            var input = stat()
            if fstat(0, &input) == 0, input.st_mode & S_IFMT == S_IFREG, input.st_size >= 128,
               await ledger.read({ $0.samples.count }) == 0 {
                await ledger.reserveSamples(Int(min(input.st_size / 128, 1 << 30)))
            }
            var batch: [(line: Int, sample: Sample)] = []
            var firstLine = 1
            var lineNumber = 0
            // Batch N is saved (decided, folded, synced) while batch N+1 is read: the
            // reading overlaps the save's work and its fdatasync. Batch N+1 is handed
            // to a save only once N is durable and acknowledged, so the log, the
            // acknowledgements and every error are those of saving batches in turn.
            // Before waiting for input, the save in flight is finished (its
            // acknowledgement written): a writer pacing itself by them is never stuck.
            // Invariant: at most one save is in flight, and nothing is thrown while
            // one is (its outcome is reported first: `finishSaving`).
            var saving: (first: Int, last: Int, batch: [(line: Int, sample: Sample)], save: Task<Void, Error>)?
            /// Waits for the batch in flight, then acknowledges it or reports its refusal.
            func finishSaving() async throws {
                guard let inFlight = saving else { return }
                saving = nil
                do {
                    try await inFlight.save.value
                } catch {
                    let at = line(for: error, in: inFlight.batch) ?? inFlight.first
                    throw CLIError(status: describe(error).status,
                                   message: "line \(at): \(describe(error).message); lines \(inFlight.first)-\(inFlight.last) were not appended")
                }
                Output.line("committed \(inFlight.first)-\(inFlight.last)")
                do { try Output.commit() } catch {
                    throw Output.WriteFailed(errno: error.errno, detail: "lines \(inFlight.first)-\(inFlight.last) were committed but their acknowledgement was not written")
                }
            }
            /// Hands the batch read so far to a save, once the one before it is durable.
            func commit() async throws {
                guard !batch.isEmpty else { return }
                try await finishSaving()
                let samples = batch.map(\.sample)
                let store = store!
                saving = (firstLine, lineNumber, batch, Task { try await store.save(samples) })
                batch = []
                batch.reserveCapacity(batchSize)
                firstLine = lineNumber + 1
            }
            var reader = LineReader(fd: 0)
            while true {
                let next: ArraySlice<UInt8>?
                do {
                    // With a save in flight, the input is read on only while it is there:
                    // a writer that waits for the acknowledgement before sending more
                    // (a pipe fed as it goes) gets it before this waits for the writer.
                    var step = try reader.next(onlyIfReady: saving != nil)
                    if case .wouldBlock = step {
                        try await finishSaving()
                        step = try reader.next(onlyIfReady: false)
                    }
                    if case .line(let line) = step { next = line } else { next = nil }
                } catch let error as InputError {
                    try await finishSaving()
                    if case .lineTooLong = error {
                        throw CLIError(status: ExitStatus.invalidInput,
                                       message: "line \(lineNumber + 1): \(error.description); lines \(firstLine)-\(lineNumber + 1) were not appended")
                    }
                    let pending = batch.isEmpty ? "" : "; lines \(firstLine)-\(lineNumber) were not appended"
                    throw CLIError(status: ExitStatus.failure, message: "\(error.description) (after line \(lineNumber))\(pending)")
                }
                guard let bytes = next else { break }
                lineNumber += 1
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
                    if batch.isEmpty { firstLine = lineNumber + 1 }
                    continue
                }
                let parsed: Sample
                do {
                    // The common flat line straight from its bytes; any other, and every
                    // refusal, through the JSON tree (the same sample, the same error).
                    if let flat = SampleJSONReader.flatSample(bytes, zone: zone) {
                        parsed = flat
                    } else {
                        let value: JSONValue
                        do { value = try JSONValue.parse(bytes) } catch {
                            throw CLIError.invalidInput("invalidJSON: \(error)")
                        }
                        parsed = try sample(value, zone: zone)
                    }
                } catch {
                    try await finishSaving()
                    let (status, message) = describe(error)
                    throw CLIError(status: status, message: "line \(lineNumber): \(message); lines \(firstLine)-\(lineNumber) were not appended")
                }
                batch.append((lineNumber, parsed))
                if batch.count >= batchSize { try await commit() }
            }
            try await commit()
            try await finishSaving()
        }
    }
}

/// Why the input could not be read as lines: a failed read (stdin a folder: EISDIR;
/// an I/O error), exit 1, never taken for the end of the input; or a line longer
/// than `LineReader.maxLineLength`, exit 3, refused before memory runs out.
enum InputError: Error, CustomStringConvertible {
    case readFailed(what: String, errno: Int32)
    case lineTooLong(limit: Int)

    var description: String {
        switch self {
        case .readFailed(let what, let errno): "inputFailed: \(what): \(String(cString: strerror(errno)))"
        case .lineTooLong(let limit): "lineTooLong: no newline within \(limit >> 20) MiB"
        }
    }
}

/// Reads lines from a file descriptor in 1 MiB chunks; a line may be at most
/// `maxLineLength` bytes.
struct LineReader {
    static let maxLineLength = 64 << 20
    let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    /// Where the search for the next newline resumes (bytes before it hold none), so
    /// that a long line read in many chunks is searched once, not once per chunk.
    private var scanned = 0
    private var done = false

    init(fd: Int32) { self.fd = fd }

    /// The next line (without its newline), or nil at the end of the input.
    mutating func next() throws(InputError) -> ArraySlice<UInt8>? {
        switch try next(onlyIfReady: false) {
        case .line(let line): line
        case .end, .wouldBlock: nil
        }
    }

    /// What `next(onlyIfReady:)` found.
    enum Step {
        case line(ArraySlice<UInt8>)
        case end
        /// No whole line is buffered and the descriptor has nothing to read yet: a
        /// read would wait for the writer (a pipe or terminal fed as it goes).
        case wouldBlock
    }

    /// The next line; with `onlyIfReady`, `.wouldBlock` instead of a read that would
    /// wait (`poll`, no timeout; a failed poll counts as waiting), so that the caller
    /// can finish what the writer may be waiting for first (ingest's acknowledgement).
    mutating func next(onlyIfReady: Bool) throws(InputError) -> Step {
        while true {
            if let nl = buffer[max(start, scanned)...].firstIndex(of: 0x0A) {
                let line = buffer[start..<nl]
                start = nl + 1
                scanned = start
                return .line(line)
            }
            scanned = buffer.count
            if done {
                guard start < buffer.count else { return .end }
                let line = buffer[start...]
                start = buffer.count
                return .line(line)
            }
            if onlyIfReady {
                var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                // Readable, at its end (POLLHUP) or failed (POLLERR): `read` returns at once.
                guard poll(&ready, 1, 0) == 1, ready.revents != 0 else { return .wouldBlock }
            }
            scanned -= start
            buffer.removeSubrange(0..<start)
            start = 0
            guard buffer.count <= Self.maxLineLength else { throw .lineTooLong(limit: Self.maxLineLength) }
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0 {
                let e = errno
                if e == EINTR { continue }
                throw .readFailed(what: fd == 0 ? "stdin" : "fd \(fd)", errno: e)
            }
            if n == 0 { done = true } else { buffer.append(contentsOf: chunk[0..<n]) }
        }
    }
}
