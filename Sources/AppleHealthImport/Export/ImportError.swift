/// Why an import did not happen. Each case says where; none leaves anything of the
/// import in the ledger (the ledger checks the whole export before it writes).
public enum ImportError: Error, Sendable, CustomStringConvertible {
    /// Nothing exists at the path.
    case notFound(path: String)
    /// The path is not a zip, an export XML or a folder holding one.
    case notAnExport(path: String, reason: String)
    /// The zip or folder holds more than one export XML (named, in order); importing
    /// one of them silently would leave the others out.
    case ambiguousExport(path: String, names: [String])
    /// The zip could not be read.
    case archive(ArchiveError)
    /// The XML is not well-formed (line and column inside the export XML).
    case malformedXML(file: String, XMLError)
    /// A value the export format requires to parse does not (a date, a number).
    case invalidValue(file: String, XMLError)
    /// This export (same XML content) is already in the ledger; `--again` imports it anyway.
    case alreadyImported(exportDate: String?, sequence: UInt64)
    /// An earlier import of this export stopped before it finished; `--again` imports it in full.
    case interrupted(exportDate: String?, sequence: UInt64)
    /// The ledger refused part of the import (a bug: the import checks first).
    case refused(String)

    public var description: String {
        switch self {
        case .notFound(let path): "notFound: \(path): no such file or folder"
        case .notAnExport(let path, let reason): "notAnExport: \(path): \(reason)"
        case .ambiguousExport(let path, let names):
            "ambiguousExport: \(path) holds \(names.count) export XMLs (\(names.joined(separator: ", "))); import one at a time (unzip and give its path)"
        case .archive(let e): "\(e)"
        case .malformedXML(let file, let e): "malformedXML: \(file): line \(e.line), column \(e.column): \(e.reason)"
        case .invalidValue(let file, let e): "invalidValue: \(file): line \(e.line), column \(e.column): \(e.reason)"
        case .alreadyImported(let date, let seq):
            "alreadyImported: this export (exported \(date ?? "?")) was imported at event #\(seq); pass --again to import it again"
        case .interrupted(let date, let seq):
            "interrupted: an import of this export (exported \(date ?? "?")) started at event #\(seq) and did not finish; pass --again to import it in full"
        case .refused(let why): "refused: \(why)"
        }
    }

    /// The case name, for scripts and exit codes.
    public var code: String { String(description.prefix { $0 != ":" }) }
}
