import AppleHealthImport
import Foundation
import HealthModel
import LedgerReporting
import TestSupport
@testable import healthledger

/// A seeded fuzzer of the command line's inputs, run in process on the same code the
/// commands run: JSON Lines for `ingest` (mutations of valid lines: bytes, types,
/// nesting, numbers, Unicode, truncation, repeated and unknown members), unit strings,
/// ISO 8601 dates, and Apple Health export XML (mutations of `SmallExport`).
///
/// Every case must end in an answer, never a trap: accepted, or refused with an
/// error that maps to a documented exit status and names its kind (`code: …`). A seed reproduces a run exactly; `tally` counts the outcomes.
/// `CLIInputFuzzTests` runs a few thousand cases; `tools/fuzz_cli.sh` the soak.
struct CLIInputFuzz {
    var rng: SeededRandom
    /// Outcomes by input kind and code: "json accepted", "json refused wrongType", …
    private(set) var tally: [String: Int] = [:]
    /// Cases that broke a rule (an undocumented status or an unnamed error), with the input.
    private(set) var failures: [String] = []

    init(seed: UInt64) { rng = SeededRandom(seed: seed) }

    /// Whether an error message starts with a named kind: `code: …`, the code a
    /// lowerCamelCase word (an error that fell through to `String(describing:)` does not).
    static func namesItsKind(_ code: Substring) -> Bool {
        guard let first = code.first, first.isLowercase, code.count >= 4 else { return false }
        return code.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
    }

    // MARK: Random choices

