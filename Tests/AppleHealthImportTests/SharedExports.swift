import Foundation
import TestSupport

/// The real exports under ../shared/data/apple-health and the counts their folder
/// READMEs give (computed there by apple_health_stats.py: the truth is the XML).
enum SharedExports {
    static var root: String? { SharedData.file("data/apple-health")?.path }

    static func files(in root: String) -> [String] {
        let fm = FileManager.default
        var out: [String] = []
        for folder in ((try? fm.contentsOfDirectory(atPath: root)) ?? []).sorted() {
            for name in ((try? fm.contentsOfDirectory(atPath: root + "/" + folder)) ?? []).sorted()
            where name.hasSuffix(".zip") || name.hasSuffix(".xml") {
                out.append(root + "/" + folder + "/" + name)
            }
        }
        return out
    }

    /// What a folder README says about its export.
    struct Expected {
        var recordsByType: [String: Int] = [:]
        var total = 0
        /// `- elements:` counts (Record counts nested ones too).
        var elements: [String: Int] = [:]
        var exactDuplicates = 0
        var logicalDuplicates = 0
        /// `- Me:` as a dictionary, nil when the export has no <Me>.
        var me: [String: String]?
        var exportDate: String?
    }

    static func expected(folder: String) throws -> Expected {
        let text = try String(contentsOfFile: folder + "/README.md", encoding: .utf8)
        var e = Expected()
        var inTypeTable = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("| Record type (top-level)") { inTypeTable = true; continue }
            if inTypeTable {
                if line.hasPrefix("|---") { continue }
                guard line.hasPrefix("|") else { inTypeTable = false; continue }
                let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
                let count = Int(cells[1].replacingOccurrences(of: "*", with: "").replacingOccurrences(of: ",", with: ""))!
                if cells[0].contains("total") { e.total = count } else { e.recordsByType[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = count }
            }
            if line.hasPrefix("- elements: ") {
                for part in line.dropFirst("- elements: ".count).split(separator: ",") {
                    let words = part.split(separator: " ")
                    e.elements[String(words[0])] = Int(words[1])!
                }
            }
            if line.hasPrefix("- exact duplicate Records: ") {
                let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
                e.exactDuplicates = numbers[0]
                e.logicalDuplicates = numbers[1]
            }
            if line.hasPrefix("- locale "), let r = line.range(of: "ExportDate `") {
                e.exportDate = String(line[r.upperBound...].prefix { $0 != "`" })
            }
            if line.hasPrefix("- Me: `{") {
                var me: [String: String] = [:]
                let body = line.drop { $0 != "{" }.dropFirst().prefix { $0 != "}" }
                for pair in body.components(separatedBy: "', '") {
                    let kv = pair.replacingOccurrences(of: "'", with: "").components(separatedBy: ": ")
                    if kv.count == 2 { me[kv[0]] = kv[1] }
                }
                e.me = me
            }
        }
        return e
    }
}
