import AppleHealthImport
import HealthLedger
import LedgerTools

/// A command's failure, with the exit status it maps to.
///
/// Exit statuses (documented in `healthledger --help` and the README):
/// 0 success · 1 I/O or other failure · 2 usage · 3 invalid input (unit, type, value)
/// · 4 not found · 5 refused by the rules (authorization, duplicate UUID, owner only)
/// · 6 damaged ledger · 7 ledger locked by another writer.
struct CLIError: Error {
    let status: Int32
    let message: String

    static func usage(_ message: String) -> CLIError { CLIError(status: ExitStatus.usage, message: "usage: " + message) }
    static func invalidInput(_ message: String) -> CLIError { CLIError(status: ExitStatus.invalidInput, message: message) }
    static func notFound(_ message: String) -> CLIError { CLIError(status: ExitStatus.notFound, message: message) }
}

/// The exit statuses, in one place.
enum ExitStatus {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
    static let invalidInput: Int32 = 3
    static let notFound: Int32 = 4
    static let refused: Int32 = 5
    static let damaged: Int32 = 6
    static let locked: Int32 = 7

    static let table = """
        Exit status: 0 success, 1 I/O or other failure, 2 usage, 3 invalid input
        (unit, type, value), 4 not found, 5 refused by the rules (authorization,
        duplicate UUID, owner only), 6 damaged ledger, 7 ledger locked by another writer.
        """
}

/// Maps any error to an exit status and a one-line message for stderr: the command
/// line's own errors and the importer's here, the rest as `Failure` classifies them
/// (the server's HTTP statuses come from the same table).
func describe(_ error: Error) -> (status: Int32, message: String) {
    switch error {
    case let e as CLIError:
        return (e.status, e.message)
    case let e as Output.WriteFailed:
        return (ExitStatus.failure, e.description)
    case let e as InputError:
        if case .lineTooLong = e { return (ExitStatus.invalidInput, e.description) }
        return (ExitStatus.failure, e.description)
    case let e as ImportError:
        switch e {
        case .notFound: return (ExitStatus.notFound, e.description)
        case .notAnExport, .ambiguousExport, .malformedXML, .invalidValue: return (ExitStatus.invalidInput, e.description)
        case .archive(let a):
            if case .io = a { return (ExitStatus.failure, e.description) }
            return (ExitStatus.invalidInput, e.description)
        case .olderExport, .otherPerson, .unrelatedExport, .refused: return (ExitStatus.refused, e.description)
        }
    case let e as ToolError:
        return (e.kind.exitStatus, e.description)
    case let e as LedgerLocationError:
        return (ExitStatus.usage, e.description)
    case let e as ArchiveError:
        return (ExitStatus.invalidInput, e.description)
    default:
        // The store's and the engine's errors: one table (`Failure`) for every front end.
        if let f = Failure(error) { return (f.kind.exitStatus, f.message) }
        return (ExitStatus.failure, String(describing: error))
    }
}
