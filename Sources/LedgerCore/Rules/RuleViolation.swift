import Foundation
import HealthModel

/// An event the ledger's rules do not allow at its point in the log. The store
/// refuses the call that would append it; `verify` reports it in a log.
///
/// Every description ends with the FORMAT.md rule it breaks (`… [E3]`, `ruleID`).
/// The cases several rules share (a missing object, a denied permission, an empty
/// call, …) carry the rule of the check that threw them; the default is the rule
/// they belong to most often.
public enum RuleViolation: Error, Hashable, Sendable, CustomStringConvertible {
    /// The app ordinal or bundle identifier is not registered.
    case appNotRegistered(String, rule: String = "E1")
    /// A registration whose ordinal is not the next one (or the app's own, for an update).
    case registrationOutOfOrder(bundleIdentifier: String, ordinal: AppOrdinal, expected: AppOrdinal)
    /// HealthKit's errorAuthorizationNotDetermined: the owner never answered for this app and type.
    case authorizationNotDetermined(app: String, type: String, rule: String = "E2")
    /// HealthKit's errorAuthorizationDenied: the owner denied (or revoked) sharing.
    case authorizationDenied(app: String, type: String, rule: String = "E2")
    /// A type that cannot be shared (characteristics) or requested at all (correlations).
    case typeNotAuthorizable(type: String, reason: String)
    /// A UUID already stored (or stored and deleted: UUIDs are never reused).
    case duplicateUUID(UUID)
    /// No stored object with this UUID (or it is already deleted).
    case objectNotFound(UUID, rule: String = "E5")
    /// An app deleting an object another source saved.
    case notOwnerOfObject(uuid: UUID, app: String, rule: String = "E5")
    /// A sync identifier already stored with the same or a higher version.
    case syncVersionNotNewer(syncIdentifier: String, stored: Int64, given: Int64)
    /// One save holds two objects with the same sync identifier: which would replace
    /// which is undefined, so the save is refused.
    case syncIdentifierRepeated(syncIdentifier: String)
    /// A save whose sync identifier is stored for the app with another type: a
    /// replacement must keep the type (HealthKit matches type and source).
    case syncReplacementTypeMismatch(syncIdentifier: String, stored: String, given: String)
    /// A save whose recorded replacement does not match the sync identifier's object.
    case replacementMismatch(uuid: UUID, expected: UUID?, recorded: UUID?)
    /// Something only the owner may do (set characteristics, decide authorization).
    case ownerOnly(action: String)
    /// A deletion's tombstone that does not carry the object's sync identity.
    case tombstoneMismatch(UUID, rule: String = "E5")
    /// A save or delete with nothing in it.
    case emptyCall(String, rule: String = "E7")
    /// An association HealthKit refuses: the target is not a workout, a workout is
    /// associated with a workout, or a sample is listed twice.
    case invalidAssociation(UUID, String)
    /// A workout activity HealthKit refuses (the UUID is the activity's): outside its
    /// workout's interval, overlapping another of the workout's activities, a UUID
    /// already used by an activity, or a target that is not a workout.
    case invalidWorkoutActivity(UUID, String)
    /// An `importStarted` whose id is already used, or an `importFinished` for an
    /// import that never started or already finished.
    case importMismatch(UUID, String, rule: String = "E7")
    /// A command of a group whose events would take more than the log's limit (a
    /// record's payload, or the group's batch): left out of the group, which goes on.
    case tooLarge(bytes: Int, limit: Int)
    /// A source priority listing a source twice, an empty or over-long identifier, or
    /// more than `SourcePriority.maxSources` sources.
    case invalidSourcePriority(String)
    /// An `absentFromExport` removes what no import brought (a sample of a source that
    /// is not imported, a correlation's member on its own, a day without a summary).
    case notBroughtByImport(String)
    /// Something only an import does (rule E13, checked on append): an
    /// app named `export:…` registered or renamed, an app marked imported, a decision on
    /// an imported basis, or an imported source acting, outside an import transaction.
    case reservedForImports(String)
    /// A new app's bundle identifier that is not HealthKit's kind (rule E14, since issue
    /// 28, checked on append): a character other than `A–Z a–z 0–9 . -`, or more than
    /// 255 bytes. The string says which.
    case invalidBundleIdentifier(String, String)
    /// A credential refused (rule E15): an id already issued, a subject that is not the
    /// owner or a registered app, an imported source, an over-long name; a
    /// revocation of an unknown or already revoked credential.
    case invalidCredential(String)
    /// An erasure naming a sample that is live where it is folded (rule E16: replay
    /// never folds what an erasure erased, so one that is live was never erased by it).
    case erasedSampleLive(UUID)
    /// An event that only begins a ledger, elsewhere (rule E17: `encryptedFrom`).
    case notFirst(String)
    /// A check needed the UUID of a sample restored from a snapshot, and the log did not
    /// give it where the index says (rule S11: the record at that place is unreadable, or
    /// holds another sample). The event is neither allowed nor refused by the rules: the
    /// ledger's log or snapshot is damaged.
    case sampleUnreadable(slot: UInt32, reason: String)

