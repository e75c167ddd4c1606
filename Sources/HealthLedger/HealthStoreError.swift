import Foundation
import HealthModel
import LedgerCore

/// HKError's cases as a Swift enum, plus what HealthKit leaves to a crash.
public enum HealthStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// HealthKit's errorHealthDataUnavailable: no usable ledger at the path
    /// (missing, unreadable, not writable, or not a ledger). The tutorial's
    /// `notAvailableOnDevice`.
    case notAvailableOnDevice(path: String, reason: String)
    /// The app lacks the purpose string HealthKit requires for the request
    /// (NSHealthShareUsageDescription to read, NSHealthUpdateUsageDescription to share).
    /// HealthKit crashes the app here; we say why.
    case missingUsageDescription(app: String, missing: String)
    /// HealthKit's errorAuthorizationNotDetermined: the owner never answered.
    case authorizationNotDetermined(type: String)
    /// HealthKit's errorAuthorizationDenied.
    case authorizationDenied(type: String)
    /// HealthKit's errorInvalidArgument: a type that cannot be requested or shared this
    /// way, a UUID already stored, an empty call, a sync version that is not newer.
    case invalidArgument(String)
    /// No stored object with this UUID (or it is already deleted).
    case objectNotFound(UUID)
    /// An app deleting an object another source saved: HealthKit's
    /// errorAuthorizationDenied (its code is `authorizationDenied`; the message says why).
    case notOwner(UUID)
    /// HealthKit's errorNoData for a characteristic: not set, or not readable by this
    /// app (the two look the same, as in HealthKit).
    case noData(characteristic: String)
    /// Something only the ledger's owner may do.
    case ownerOnly(String)
    /// The owner answering for a type the app never asked to share or read
    /// (HealthKit's Settings lists only requested types).
    case notRequested(app: String, type: String, permission: String)
    /// Refused by another of the ledger's rules (a UUID already stored, a sync
    /// version that is not newer, a type that cannot be authorized): HealthKit's
    /// errorInvalidArgument, with the rule that says why.
    case refused(RuleViolation)

    public var description: String {
        switch self {
        case .notAvailableOnDevice(let path, let reason): "notAvailableOnDevice: health data cannot be stored at \(path): \(reason)"
        case .missingUsageDescription(let app, let missing): "missingUsageDescription: \(app) has no \(missing) purpose string"
        case .authorizationNotDetermined(let type): "authorizationNotDetermined: sharing \(type) was never answered"
        case .authorizationDenied(let type): "authorizationDenied: sharing \(type) is not allowed"
        case .invalidArgument(let why): "invalidArgument: \(why)"
        case .objectNotFound(let uuid): "objectNotFound: no stored object \(uuid.uuidString)"
        case .notOwner(let uuid): "authorizationDenied: this app did not save \(uuid.uuidString); only the app that saved an object may delete it"
        case .noData(let characteristic): "noData: \(characteristic) is not set or not readable"
        case .ownerOnly(let what): "ownerOnly: only the ledger's owner may \(what)"
        case .notRequested(let app, let type, let permission): "notRequested: \(app) never asked to \(permission) \(type); the owner answers only what an app asked for"
        case .refused(let rule): rule.description
        }
    }

    /// The case name (a refusal: the rule's), for scripts and exit-code mapping.
    public var code: String { String(description.prefix { $0 != ":" }) }

    /// HealthKit's error for a rule the ledger refused.
    /// The stores' one error for an app that is not registered: the rule's own
    /// refusal (E1, `appNotRegistered`), so that every door — an app's store, the
    /// owner's, the command line, the server — says it alike and classifies it as
    /// not found.
    static func notRegistered(_ bundle: String) -> HealthStoreError {
        .refused(.appNotRegistered(bundle))
    }

    static func from(_ v: RuleViolation) -> HealthStoreError {
        switch v {
        case .authorizationNotDetermined(_, let type, _): .authorizationNotDetermined(type: type)
        case .authorizationDenied(_, let type, _): .authorizationDenied(type: type)
        case .objectNotFound(let uuid, _): .objectNotFound(uuid)
        case .notOwnerOfObject(let uuid, _, _): .notOwner(uuid)
        case .ownerOnly(let action): .ownerOnly(action)
        default: .refused(v)
        }
    }
}

/// Runs `body` on the caller's actor, turning rule violations into HealthKit's errors.
@discardableResult
func mappingRules<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let v as RuleViolation {
        throw HealthStoreError.from(v)
    }
}

extension Ledger {
    /// `read(as:)` for the stores: an app that is not registered is their
    /// `invalidArgument`, as for every other call of theirs.
    nonisolated func storeRead<T: Sendable>(as viewer: Viewer, _ body: @Sendable (inout LedgerReadView) throws -> T) async throws -> T {
        do {
            return try await read(as: viewer, body)
        } catch RuleViolation.appNotRegistered(let bundle, _) {
            throw HealthStoreError.notRegistered(bundle)
        }
    }
}