    mutating func int(_ range: Range<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    mutating func pick<T>(_ options: [T]) -> T { options[int(0..<options.count)] }

    // MARK: Checking one input

    mutating func record(_ kind: String, _ input: String, _ error: Error?, allowed: Set<Int32>) {
        guard let error else { tally[kind + " accepted", default: 0] += 1; return }
        let (status, message) = describe(error)
        let code = message.prefix { $0 != ":" }
        tally["\(kind) refused \(code)", default: 0] += 1
        if !allowed.contains(status) || !Self.namesItsKind(code) {
            failures.append("\(kind): status \(status), '\(message)' for input \(input.debugDescription)")
        }
    }

    /// One `ingest` line, exactly as `ingest` reads it.
    mutating func checkLine(_ bytes: [UInt8]) {
        var error: Error?
        do {
            let value: JSONValue
            do { value = try JSONValue.parse(ArraySlice(bytes)) } catch { throw CLIError.invalidInput("invalidJSON: \(error)") }
            _ = try IngestCommand.sample(value)
        } catch let e {
            error = e
        }
        record("json", String(decoding: bytes, as: UTF8.self), error, allowed: [ExitStatus.invalidInput])
    }

    mutating func checkUnit(_ text: String) {
        var error: Error?
        do { _ = try Quantity(1, unit: text) } catch let e { error = e }
        record("unit", text, error, allowed: [ExitStatus.invalidInput])
    }

    mutating func checkDate(_ text: String) {
        var error: Error?
        do { _ = try Parse.date(text, "start") } catch let e { error = e }
        record("date", text, error, allowed: [ExitStatus.invalidInput])
    }

    /// An export through the scanner and the importer's first pass (everything
    /// `import-apple-health` checks before it touches a ledger).
    mutating func checkXML(_ bytes: [UInt8], in folder: String) {
        let path = folder + "/export.xml"
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        var error: Error?
        do { _ = try AppleHealthImporter.check(try ExportSource(path: path)) } catch let e { error = e }
        record("xml", String(decoding: bytes.prefix(200), as: UTF8.self), error, allowed: [ExitStatus.invalidInput])
    }

    // MARK: JSON Lines

    static let validLines: [[(String, String)]] = [
        [("type", "\"bodyMass\""), ("value", "70.5"), ("unit", "\"kg\""), ("start", "\"2026-03-01T08:00:00Z\"")],
        [("type", "\"heartRate\""), ("value", "72"), ("unit", "\"count/min\""), ("start", "\"2026-03-01T08:00:00+01:00\""),
         ("end", "\"2026-03-01T08:01:00+01:00\""), ("uuid", "\"6F1A3C2E-0B7D-4E55-9C1A-1B2C3D4E5F60\"")],
        [("type", "\"sleepAnalysis\""), ("value", "\"asleepCore\""), ("start", "\"2026-03-01T01:00:00Z\""),
         ("end", "\"2026-03-01T05:00:00Z\"")],
        [("type", "\"HKQuantityTypeIdentifierVO2Max\""), ("value", "4.55e1"), ("unit", "\"mL/(kg*min)\""),
         ("start", "\"2026-03-01\""), ("metadata", "{\"HKWasUserEntered\":true,\"note\":\"caf\\u00e9 \\ud83d\\ude00\",\"n\":-0.5}")],
        [("type", "\"bodyMass\""), ("value", "0"), ("unit", "\"lb\""), ("start", "\"2026-03-01T08:00:00.250Z\""),
         ("metadata", "{\"HKMetadataKeySyncIdentifier\":\"s-1\",\"HKMetadataKeySyncVersion\":3}"),
         ("device", "{\"name\":\"Scale\",\"manufacturer\":\"Acme\",\"model\":\"S1\"}")],
    ]

    static let interestingValues = [
        "0", "-0", "072", "+72", "1e309", "-1e309", "1e-400", "9223372036854775808", "-9223372036854775809", "1.", ".5",
        "1e", "0x10", "NaN", "Infinity", "true", "false", "null", "[]", "{}", "[1,2]", "{\"a\":1}", "\"\"", "\"72\"",
        "\"\\ud800\"", "\"\\udc00\\ud800\"", "\"\\u0000\"", "\"\\uZZZZ\"", "\"a\\qb\"", "\"\u{7F}\"", "\"é\"", "1" + String(repeating: "0", count: 400),
        "123456789012345678901234567890", "1E+2", "-", "--1", "01.5", "1.5e+308", "4.9e-324",
    ]

    static let interestingBytes: [UInt8] = Array("{}[]\",:\\0123456789eE+-. tfnu\t\r\n".utf8) + [0x00, 0x01, 0x1F, 0x7F, 0x80, 0xBF, 0xC0, 0xC3, 0xE2, 0xED, 0xF4, 0xF5, 0xFF]

    static func render(_ members: [(String, String)]) -> [UInt8] {
        Array(("{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}").utf8)
    }

    mutating func nested(_ depth: Int) -> String {
        let open = pick(["[", "{\"k\":"])
        let close = open == "[" ? "]" : "}"
        return String(repeating: open, count: depth) + "1" + String(repeating: close, count: depth)
    }

    /// A mutation of a valid line: structure first (a member's value, a repeated or
    /// unknown member, one dropped), then bytes (flip, insert, delete, truncate).
    mutating func jsonLine() -> [UInt8] {
        var members = pick(Self.validLines)
        for _ in 0..<int(0..<3) {
            switch int(0..<7) {
            case 0: members[int(0..<members.count)].1 = pick(Self.interestingValues)
            case 1: members[int(0..<members.count)].1 = nested(int(1..<80))
            case 2: let m = pick(members); members.insert((m.0, pick(Self.interestingValues + [m.1])), at: int(0..<members.count + 1))
            case 3: members.append((pick(["metdata", "Type", "", "value ", "é", "\\u0000"]), pick(Self.interestingValues)))
            case 4: members.remove(at: int(0..<members.count))
            case 5:
                let unit = unitString()
                members.removeAll { $0.0 == "unit" }
                members.append(("unit", "\"" + unit.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""))
            default:
                let date = dateString()
                if let i = members.firstIndex(where: { $0.0 == "start" }) { members[i].1 = "\"" + date + "\"" }
            }
            if members.isEmpty { members = pick(Self.validLines) }
        }
        var bytes = Self.render(members)
        for _ in 0..<int(0..<3) {
            guard !bytes.isEmpty else { break }
            let at = int(0..<bytes.count)
            switch int(0..<5) {
            case 0: bytes[at] ^= UInt8(1 << int(0..<8))
            case 1: bytes.insert(pick(Self.interestingBytes), at: at)
            case 2: bytes.removeSubrange(at..<min(bytes.count, at + int(1..<8)))
            case 3: bytes.removeSubrange(at...)
            default: bytes[at] = pick(Self.interestingBytes)
            }
        }
        return bytes
    }

    // MARK: Units

    static let validUnits = ["kg", "lb", "count/min", "mL/(kg*min)", "mmHg", "degF", "degC", "kcal", "m/s^2", "%", "mg/dL",
                             "mmol<180.1558800000541>/L", "mL/min·kg", "count", "ft", "km/hr", "dBASPL", "IU", "cm^3"]
    static let unitPieces = ["(", ")", "*", "/", "^", "^-1", "^99999999999999999999", "·", ".", "-", "0", "1e9", "<", ">", "<1.5>",
                             " ", "k", "m", "g", "L", "s", "min", "%", "mmol<", "µ", "\u{0}", "é", "count", "/(", "**", "//"]

    mutating func unitString() -> String {
        var text = pick(Self.validUnits)
        for _ in 0..<int(0..<4) {
            var chars = Array(text)
            let at = int(0..<chars.count + 1)
            switch int(0..<5) {
            case 0: chars.insert(contentsOf: pick(Self.unitPieces), at: at)
            case 1: if !chars.isEmpty { chars.remove(at: min(at, chars.count - 1)) }
            case 2: chars = Array(String(repeating: "(", count: int(1..<40)) + text + String(repeating: ")", count: int(0..<41)))
            case 3: chars = Array(text + pick(["*", "/"]) + pick(Self.validUnits))
            default: chars = Array(chars.prefix(at))
            }
            text = String(chars)
        }
        return text
    }

    // MARK: Dates

    static let validDates = ["2026-03-01T08:00:00Z", "2026-03-01T08:00:00+01:00", "2026-03-01T08:00:00.123456Z", "2026-03-01",
                             "2026-12-31T23:59:59-23:59", "2024-02-29T00:00:00+14:00", "1970-01-01T00:00:00Z"]
    static let datePieces = ["Z", "+", "-", ":", "T", "t", " ", ".", "0", "9", "60", "24", "00", "99", "+14:00", "-23:59", "+24:00",
                             "0000", "9999", "-0001", ",5", ".000000000001", "z", "\u{0}", "１"]

    mutating func dateString() -> String {
        var chars = Array(pick(Self.validDates))
        for _ in 0..<int(1..<4) {
            let at = int(0..<chars.count + 1)
            switch int(0..<4) {
            case 0: chars.insert(contentsOf: pick(Self.datePieces), at: at)
            case 1: if !chars.isEmpty { chars.remove(at: min(at, chars.count - 1)) }
            case 2: if at < chars.count { chars.replaceSubrange(at..<min(chars.count, at + 2), with: pick(Self.datePieces)) }
            default: chars = Array(chars.prefix(at))
            }
        }
        return String(chars)
    }

    // MARK: XML

    static let xmlPieces = ["<", ">", "&", "&amp;", "&#0;", "&#xD800;", "&#x1F600;", "\"", "'", "=", "/>", "</Record>", "<Record>",
                            "<!--", "-->", "<![CDATA[", "]]>", "<?x?>", "\u{0}", " a=\"1\"", " type=\"x\"", "2019-13-45 25:61:61 +9999",
                            "NaN", "1e309", "-", "mmol<", "HKQuantityTypeIdentifierBodyMass"]

    mutating func xmlDocument() -> [UInt8] {
        var bytes = Array(SmallExport.xml.utf8)
        for _ in 0..<int(1..<4) {
            let at = int(0..<bytes.count)
            switch int(0..<6) {
            case 0: bytes[at] ^= UInt8(1 << int(0..<8))
            case 1: bytes.insert(contentsOf: Array(pick(Self.xmlPieces).utf8), at: at)
            case 2: bytes.insert(pick([0x80, 0xC0, 0xC3, 0xED, 0xF4, 0xFF] as [UInt8]), at: at)
            case 3: bytes.removeSubrange(at..<min(bytes.count, at + int(1..<40)))
            case 4: bytes.removeSubrange(at...)
            default:
                // Replace an attribute value (the text between a '="' and the next '"').
                if let q = bytes[at...].firstIndex(of: 0x22), let e = bytes[(q + 1)...].firstIndex(of: 0x22) {
                    bytes.replaceSubrange((q + 1)..<e, with: Array(pick(Self.xmlPieces + Self.validUnits + Self.validDates).utf8))
                }
            }
            if bytes.isEmpty { bytes = Array(SmallExport.xml.utf8) }
        }
        return bytes
    }

    /// Runs `cases` of each kind but XML, and `xmlCases` XML documents (written under `folder`).
    mutating func run(cases: Int, xmlCases: Int, folder: String) {
        for _ in 0..<cases {
            checkLine(jsonLine())
            checkUnit(unitString())
            checkDate(dateString())
        }
        for _ in 0..<xmlCases { checkXML(xmlDocument(), in: folder) }
    }

    /// The tally as sorted lines.
    var report: String { tally.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "\n") }
}