    public var description: String { "\(text) [\(ruleID)]" }

    /// The FORMAT.md rule the event breaks ("Rules": E1–E14; `tooLarge` is the log's R2/B5).
    public var ruleID: String {
        switch self {
        case .appNotRegistered(_, let rule), .authorizationNotDetermined(_, _, let rule), .authorizationDenied(_, _, let rule),
             .objectNotFound(_, let rule), .notOwnerOfObject(_, _, let rule), .tombstoneMismatch(_, let rule),
             .emptyCall(_, let rule), .importMismatch(_, _, let rule):
            rule
        case .registrationOutOfOrder: "E1"
        case .duplicateUUID: "E3"
        case .erasedSampleLive: "E16"
        case .notFirst: "E17"
        case .sampleUnreadable: "S11"
        case .syncVersionNotNewer, .syncIdentifierRepeated, .syncReplacementTypeMismatch, .replacementMismatch: "E4"
        case .typeNotAuthorizable, .ownerOnly: "E6"
        case .invalidSourcePriority: "E8"
        case .notBroughtByImport: "E9"
        case .invalidWorkoutActivity: "E10"
        case .invalidAssociation: "E12"
        case .reservedForImports: "E13"
        case .invalidBundleIdentifier: "E14"
        case .invalidCredential: "E15"
        case .tooLarge: "R2/B5"
        }
    }

    /// The description without its rule ID.
    private var text: String {
        switch self {
        case .appNotRegistered(let app, _): "appNotRegistered: \(app) is not registered"
        case .invalidAssociation(let u, let reason): "invalidAssociation: \(u.uuidString) \(reason)"
        case .invalidWorkoutActivity(let u, let reason): "invalidWorkoutActivity: \(u.uuidString) \(reason)"
        case .registrationOutOfOrder(let b, let o, let e): "registrationOutOfOrder: \(b) registered as app #\(o), expected #\(e)"
        case .authorizationNotDetermined(let app, let type, _): "authorizationNotDetermined: \(app) has no answer for sharing \(type)"
        case .authorizationDenied(let app, let type, _): "authorizationDenied: \(app) may not share \(type)"
        case .typeNotAuthorizable(let type, let reason): "typeNotAuthorizable: \(type): \(reason)"
        case .duplicateUUID(let u): "duplicateUUID: \(u.uuidString) is already stored"
        case .objectNotFound(let u, _): "objectNotFound: no stored object \(u.uuidString)"
        case .notOwnerOfObject(let u, let app, _): "notOwnerOfObject: \(app) did not save \(u.uuidString)"
        case .syncVersionNotNewer(let id, let stored, let given): "syncVersionNotNewer: \(id) is stored at version \(stored); \(given) does not replace it"
        case .syncIdentifierRepeated(let id): "syncIdentifierRepeated: one save holds \(id) twice"
        case .syncReplacementTypeMismatch(let id, let stored, let given): "syncReplacementTypeMismatch: \(id) is stored as \(stored); a \(given) sample does not replace it"
        case .replacementMismatch(let u, let e, let r): "replacementMismatch: \(u.uuidString) should replace \(e?.uuidString ?? "nothing") but records \(r?.uuidString ?? "nothing")"
        case .notBroughtByImport(let what): "notBroughtByImport: \(what)"
        case .ownerOnly(let action): "ownerOnly: only the ledger's owner may \(action)"
        case .tombstoneMismatch(let u, _): "tombstoneMismatch: the tombstone of \(u.uuidString) does not carry its sync identity"
        case .emptyCall(let what, _): "emptyCall: \(what) with nothing in it"
        case .importMismatch(let id, let why, _): "importMismatch: import \(id.uuidString) \(why)"
        case .tooLarge(let bytes, let limit): "tooLarge: \(bytes) bytes exceeds the limit of \(limit) bytes"
        case .invalidSourcePriority(let why): "invalidSourcePriority: \(why)"
        case .reservedForImports(let what): "reservedForImports: \(what)"
        case .invalidBundleIdentifier(let bundle, let why): "invalidBundleIdentifier: '\(bundle)' \(why)"
        case .invalidCredential(let why): "invalidCredential: \(why)"
        case .erasedSampleLive(let u): "erasedSampleLive: the erasure names \(u.uuidString), which is live"
        case .notFirst(let kind): "notFirst: \(kind) only begins a ledger (its first event)"
        case .sampleUnreadable(let slot, let reason): "sampleUnreadable: the UUID of sample slot \(slot) cannot be read from the log: \(reason)"
        }
    }

    /// The case name, for scripts and exit-code mapping.
    public var code: String { String(description.prefix { $0 != ":" }) }
}
