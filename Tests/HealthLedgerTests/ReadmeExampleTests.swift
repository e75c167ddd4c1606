import Foundation
import Testing
import HealthLedger; import HealthModel; import LedgerCore; import LedgerLog
import TestSupport

/// The README's "API in ten lines", run as written (on a temporary folder), so the
/// example cannot rot.
struct ReadmeExampleTests {
    @Test func theTenLinesWork() async throws {
        let folder = TemporaryDirectory()
        let latest = try await ReadmeExample.run(path: folder.path)
        guard case .quantity(let sample)? = latest else { Issue.record("no sample: \(String(describing: latest))"); return }
        #expect(sample.quantity == (try Quantity(154, unit: "lb")))
        #expect(sample.source?.bundleIdentifier == "com.example.scale")
        #expect(try LedgerVerifier.verify(PosixFileSystem(path: folder.path)).isIntact)
    }

    /// The README's block is the compiled example, line for line: its imports are
    /// `Foundation` and `HealthLedger` alone, and its lines are those between the
    /// markers of `ReadmeExample.swift` (indentation removed, `path` → "my.ledger").
    @Test func theReadmeBlockIsTheCompiledExample() throws {
        let readme = try String(contentsOf: SharedData.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        guard let heading = readme.range(of: "## The API in ten lines"),
              let open = readme.range(of: "```swift\n", range: heading.upperBound..<readme.endIndex),
              let close = readme.range(of: "```", range: open.upperBound..<readme.endIndex) else {
            Issue.record("README.md has no swift block under \"The API in ten lines\""); return
        }
        let block = readme[open.upperBound..<close.lowerBound].split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("ReadmeExample.swift"), encoding: .utf8)
        let sourceLines = source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let begin = sourceLines.firstIndex(where: { $0.hasSuffix("// --- README begin ---") }),
              let end = sourceLines.firstIndex(where: { $0.hasSuffix("// --- README end ---") }) else {
            Issue.record("ReadmeExample.swift lost its markers"); return
        }
        let compiled = sourceLines[(begin + 1)..<end].map {
            String($0.dropFirst(8)).replacingOccurrences(of: "Ledger.create(path: path)", with: "Ledger.create(path: \"my.ledger\")")
        }
        #expect(Array(sourceLines.prefix(2)) == ["import Foundation", "import HealthLedger"])
        #expect(block == ["import Foundation", "import HealthLedger", ""] + compiled + [""])
    }
}
