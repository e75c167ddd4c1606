import Foundation
import Testing
import TestSupport

/// Every rule events/FORMAT.md defines (a bold `**X9**`) is cited by at least one
/// test under Tests/ (its ID as a word in a test's name, comment or expected error
/// text), and every rule ID the code cites in a refusal (`rule: "X9"`, `[X9]`) is
/// one FORMAT.md defines: a rule nobody tests, or a refusal citing a rule that does
/// not exist, fails here with the list.
struct FormatRuleCoverageTests {
    static let format = SharedData.repositoryRoot.appendingPathComponent("events/FORMAT.md")

    /// The rule IDs FORMAT.md defines: `**H1**`, `**M1 Leaves.**`, …
    static func definedRules() throws -> Set<String> {
        let text = try String(contentsOf: format, encoding: .utf8)
        let regex = try Regex(#"\*\*([A-Z][0-9]+)(\*\*| )"#)
        return Set(text.matches(of: regex).compactMap { $0.output[1].substring.map(String.init) })
    }

    /// The text of every Swift file under `folder` (relative to the package root), except `excluding`.
    static func swiftSources(_ folder: String, excluding: String? = nil) throws -> [(path: String, text: String)] {
        let root = SharedData.repositoryRoot.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        var out: [(String, String)] = []
        for case let url as URL in walker where url.pathExtension == "swift" && url.lastPathComponent != excluding {
            out.append((url.path, try String(contentsOf: url, encoding: .utf8)))
        }
        return out
    }

    /// Whether `id` occurs in `text` as a word (`E1` in `[E1]`, `E1/E8`, `E1:`; not in `E12` or `0xE1`).
    static func cites(_ text: String, _ id: String) -> Bool {
        var rest = text[...]
        while let range = rest.range(of: id) {
            let before = range.lowerBound == text.startIndex ? nil : text[text.index(before: range.lowerBound)]
            let after = range.upperBound == text.endIndex ? nil : text[range.upperBound]
            let isWordChar = { (c: Character?) in c.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false }
            if !isWordChar(before), !isWordChar(after) { return true }
            rest = text[range.upperBound...]
        }
        return false
    }

    @Test func formatDefinesTheRulesItIsKnownFor() throws {
        let rules = try Self.definedRules()
        // the families, so that a broken pattern cannot pass by finding nothing
        for id in ["H1", "B8", "R6", "Z1", "W8", "P5", "K3", "D2", "V4", "E10", "S6", "I3", "M4"] {
            #expect(rules.contains(id), "\(id) is not defined in FORMAT.md")
        }
    }

    @Test func everyRuleOfTheFormatIsCitedByATest() throws {
        let rules = try Self.definedRules()
        let tests = try Self.swiftSources("Tests", excluding: "FormatRuleCoverageTests.swift")
        let missing = rules.filter { id in !tests.contains { Self.cites($0.text, id) } }
        #expect(missing.isEmpty, "rules of events/FORMAT.md cited by no test: \(missing.sorted().joined(separator: " "))")
    }

    @Test func everyRuleTheCodeCitesIsDefined() throws {
        let rules = try Self.definedRules()
        let sources = try Self.swiftSources("Sources")
        let regex = try Regex(#"rule: "([A-Z][0-9]+)"|\[([A-Z][0-9]+(/[A-Z][0-9]+)*)\]"|: "([A-Z][0-9]+(/[A-Z][0-9]+)*)"$"#)
            .anchorsMatchLineEndings()
        var cited = Set<String>()
        for (_, text) in sources {
            for match in text.matches(of: regex) {
                for group in [1, 2, 4] {
                    if let ids = match.output[group].substring { cited.formUnion(ids.split(separator: "/").map(String.init)) }
                }
            }
        }
        #expect(cited.count > 30, "the pattern found only \(cited.sorted())")
        let undefined = cited.subtracting(rules)
        #expect(undefined.isEmpty, "rule IDs cited in Sources/ that events/FORMAT.md does not define: \(undefined.sorted())")
    }
}
