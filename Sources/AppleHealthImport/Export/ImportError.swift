/// Why an import did not happen. Each case says where; none leaves anything of the
/// import in the ledger (the importer checks the whole export and the ledger's
/// earlier imports before it writes).
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
    /// The ledger holds an import of a newer export (dated `newer`, started at event
    /// `sequence`): merging this older one would remove what the newer one brought.
    /// `force` merges it anyway.
    case olderExport(exportDate: String?, newer: String, sequence: UInt64)
    /// The export's `<Me>` names another person than the ledger's earlier imports
    /// (date of birth or biological sex differ); `force` merges it anyway.
    case otherPerson(String)
    /// The export shares no record with what the ledger's earlier imports brought and
    /// still hold: merging it would remove all of that as absent from it (another
    /// person's export, whatever its `<Me>` says). `force` merges it anyway.
    case unrelatedExport(String)
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
        case .olderExport(let date, let newer, let seq):
            "olderExport: this export (exported \(date ?? "?")) is older than the one imported at event #\(seq) (exported \(newer)); merging it would remove what the newer export brought; pass --force to merge it anyway"
        case .otherPerson(let why):
            "otherPerson: \(why); pass --force to merge it anyway"
        case .unrelatedExport(let why):
            "unrelatedExport: \(why); pass --force to merge it anyway"
        case .refused(let why): "refused: \(why)"
        }
    }

    /// The case name, for scripts and exit codes.
    public var code: String { String(description.prefix { $0 != ":" }) }
}
