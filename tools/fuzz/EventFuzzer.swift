import Foundation
import HealthModel
import LedgerChecksums
import LedgerCore
import LedgerLog
import TestSupport

/// A structured fuzzer of event payloads (issue 17): mutates one event of a valid
/// ledger (bit flips, counts and lengths set to extremes, truncation, junk appended,
/// kind and version swaps), writes the log again through `LogWriter` so that every
/// checksum and chain link is right, and checks that the three ways of reading a
/// log — `Ledger.open`, replay (`StateLoader`, what `replay` and every reading
/// command run) and `verify` — agree: all accept with the same state digest, or all
/// refuse naming the same event and the same kind of error. A trap ends the process,
/// which the caller notices (the soak reports only when it completes).
public enum EventFuzzer {
    /// What a run found.
    public struct Counts: Sendable, CustomStringConvertible {
        public var cases = 0
        public var accepted = 0
        /// Refusals by error kind (`undecodable.malformed`, `ruleViolation.duplicateUUID`, …).
        public var refused: [String: Int] = [:]
        /// Cases where the three readers disagreed, with the seed and case to rerun.
        public var disagreements: [String] = []

        public init() {}

        public mutating func add(_ other: Counts) {
            cases += other.cases
            accepted += other.accepted
            for (k, v) in other.refused { refused[k, default: 0] += v }
            disagreements += other.disagreements
        }

        public var description: String {
            let kinds = refused.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            return "cases=\(cases) accepted=\(accepted) refused=\(refused.values.reduce(0, +)) [\(kinds)] "
                + "disagreements=\(disagreements.count) traps=0"
        }
    }

    /// One reader's verdict.
    enum Verdict: Equatable, CustomStringConvertible {
        case accepted(SHA256Digest, UInt64)
        case refused(sequence: UInt64, kind: String)
        case failed(String)

        var description: String {
            switch self {
            case .accepted(let d, let n): "accepted \(n) events, digest \(d)"
            case .refused(let s, let k): "refused event \(s): \(k)"
            case .failed(let m): "failed: \(m)"
            }
        }
    }

    static let ledgerId = UUID(uuidString: "6C656467-6572-4000-8000-00000000F022")!

    /// The base ledger's records: (kind, version, payload), valid under the rules.
    static let base: [(kind: UInt16, version: UInt16, payload: [UInt8])] = {
        do { return try makeBase() } catch { fatalError("the fuzzer's base ledger does not build: \(error)") }
    }()

