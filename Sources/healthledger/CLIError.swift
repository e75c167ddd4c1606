import AppleHealthImport
import HealthLedger
import LedgerCore
import LedgerLog
import HealthModel
#if HEALTHLEDGER_POSTGRES
import LedgerPostgres
#endif

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

/// Maps any error to an exit status and a one-line message for stderr.
func describe(_ error: Error) -> (status: Int32, message: String) {
    switch error {
    case let e as CLIError:
        return (e.status, e.message)
    case let e as Output.WriteFailed:
        return (ExitStatus.failure, e.description)
    case let e as InputError:
        if case .lineTooLong = e { return (ExitStatus.invalidInput, e.description) }
        return (ExitStatus.failure, e.description)
    case let e as HealthModelError:
        return (ExitStatus.invalidInput, e.description)
    case let e as LogError:
        switch e {
        case .ledgerNotFound: return (ExitStatus.notFound, e.description)
        case .ledgerLocked: return (ExitStatus.locked, e.description)
        case .damaged, .notALedgerLog, .unsupportedFormatVersion: return (ExitStatus.damaged, e.description)
        case .tooLarge: return (ExitStatus.invalidInput, e.description)
        default: return (ExitStatus.failure, e.description)
        }
    case let e as HealthStoreError:
        switch e {
        case .notAvailableOnDevice, .objectNotFound: return (ExitStatus.notFound, e.description)
        case .invalidArgument: return (ExitStatus.invalidInput, e.description)
        case .refused(let rule) where rule.code == "objectNotFound": return (ExitStatus.notFound, e.description)
        case .refused(.invalidBundleIdentifier): return (ExitStatus.invalidInput, e.description)
        default: return (ExitStatus.refused, e.description)
        }
    case let e as RuleViolation:
        switch e {
        case .tooLarge, .invalidBundleIdentifier: return (ExitStatus.invalidInput, e.description)
        default: break
        }
        return (e.code == "objectNotFound" ? ExitStatus.notFound : ExitStatus.refused, e.description)
    case let e as LedgerError:
        if case .replayFailed = e { return (ExitStatus.damaged, e.description) }
        return (ExitStatus.failure, e.description)
    case let e as ReplayError:
        return (ExitStatus.damaged, "damaged: \(e)")
    case let e as StatisticsError:
        return (ExitStatus.invalidInput, e.description)
    case let e as StatisticsNotFinite:
        return (ExitStatus.failure, e.description)  // a read failing on stored data, not on its input
    case let e as ChangeFeedError:
        if case .malformedAnchor = e { return (ExitStatus.invalidInput, e.description) }
        return (ExitStatus.refused, e.description)
    case let e as EventDecodingError:
        return (ExitStatus.damaged, "damaged: \(e)")
    case let e as SnapshotProblem:
        return (ExitStatus.damaged, "damaged: \(e); it is derived data, now set aside: the next read rebuilds it from the log")
    case let e as ImportError:
        switch e {
        case .notFound: return (ExitStatus.notFound, e.description)
        case .notAnExport, .ambiguousExport, .malformedXML, .invalidValue: return (ExitStatus.invalidInput, e.description)
        case .archive(let a):
            if case .io = a { return (ExitStatus.failure, e.description) }
            return (ExitStatus.invalidInput, e.description)
        case .olderExport, .otherPerson, .unrelatedExport, .refused: return (ExitStatus.refused, e.description)
        }
    case let e as ArchiveError:
        return (ExitStatus.invalidInput, e.description)
    #if HEALTHLEDGER_POSTGRES
    case let e as PostgresLocationError:
        return (ExitStatus.usage, e.description)
    #endif
    default:
        return (ExitStatus.failure, String(describing: error))
    }
}
