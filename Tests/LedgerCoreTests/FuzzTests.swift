import Foundation
import Testing
import HealthModel
@testable import LedgerCore
@testable import LedgerFuzz
import LedgerLog
import TestSupport

/// The seeded, few-thousand-case versions of the fuzzers in `tools/fuzz` (the
/// 100,000-case soaks run with `healthledger-bench fuzz`).
struct FuzzTests {
    @Test(.tags(.sweep), .disabled(if: Sweeps.leftOut, Sweeps.reason))
    func openReplayAndVerifyAgreeOnMutatedEvents() async throws {
        let counts = await EventFuzzer.run(seed: 17_000, cases: 1_500)
        #expect(counts.cases == 1_500)
        #expect(counts.disagreements == [], "\(counts.disagreements.prefix(5))")
        #expect(counts.accepted > 0)
        #expect(counts.refused.values.reduce(0, +) > 500)
    }

    @Test func unitStringsParseAndRoundTripOrAreRefused() {
        let counts = InputFuzzer.units(seed: 17_001, cases: 3_000)
        #expect(counts.findings == [])
        #expect(counts.accepted > 100)
        #expect(counts.refused["unitSyntax", default: 0] > 100)
    }

    @Test func datesParseAndRoundTripOrAreRefused() {
        let counts = InputFuzzer.dates(seed: 17_002, cases: 3_000)
        #expect(counts.findings == [])
        #expect(counts.accepted > 100)
        #expect(counts.refused["invalidDate", default: 0] > 100)
    }

    /// A save whose type code does not match its kind (here a quantity sample
    /// carrying a type code past the table) trapped `open` in the fold
    /// (`precondition(code < typeCodeLimit)`) and was accepted by replay's header
    /// reader; now all three readers refuse the same event as undecodable (rule V1:
    /// the type code is a type of the sample's kind).
    // V4: one definition of a valid event: replay, verify and open refuse the same event.
    @Test(arguments: [UInt16(0x06FF), UInt16(0xFFFF), ObjectType.category(.sleepAnalysis).code, ObjectType.workout.code])
    func aTypeCodeOfTheWrongKindIsRefusedByEveryReader(code: UInt16) async throws {
        var records = EventFuzzer.base
        let save = try #require(records.firstIndex { $0.kind == EventKind.samplesSaved.rawValue })
        // The first sample of the first save is the body mass (UUID …0001): its type code follows the UUID.
        let uuid = Array(withUnsafeBytes(of: UUID(uuidString: "00000000-0000-4000-8000-000000000001")!.uuid) { Array($0) })
        var payload = records[save].payload
        let at = try #require((0...(payload.count - 16)).first { Array(payload[$0..<$0 + 16]) == uuid }) + 16
        payload[at] = UInt8(code & 0xFF)
        payload[at + 1] = UInt8(code >> 8)
        records[save].payload = payload
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, ledgerId: fixedLedgerId, options: testOptions)
        var batch = RecordBatch()
        for r in records { batch.append(kind: r.kind, version: r.version, payload: r.payload) }
        try await writer.append(batch)
        try await writer.close()

        let sequence = UInt64(save + 1)
        let reason = "type code \(code) is not a type of a quantity sample"
        #expect(throws: ReplayError.undecodable(sequence: sequence, offset: try Self.offset(fs, sequence),
                                                .malformed(offset: at - 16 - 1, reason: reason, rule: "V1"))) {
            _ = try StateLoader.load(fs, reader: try LogReader(fs))
        }
        let report = try LedgerVerifier.verify(fs)
        #expect(report.eventProblem == .undecodable(sequence: sequence, offset: try Self.offset(fs, sequence),
                                                     .malformed(offset: at - 16 - 1, reason: reason, rule: "V1")))
        #expect(throws: LedgerError.self) { _ = try Ledger.open(fs, options: LedgerOptions(log: testOptions)) }
    }

    static func offset(_ fs: SimulatedFileSystem, _ sequence: UInt64) throws -> UInt64 {
        var found: UInt64 = 0
        try LogReader(fs).forEachBatch { batch in
            batch.forEachRecord { r in if r.sequence == sequence { found = r.offset } }
            return true
        }
        return found
    }
}

/// Through the log, a save whose unit nests 2,100 parentheses (written past
/// the rules, as a hostile tool would) made `verify` segfault on every run; now every
/// reader refuses that event as malformed.
struct DeepUnitInTheLogTests {
    static func save(unit: String) -> [UInt8] {
        var w = ByteWriter(capacity: 256)
        w.varint(UInt64(1))  // actor: app 1
        w.varint(UInt64(1))  // one sample
        w.lengthPrefixed { s in
            s.u8(1)  // quantity
            s.uuid(UUID(uuidString: "00000000-0000-4000-8000-0000000000AA")!)
            s.u16(ObjectType.quantity(.bodyMass).code)
            s.date(Date(timeIntervalSince1970: 1_772_366_400))
            s.date(Date(timeIntervalSince1970: 1_772_366_400))
            s.u8(0)  // no flags
            s.f64(70)
            s.string(unit)
        }
        return w.bytes
    }

    @Test(arguments: [(17, "parentheses nested deeper than 16"), (2_100, "unit string longer than 256 bytes"),
                      (20_000, "unit string longer than 256 bytes")])
    func aDeeplyNestedUnitIsRefusedByEveryReader(depth: Int, why: String) async throws {
        var records = EventFuzzer.base
        let unit = String(repeating: "(", count: depth) + "kg" + String(repeating: ")", count: depth)
        records.append((EventKind.samplesSaved.rawValue, EventKind.samplesSaved.currentVersion, Self.save(unit: unit)))
        // The control: the same save with a plain unit is accepted.
        var control = EventFuzzer.base
        control.append((EventKind.samplesSaved.rawValue, EventKind.samplesSaved.currentVersion, Self.save(unit: "kg")))
        for (log, refused) in [(records, true), (control, false)] {
            let fs = SimulatedFileSystem()
            let writer = try LogWriter.create(fs, ledgerId: fixedLedgerId, options: testOptions)
            var batch = RecordBatch()
            for r in log { batch.append(kind: r.kind, version: r.version, payload: r.payload) }
            try await writer.append(batch)
            try await writer.close()
            let report = try LedgerVerifier.verify(fs)
            if refused {
                guard case .undecodable(let sequence, _, .malformed(_, let reason, _))? = report.eventProblem else {
                    Issue.record("not refused as malformed: \(String(describing: report.eventProblem))")
                    continue
                }
                #expect(sequence == UInt64(log.count))
                #expect(reason.contains(why), "\(reason)")
                #expect(throws: ReplayError.self) { _ = try StateLoader.load(fs, reader: try LogReader(fs)) }
            } else {
                #expect(report.isIntact)
                #expect(try StateLoader.load(fs, reader: try LogReader(fs)).state.lastSequence == UInt64(log.count))
            }
        }
    }
}
