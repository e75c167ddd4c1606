import Foundation
import HealthModel
import LedgerLog
@testable import LedgerCore
import Testing
import TestSupport
@testable import AppleHealthImport

/// The importer's direct encoding (a plain quantity or category Record encoded from
/// its parts, no `Sample` built) writes exactly what the model's path writes: the same
/// payload bytes and the same facts, batch by batch, for every Record of every shared
/// export and of the small export.
struct DirectEncodingTests {
    /// Every message of a pass over `source`, each command as text: a save's payload
    /// bytes (as app 1 writes it) and its headers, bit for bit; other commands as they print.
    static func messages(_ source: ExportSource, direct: Bool, internLimit: Int = 100_000) throws
        -> (lines: [String], directRecords: Int, interned: (types: Int, units: Int, devices: Int)) {
        var options = ImportOptions()
        options.directEncoding = direct
        options.internLimit = internLimit
        let pass = ExportPass(source: source, options: options)
        var lines: [String] = []
        try pass.run { message in
            switch message {
            case .prolog(let p): lines.append("prolog \(p.locale ?? "-") \(p.exportDate ?? "-") \(p.me.count)")
            case .batch(let commands, let logical):
                lines.append("batch \(commands.count) logical \(logical)")
                for command in commands { lines.append(describe(command)) }
            case .end(let summary, let logical):
                lines.append("end \(summary.records) \(summary.recordsKeptRaw) \(summary.exactDuplicateRecords) logical \(logical)")
                lines.append("by type \(summary.recordsByType.sorted { $0.key < $1.key })")
            }
            return true
        }
        return (lines, pass.directRecords, pass.interned)
    }

    static func describe(_ command: LedgerCommand) -> String {
        guard case .saveEncoded(let bundle, let samples) = command else { return "\(command)" }
        var w = PayloadWriter(capacity: samples.byteCount + 8)
        samples.writePayload(app: 1, into: &w)
        let bytes = w.bytes
        let headers = samples.headers.map { h in
            "\(h.kind) \(h.uuid) \(h.typeCode) \(h.start.bitPattern) \(h.end.bitPattern) \(String(describing: h.replaces)) "
                + "\(h.syncIndex) \(h.syncVersion) \(String(describing: h.memberOf)) \(h.value.bitPattern) \(h.userEntered)"
        }
        return "save \(bundle) \(samples.count) \(bytes.map { String($0, radix: 16) }.joined()) \(samples.frameEnds) "
            + "\(samples.headerEnds) \(samples.syncIdentifiers) \(headers)"
    }

    @Test func theSmallExportEncodesTheSameEitherWay() throws {
        let dir = TemporaryDirectory()
        let source = try ExportSource(path: try SmallExport.write(in: dir.path + "-export"))
        let direct = try Self.messages(source, direct: true)
        let model = try Self.messages(source, direct: false)
        #expect(direct.directRecords > 0)
        #expect(model.directRecords == 0)
        #expect(direct.lines == model.lines)
    }

    /// Past the intern tables' limit (hostile input: ever new types, units and devices)
    /// the tables stop growing, and the records still map to the same samples and counts.
    @Test func pastTheInternLimitTheTablesStopGrowingAndNothingChanges() throws {
        let types = [("StepCount", "count"), ("HeartRate", "count/min"), ("BodyMass", "kg"), ("Height", "cm"),
                     ("ActiveEnergyBurned", "kcal"), ("DistanceWalkingRunning", "km"), ("FlightsClimbed", "count"),
                     ("BasalEnergyBurned", "kJ"), ("RespiratoryRate", "count/s"), ("BodyTemperature", "degC")]
        var xml = "<?xml version=\"1.0\"?>\n<HealthData locale=\"en_US\">\n <ExportDate value=\"2020-01-01 00:00:00 +0000\"/>\n"
        for round in 0..<3 {
            for (i, (type, unit)) in types.enumerated() {
                xml += " <Record type=\"HKQuantityTypeIdentifier\(type)\" sourceName=\"S\" unit=\"\(unit)\" "
                    + "device=\"&lt;&lt;HKDevice: 0x\(round)\(i)&gt;, name:D\(round)-\(i)&gt;\" "
                    + "creationDate=\"2019-01-0\(round + 1) 10:00:00 +0000\" startDate=\"2019-01-0\(round + 1) 10:0\(i):00 +0000\" "
                    + "endDate=\"2019-01-0\(round + 1) 10:0\(i):30 +0000\" value=\"\(i + 36)\"/>\n"
            }
        }
        xml += "</HealthData>\n"
        let dir = TemporaryDirectory()
        let source = try ExportSource(path: try SmallExport.write(xml, in: dir.path + "-export"))
        let kept = try Self.messages(source, direct: true)
        let limited = try Self.messages(source, direct: true, internLimit: 3)
        #expect(kept.interned.types == 10 && kept.interned.units == 9 && kept.interned.devices == 30)
        #expect(limited.interned.types == 4 && limited.interned.units == 4 && limited.interned.devices == 4)
        #expect(kept.directRecords == 30)
        #expect(limited.directRecords < 30)  // the records past the limit went the model's way
        #expect(limited.lines == kept.lines)
    }

    @Test(.enabled(if: SharedExports.root != nil, "needs ../shared/data/apple-health (the shared exports are absent)"), .tags(.sweep), .disabled(if: Sweeps.leftOut, Sweeps.reason),
          arguments: ImportSharedExportsTests.cases.map { "\($0.folder)/\($0.file)" })
    func everySharedExportEncodesTheSameEitherWay(_ relative: String) throws {
        let root = try #require(SharedExports.root)
        let source = try ExportSource(path: root + "/" + relative)
        let direct = try Self.messages(source, direct: true)
        let model = try Self.messages(source, direct: false)
        #expect(model.directRecords == 0)
        // dogsheep-fixtures-2019 has two Records, both with metadata (never direct).
        #expect(direct.directRecords > 0 || relative.hasPrefix("dogsheep"))
        #expect(direct.lines.count == model.lines.count)
        for (a, b) in zip(direct.lines, model.lines) where a != b {
            Issue.record("first difference:\n direct: \(a.prefix(600))\n model:  \(b.prefix(600))")
            break
        }
    }
}
