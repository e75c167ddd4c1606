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
    static func messages(_ source: ExportSource, direct: Bool) throws -> (lines: [String], directRecords: Int) {
        var options = ImportOptions()
        options.directEncoding = direct
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
            }
            return true
        }
        return (lines, pass.directRecords)
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

    @Test(.enabled(if: SharedExports.root != nil, "needs ../shared/data/apple-health (the shared exports are absent)"),
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