    static func makeBase() throws -> [(kind: UInt16, version: UInt16, payload: [UInt8])] {
        func at(_ text: String) throws -> Date { try ISO8601.parse(text) }
        func uuid(_ n: Int) -> UUID { UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))! }
        let app = AppRegistration(bundleIdentifier: "com.example.fuzz", name: "Fuzz", readPurpose: "reads", sharePurpose: "saves")
        let types: [ObjectType] = [.quantity(.bodyMass), .quantity(.heartRate), .quantity(.bloodPressureSystolic),
                                   .quantity(.bloodPressureDiastolic), .category(.sleepAnalysis), .workout,
                                   .quantity(.activeEnergyBurned)]
        var metadata = Metadata()
        metadata.append(Metadata.WellKnownKey.syncIdentifier, .string("sync-1"))
        metadata.append(Metadata.WellKnownKey.syncVersion, .integer(3))
        metadata.append("Note", .string("morning"))
        metadata.append("When", .date(try at("2026-03-01T06:00:00Z")))
        metadata.append("Temp", .quantity(try Quantity(21.5, unit: "degC")))
        let t = try at("2026-03-01T07:00:00Z")
        let mass = try QuantitySample(type: .bodyMass, quantity: try Quantity(70.5, unit: "kg"), start: t, end: t, uuid: uuid(1),
                                      metadata: metadata, creationDate: t)
        let heart = try QuantitySample(type: .heartRate, quantity: try Quantity(61, unit: "count/min"), start: t,
                                       end: t.addingTimeInterval(60), uuid: uuid(2))
        let sys = try QuantitySample(type: .bloodPressureSystolic, quantity: try Quantity(120, unit: "mmHg"), start: t, end: t, uuid: uuid(3))
        let dia = try QuantitySample(type: .bloodPressureDiastolic, quantity: try Quantity(80, unit: "mmHg"), start: t, end: t, uuid: uuid(4))
        let bp = try Correlation(type: .bloodPressure, start: t, end: t, objects: [sys, dia], uuid: uuid(5))
        let sleep = try CategorySample(type: .sleepAnalysis, value: 1, start: t.addingTimeInterval(-28_800), end: t, uuid: uuid(6))
        let w0 = try at("2026-03-01T10:00:00Z"), w1 = try at("2026-03-01T10:30:00Z")
        let route = WorkoutRoute(sourceName: "Watch", startDate: w0, endDate: w1,
                                 locations: [RouteLocation(date: w0, latitude: 52.5, longitude: 13.4, altitude: 34),
                                             RouteLocation(date: w1, latitude: 52.51, longitude: 13.41)])
        let workout = try Workout(activityType: .running, start: w0, end: w1, totalEnergyBurned: try Quantity(250, unit: "kcal"),
                                  totalDistance: try Quantity(5, unit: "km"),
                                  events: [try WorkoutEvent(kind: .pause, date: w0.addingTimeInterval(600), duration: 30)],
                                  uuid: uuid(7), statistics: [WorkoutStatistic(type: TypeIdentifier(parsing: "HKQuantityTypeIdentifierHeartRate"),
                                                                              startDate: w0, endDate: w1, average: 140, unit: "count/min")],
                                  routes: [route])
        let energy = try QuantitySample(type: .activeEnergyBurned, quantity: try Quantity(250, unit: "kcal"), start: w0, end: w1, uuid: uuid(8))
        let commands: [LedgerCommand] = [
            .registerApp(app),
            .decideAuthorization(bundleIdentifier: app.bundleIdentifier,
                                 decisions: types.map { ($0, .granted, .granted) }, basis: .owner),
            .setCharacteristic(.dateOfBirth(try DateOfBirth(year: 1990, month: 4, day: 12))),
            .save(bundleIdentifier: app.bundleIdentifier, samples: [.quantity(mass), .quantity(heart)]),
            .save(bundleIdentifier: app.bundleIdentifier, samples: [.correlation(bp), .category(sleep)]),
            .save(bundleIdentifier: app.bundleIdentifier, samples: [.workout(workout), .quantity(energy)]),
            .delete(bundleIdentifier: app.bundleIdentifier, uuids: [uuid(2)], reason: "mistake"),
        ]
        var state = LedgerState()
        var records: [(kind: UInt16, version: UInt16, payload: [UInt8])] = []
        var sequence: UInt64 = 0
        for command in commands {
            for event in try LedgerDecider.decide(command, state) {
                sequence += 1
                records.append((event.kind.rawValue, event.kind.currentVersion, EventCodec.payload(event)))
                // This state only decides the next commands; its offsets need only be in
                // log order (SampleIndex.recordsConsecutive), one per record.
                state.apply(event, sequence: sequence, recordedAt: Int64(sequence) * 1_000_000_000, offset: sequence)
            }
        }
        return records
    }

    /// Runs `cases` cases from `seed` (case i uses seed &+ i, so any case reruns alone).
    public static func run(seed: UInt64, cases: Int) async -> Counts {
        var counts = Counts()
        for i in 0..<cases {
            let caseSeed = seed &+ UInt64(i)
            let (verdicts, note) = await runCase(seed: caseSeed)
            counts.cases += 1
            let first = verdicts[0]
            if verdicts.allSatisfy({ $0 == first }) {
                switch first {
                case .accepted: counts.accepted += 1
                case .refused(_, let kind): counts.refused[kind, default: 0] += 1
                case .failed(let m): counts.disagreements.append("seed \(caseSeed) (\(note)): every reader failed: \(m)")
                }
            } else {
                counts.disagreements.append("seed \(caseSeed) (\(note)): open \(verdicts[0]); replay \(verdicts[1]); verify \(verdicts[2])")
            }
        }
        return counts
    }

    /// One case: the mutated log, then the three verdicts (open, replay, verify).
    static func runCase(seed: UInt64) async -> ([Verdict], String) {
        var random = SeededRandom(seed: seed)
        var records = base
        let target = Int.random(in: 0..<records.count, using: &random)
        let note = mutate(&records[target], &random)
        let fs = SimulatedFileSystem()
        do {
            let writer = try LogWriter.create(fs, ledgerId: ledgerId, options: LogWriterOptions(allocationChunk: 1 << 16))
            // Two batches: the events before the target, then the target and the rest.
            for range in [0..<target, target..<records.count] where !range.isEmpty {
                var batch = RecordBatch()
                for r in records[range] { batch.append(kind: r.kind, version: r.version, payload: r.payload) }
                try await writer.append(batch)
            }
            try await writer.close()
        } catch {
            return ([.failed("write: \(error)"), .failed("write: \(error)"), .failed("write: \(error)")], note)
        }
        let replay = verdict { () throws -> Verdict in
            let loaded = try StateLoader.load(fs, reader: try LogReader(fs))
            return .accepted(loaded.state.digest(), loaded.state.lastSequence)
        }
        let verify = verdict { () throws -> Verdict in
            let report = try LedgerVerifier.verify(fs)
            if let problem = report.eventProblem { throw problem }
            guard report.isIntact else { return .failed("verify: not intact without an event problem") }
            return .accepted(report.digest, report.lastSequence)
        }
        // Open last: it may write (a seal, an index).
        var open: Verdict
        do {
            let ledger = try Ledger.open(fs, options: LedgerOptions(log: LogWriterOptions(allocationChunk: 1 << 16)))
            open = .accepted(await ledger.state.digest(), await ledger.state.lastSequence)
            do { try await ledger.close() } catch { open = .failed("close: \(error)") }
        } catch {
            open = classify(error)
        }
        return ([open, replay, verify], note)
    }

    static func verdict(_ body: () throws -> Verdict) -> Verdict {
        do { return try body() } catch { return classify(error) }
    }

    static func classify(_ error: Error) -> Verdict {
        let replayError: ReplayError
        switch error {
        case let e as ReplayError: replayError = e
        case LedgerError.replayFailed(let e): replayError = e
        default: return .failed("\(type(of: error)): \(error)")
        }
        switch replayError {
        case .undecodable(let s, _, let e):
            let name = String(e.description.prefix { $0 != ":" })
            return .refused(sequence: s, kind: "undecodable.\(name)")
        case .ruleViolation(let s, _, let v):
            return .refused(sequence: s, kind: "ruleViolation.\(v.code)")
        }
    }

    /// Mutates one record; returns what it did.
    static func mutate(_ record: inout (kind: UInt16, version: UInt16, payload: [UInt8]), _ random: inout SeededRandom) -> String {
        var p = record.payload
        let choice = Int.random(in: 0..<100, using: &random)
        defer { record.payload = p }
        func position() -> Int { p.isEmpty ? 0 : Int.random(in: 0..<p.count, using: &random) }
        switch choice {
        case 0..<30:
            let flips = Int.random(in: 1...3, using: &random)
            for _ in 0..<flips where !p.isEmpty { p[position()] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random) }
            return "flip \(flips) bits"
        case 30..<45:
            guard !p.isEmpty else { return "nothing" }
            let at = position()
            p[at] = [0x00, 0xFF, 0x7F, 0x80, 0x01][Int.random(in: 0..<5, using: &random)]
            return "byte \(at) set to an extreme"
        case 45..<60:
            // A count or length (a varint) set to an extreme: up to 10 bytes replaced.
            let at = position()
            let extreme: [UInt8] = [[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],
                                    [0xFF, 0xFF, 0xFF, 0xFF, 0x0F], [0x80, 0x80, 0x80, 0x80, 0x01], [0x00],
                                    [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]][Int.random(in: 0..<5, using: &random)]
            let end = min(p.count, at + Int.random(in: 0...extreme.count, using: &random))
            p.replaceSubrange(at..<end, with: extreme)
            return "varint at \(at) set to an extreme"
        case 60..<72:
            let at = position()
            p.removeSubrange(at...)
            return "truncated at \(at)"
        case 72..<80:
            let n = Int.random(in: 1...16, using: &random)
            p += (0..<n).map { _ in UInt8.random(in: 0...255, using: &random) }
            return "\(n) junk bytes appended"
        case 80..<88:
            record.kind = UInt16.random(in: 1...13, using: &random)  // the log itself refuses 0
            return "kind set to \(record.kind)"
        case 88..<94:
            record.version = [1, 2, 3, 4, UInt16.max][Int.random(in: 0..<5, using: &random)]
            return "version set to \(record.version)"
        default:
            // A section of the payload duplicated in place (lists grow, lengths lie).
            guard p.count > 2 else { return "nothing" }
            let a = position(), b = min(p.count, a + Int.random(in: 1...24, using: &random))
            p.insert(contentsOf: p[a..<b], at: a)
            return "bytes \(a)..<\(b) duplicated"
        }
    }
}
