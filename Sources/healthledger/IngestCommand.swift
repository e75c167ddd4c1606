import Foundation
import HealthLedger
import HealthModel
import LedgerCore
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

        Fields of a line:
          type      HealthKit identifier or short form (required): bodyMass, heartRate,
                    HKCategoryTypeIdentifierSleepAnalysis, …
          value     a number (quantity types), or a value name or number (category types)
          unit      HKUnit string, for quantity types (kg, count/min, mL/(kg*min), …)
          start     ISO 8601 (required); end: ISO 8601 (default: start)
          uuid      optional; a fresh one otherwise
          metadata  optional object: strings, numbers, booleans kept as such
          device    optional object: name, manufacturer, model, hardwareVersion,
                    firmwareVersion, softwareVersion, localIdentifier, udiDeviceIdentifier
        Example:
          {"type":"heartRate","value":72,"unit":"count/min","start":"2026-03-01T08:00:00Z"}

        \(ExitStatus.table)
        """

    struct LineError: Error {
        let line: Int
        let message: String
    }

    static func sample(_ value: JSONValue) throws -> Sample {
        guard case .object = value else { throw CLIError.invalidInput("a line must hold a JSON object") }
        guard case .string(let typeText)? = value["type"] else { throw CLIError.invalidInput("missing \"type\"") }
        let type = try Parse.type(typeText)
        guard case .string(let startText)? = value["start"] else { throw CLIError.invalidInput("missing \"start\"") }
        let start = try Parse.date(startText, "start")
        var end = start
        if let e = value["end"] { guard case .string(let t) = e else { throw CLIError.invalidInput("\"end\" must be a string") }; end = try Parse.date(t, "end") }
        var uuid = UUID()
        if let u = value["uuid"] {
            guard case .string(let t) = u, let parsed = UUID(uuidString: t) else { throw CLIError.invalidInput("invalidUUID: \"uuid\"") }
            uuid = parsed
        }
        var metadata = Metadata()
        if case .object(let members)? = value["metadata"] {
            for (k, v) in members {
                switch v {
                case .string(let s): metadata.append(k, .string(s))
                case .number(let d, let text): metadata.append(k, Int64(text).map(MetadataValue.integer) ?? .number(d))
                case .bool(let b): metadata.append(k, .bool(b))
                default: throw CLIError.invalidInput("metadata \"\(k)\" must be a string, number or boolean")
                }
            }
        }
        var device: Device?
        if case .object(let members)? = value["device"] {
            var d = Device()
            for (k, v) in members {
                guard case .string(let s) = v else { throw CLIError.invalidInput("device \"\(k)\" must be a string") }
                switch k {
                case "name": d.name = s
                case "manufacturer": d.manufacturer = s
                case "model": d.model = s
                case "hardwareVersion": d.hardwareVersion = s
                case "firmwareVersion": d.firmwareVersion = s
                case "softwareVersion": d.softwareVersion = s
                case "localIdentifier": d.localIdentifier = s
                case "udiDeviceIdentifier": d.udiDeviceIdentifier = s
                default: throw CLIError.invalidInput("unknown device field \"\(k)\"")
                }
            }
            device = d
        }
        let valueText: String
        switch value["value"] {
        case .number(_, let text)?: valueText = text
        case .string(let s)?: valueText = s
        default: throw CLIError.invalidInput("missing \"value\"")
        }
        var unit: String?
        if case .string(let u)? = value["unit"] { unit = u }
        if case .quantity = type, unit == nil { throw CLIError.invalidInput("missing \"unit\" for a quantity type") }
        return try SaveCommand.sample(type: type, value: valueText, unit: unit, start: start, end: end, uuid: uuid,
                                      metadata: metadata, device: device)
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
        try await withStore(global, .app(bundle)) { _, store, _ in
            var batch: [(line: Int, sample: Sample)] = []
            var firstLine = 1
            var lineNumber = 0
            func commit() async throws {
                guard !batch.isEmpty else { return }
                do {
                    try await store!.save(batch.map(\.sample))
                } catch {
                    let at = line(for: error, in: batch) ?? firstLine
                    throw CLIError(status: describe(error).status,
                                   message: "line \(at): \(describe(error).message); lines \(firstLine)-\(lineNumber) were not appended")
                }
                Output.line("committed \(firstLine)-\(lineNumber)")
                Output.flush()
                batch.removeAll(keepingCapacity: true)
                firstLine = lineNumber + 1
            }
            var reader = LineReader(fd: 0)
            while let bytes = reader.next() {
                lineNumber += 1
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
                    if batch.isEmpty { firstLine = lineNumber + 1 }
                    continue
                }
                do {
                    let value: JSONValue
                    do { value = try JSONValue.parse(bytes) } catch let error as JSONValue.ParseError {
                        throw CLIError.invalidInput("invalidJSON: column \(error.column): \(error.reason)")
                    }
                    batch.append((lineNumber, try sample(value)))
                } catch {
                    let (status, message) = describe(error)
                    throw CLIError(status: status, message: "line \(lineNumber): \(message); lines \(firstLine)-\(lineNumber) were not appended")
                }
                if batch.count >= batchSize { try await commit() }
            }
            try await commit()
        }
    }
}

/// Reads lines from a file descriptor in 1 MiB chunks.
struct LineReader {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var done = false

    init(fd: Int32) { self.fd = fd }

    mutating func next() -> ArraySlice<UInt8>? {
        while true {
            if let nl = buffer[start...].firstIndex(of: 0x0A) {
                let line = buffer[start..<nl]
                start = nl + 1
                return line
            }
            if done {
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                return line
            }
            buffer.removeSubrange(0..<start)
            start = 0
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n <= 0 { done = true } else { buffer.append(contentsOf: chunk[0..<n]) }
        }
    }
}
