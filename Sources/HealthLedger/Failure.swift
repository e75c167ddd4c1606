import Foundation
import HealthModel
import LedgerCore
import LedgerLog

/// What kind of failure an error is, the same for every front end: the command
/// line turns it into an exit status, the server into an HTTP status. One table,
/// so that the two never disagree about what an error means.
public enum FailureKind: String, Sendable, CaseIterable {
    /// The request itself is malformed (an option, a parameter): CLI 2, HTTP 400.
    case usage
    /// A value is not acceptable (unit, type, number, date): CLI 3, HTTP 422.
    case invalidInput
    /// What was named does not exist: CLI 4, HTTP 404.
    case notFound
    /// The rules refuse it: permission (HTTP 403) …
    case forbidden
    /// … or a conflict with what the ledger holds (a UUID stored, a sync version not
    /// newer, a credential revoked twice): CLI 5 for both, HTTP 409.
    case conflict
    /// The ledger or a derived file is damaged: CLI 6, HTTP 503.
    case damaged
    /// Another writer holds the ledger: CLI 7, HTTP 503.
    case locked
    /// Anything else (I/O): CLI 1, HTTP 500.
    case failure

    /// The command line's exit status.
    public var exitStatus: Int32 {
        switch self {
        case .failure: 1
        case .usage: 2
        case .invalidInput: 3
        case .notFound: 4
        case .forbidden, .conflict: 5
        case .damaged: 6
        case .locked: 7
        }
    }

    /// The HTTP status.
    public var httpStatus: Int {
        switch self {
        case .usage: 400
        case .invalidInput: 422
        case .notFound: 404
        case .forbidden: 403
        case .conflict: 409
        case .damaged, .locked: 503
        case .failure: 500
        }
    }
}

/// An error as every front end reports it: its kind, its one-line description (which
/// ends with the rule it breaks, where there is one), and that rule's ID.
public struct Failure: Sendable {
    public let kind: FailureKind
    public let message: String
    /// `E3`, `S8`, … when a rule of events/FORMAT.md says why.
    public let rule: String?
    /// The error's code (`duplicateUUID`, `authorizationDenied`, …).
    public let code: String

    public init(kind: FailureKind, message: String, rule: String? = nil, code: String? = nil) {
        self.kind = kind
        self.message = message
        self.rule = rule
        self.code = code ?? String(message.prefix { $0 != ":" })
    }

    /// Classifies the store's and the engine's errors; nil for an error of another
    /// layer (the front end's own, an importer's), which the caller classifies.
    public init?(_ error: any Error) {
        switch error {
        case let e as HealthModelError:
            self.init(kind: .invalidInput, message: e.description)
        case let e as LogError:
            switch e {
            case .ledgerNotFound: self.init(kind: .notFound, message: e.description)
            case .ledgerLocked: self.init(kind: .locked, message: e.description)
            case .damaged, .notALedgerLog, .unsupportedFormatVersion: self.init(kind: .damaged, message: e.description)
            case .tooLarge: self.init(kind: .invalidInput, message: e.description)
            case .sealedRecordUnopened(_, let failure): self.init(kind: Failure.kind(of: failure), message: e.description)
            default: self.init(kind: .failure, message: e.description)
            }
        case let e as HealthStoreError:
            switch e {
            case .notAvailableOnDevice, .objectNotFound, .noData: self.init(kind: .notFound, message: e.description)
            case .invalidArgument: self.init(kind: .invalidInput, message: e.description)
            case .refused(let rule): self.init(Failure.of(rule))
            case .authorizationDenied, .authorizationNotDetermined, .notOwner, .ownerOnly, .notRequested, .missingUsageDescription:
                self.init(kind: .forbidden, message: e.description)
            }
        case let e as RuleViolation:
            self.init(Failure.of(e))
        case let e as SampleIndex.UUIDUnreadable:
            // A restored sample's UUID the log did not give (S11): the log's own error
            // when it has one (a damaged record reads as damaged, however it was met).
            if let cause = e.cause, let failure = Failure(cause) { self = failure } else {
                self.init(kind: .damaged, message: "damaged: \(e)", rule: "S11")
            }
        case let e as LedgerError:
            switch e {
            case .replayFailed(.undecodable(_, _, let decoding)) where Failure.sealFailure(decoding) != nil:
                self.init(kind: Failure.kind(of: Failure.sealFailure(decoding)!), message: e.description)
            case .replayFailed: self.init(kind: .damaged, message: e.description)
            case .keysRequired, .keyStore(_, usage: true): self.init(kind: .usage, message: e.description)
            case .erasureRefused(_, let notFound): self.init(kind: notFound ? .notFound : .usage, message: e.description)
            default: self.init(kind: .failure, message: e.description)
            }
        case let e as ReplayError:
            if case .undecodable(_, _, let decoding) = e, let failure = Failure.sealFailure(decoding) {
                self.init(kind: Failure.kind(of: failure), message: e.description)
            } else {
                self.init(kind: .damaged, message: "damaged: \(e)")
            }
        case let e as StatisticsError:
            self.init(kind: .invalidInput, message: e.description)
        case let e as StatisticsNotFinite:
            // A read failing on stored data (values too large to add up), not on its input.
            self.init(kind: .failure, message: e.description)
        case let e as ChangeFeedError:
            if case .malformedAnchor = e { self.init(kind: .invalidInput, message: e.description) } else { self.init(kind: .conflict, message: e.description) }
        case let e as EventDecodingError:
            if case .sealedRecordUnopened(let failure) = e {
                self.init(kind: Failure.kind(of: failure), message: e.description)
            } else {
                self.init(kind: .damaged, message: "damaged: \(e)", rule: e.ruleID)
            }
        case let e as SnapshotProblem:
            self.init(kind: .damaged, message: "damaged: \(e); it is derived data, now set aside: the next read rebuilds it from the log")
        case let e as QueryError:
            if case .invalidCursor = e { self.init(kind: .invalidInput, message: e.description) } else {
                self.init(kind: .damaged, message: "damaged: \(e)")
            }
        default:
            return nil
        }
    }

    private init(_ other: Failure) { self = other }

    /// A sealed record that could not be opened: no key given is the caller's to mend
    /// (usage), a destroyed key means erased (not found), a key store out of reach (a
    /// database connection) a failure to try again, anything else damage.
    static func kind(of failure: RecordSealFailure) -> FailureKind {
        switch failure.reason {
        case .noKeys, .keyStoreUnreadable(_, .ownersToMend): .usage
        case .keyDestroyed: .notFound
        case .keyStoreUnreadable(_, .unreachable): .failure
        case .keyUnknown, .authenticationFailed, .keyStoreUnreadable(_, .damaged): .damaged
        }
    }

    static func sealFailure(_ e: EventDecodingError) -> RecordSealFailure? {
        if case .sealedRecordUnopened(let f) = e { return f }
        return nil
    }

    /// A rule's refusal: permission, existence or conflict.
    static func of(_ v: RuleViolation) -> Failure {
        let kind: FailureKind = switch v {
        case .objectNotFound, .appNotRegistered: .notFound
        case .tooLarge, .invalidBundleIdentifier: .invalidInput
        case .sampleUnreadable: .damaged
        case .authorizationDenied, .authorizationNotDetermined, .notOwnerOfObject, .ownerOnly, .typeNotAuthorizable: .forbidden
        default: .conflict
        }
        return Failure(kind: kind, message: v.description, rule: v.ruleID, code: v.code)
    }
}
