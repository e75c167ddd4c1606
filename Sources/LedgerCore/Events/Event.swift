import Foundation
import HealthModel

/// A registered app's number in the ledger: 1 for the first app registered, 2 for the
/// next, … Events name apps by ordinal (compact); the registry maps it to the bundle
/// identifier.
public typealias AppOrdinal = UInt32

/// Who caused an event: the ledger's owner (the person) or an app.
package enum ActorID: Hashable, Sendable, CustomStringConvertible {
    case owner
    case app(AppOrdinal)

    /// Encoded as a varint: 0 for the owner, the app's ordinal otherwise.
    var encoded: UInt64 {
        switch self {
        case .owner: 0
        case .app(let ordinal): UInt64(ordinal)
        }
    }

    init(encoded: UInt64) {
        self = encoded == 0 ? .owner : .app(AppOrdinal(truncatingIfNeeded: encoded))
    }

    /// `owner` or `app#3`.
    package var description: String {
        switch self {
        case .owner: "owner"
        case .app(let o): "app#\(o)"
        }
    }
}

/// An app as it registered: identity and the two purpose strings HealthKit requires
/// (NSHealthShareUsageDescription: why it reads; NSHealthUpdateUsageDescription: why
/// it writes).
public struct AppRegistration: Hashable, Sendable {
    public let bundleIdentifier: String
    public let name: String
    /// Why the app reads health data (HealthKit's "share" usage description).
    public let readPurpose: String?
    /// Why the app writes health data (HealthKit's "update" usage description).
    public let sharePurpose: String?
    /// A source that arrived through an import (its saves rest on an "imported"
    /// authorization rather than an owner's decision).
    public let imported: Bool

    public init(bundleIdentifier: String, name: String, readPurpose: String?, sharePurpose: String?, imported: Bool = false) {
        self.bundleIdentifier = bundleIdentifier
        self.name = name
        self.readPurpose = readPurpose
        self.sharePurpose = sharePurpose
        self.imported = imported
    }
}

/// An owner's answer.
public enum Answer: UInt8, Hashable, Sendable {
    case granted = 1
    case denied = 2
}

/// Why an authorization holds.
package enum DecisionBasis: UInt8, Hashable, Sendable {
    /// The owner answered.
    case owner = 0
    /// Recorded by an import for a source's own historical data.
    case imported = 1
}

/// The owner's answer for one app and one type. `nil` leaves that permission as it was.
package struct AuthorizationDecision: Hashable, Sendable {
    package let app: AppOrdinal
    package let type: ObjectType
    package let share: Answer?
    package let read: Answer?
    package let basis: DecisionBasis

    package init(app: AppOrdinal, type: ObjectType, share: Answer?, read: Answer?, basis: DecisionBasis = .owner) {
        self.app = app
        self.type = type
        self.share = share
        self.read = read
        self.basis = basis
    }
}

/// A sample as saved: the sample, and the UUID of the object it replaced through a
/// sync identifier with a higher sync version (decided when the save was appended).
package struct SavedSample: Hashable, Sendable {
    package let sample: Sample
    package let replaces: UUID?

    package init(_ sample: Sample, replaces: UUID? = nil) {
        self.sample = sample
        self.replaces = replaces
    }
}

/// A tombstone: what stays of a deleted object (HKDeletedObject), never purged.
package struct DeletedObject: Hashable, Sendable {
    package let uuid: UUID
    package let syncIdentifier: String?
    package let syncVersion: Int64?

    package init(uuid: UUID, syncIdentifier: String? = nil, syncVersion: Int64? = nil) {
        self.uuid = uuid
        self.syncIdentifier = syncIdentifier
        self.syncVersion = syncVersion
    }
}

/// Everything that happens in a ledger. Each event is one log record; the log's
/// sequence number and `recordedAt` stamp it.
package enum Event: Hashable, Sendable {
    /// An app registered (or updated its name and purpose strings). Actor: the app.
    case appRegistered(app: AppOrdinal, AppRegistration)
    /// An app asked for permissions. Actor: the app.
    case authorizationRequested(app: AppOrdinal, share: [ObjectType], read: [ObjectType])
    /// The owner answered for one app and type. Actor: the owner.
    case authorizationDecided(AuthorizationDecision)
    /// The owner set a characteristic. Actor: the owner.
    case characteristicSet(CharacteristicValue)
    /// The owner cleared a characteristic. Actor: the owner.
    case characteristicCleared(CharacteristicType)
    /// One save call: samples of any kind, all or nothing. Actor: the app.
    case samplesSaved(app: AppOrdinal, samples: [SavedSample])
    /// One delete call: tombstones, all or nothing. Actor: the owner or the app.
    case samplesDeleted(actor: ActorID, objects: [DeletedObject], reason: String?)
    /// Days of activity rings (an import brings them). Actor: the owner.
    case activitySummariesRecorded([ActivitySummary])
    /// An import of an Apple Health export began. Actor: the owner.
    case importStarted(ExportImportStart)
    /// An import finished, with its counts. Actor: the owner.
    case importFinished(ExportImportFinish)
    /// A transactional import stopped without finishing: none of its events is
    /// applied (kind 20, rule E11). Actor: the owner.
    case importAborted(ExportImportAbort)
    /// Elements of an export kept as written (no model of their own). Actor: the owner.
    case exportElementsKept([ExportElement])
    /// The owner's time zone (an IANA identifier, `Pacific/Honolulu`): age, "today"
    /// and day boundaries are counted in it. Actor: the owner.
    case ownerTimeZoneSet(String)
    /// The owner's order of sources for a quantity type (bundle identifiers, best
    /// first): where samples of several sources overlap, a cumulative sum counts the
    /// best-ranked one. An empty list returns to HealthKit's default order. Actor: the owner.
    case sourcePrioritySet(type: QuantityType, sources: [String])
    /// The owner's preferred unit for a quantity type (HealthKit's preferredUnits(for:)
    /// as the person chose it); `nil` goes back to the locale's unit. Actor: the owner.
    case preferredUnitSet(type: QuantityType, unit: HealthUnit?)
    /// Samples an app saved, associated with a workout it saved (HKHealthStore's
    /// `add(_:to:)`). Actor: the app.
    case samplesAssociated(app: AppOrdinal, workout: UUID, samples: [UUID])
    /// Segments added to a workout (HKWorkoutActivity, as HKWorkoutBuilder's
    /// `addWorkoutActivity` leaves them): each within the workout, none overlapping
    /// another of the workout's. Actor: the app that saved the workout, or the owner.
    case workoutActivitiesAdded(actor: ActorID, workout: UUID, activities: [WorkoutActivity])
    /// A newer export no longer holds what earlier imports brought: removed by the
    /// import that found it out (kind 21). Actor: the owner, through that import.
    case absentFromExport(ExportAbsence)
    /// The owner issued a bearer credential (its secret's hash only; kind 25, rule
    /// E15). Actor: the owner.
    case credentialIssued(CredentialIssue)
    /// The owner revoked a credential: from this event on it is refused (kind 26,
    /// rule E15). Actor: the owner.
    case credentialRevoked(id: CredentialID, reason: String?)
    /// The owner erased a scope by destroying its data keys (kind 27, issue 32): no
    /// content, only what replay needs to fold the log without those keys. Actor: the owner.
    case erased(Erasure)
    /// This ledger began as an encrypted copy of another (kind 28, issue 32; only as
    /// its first event, rule E17): which ledger, its chain head. Actor: the owner.
    case encryptedFrom(LedgerOrigin)

    /// Who caused the event.
    package var actor: ActorID {
        switch self {
        case .appRegistered(let app, _), .authorizationRequested(let app, _, _), .samplesSaved(let app, _),
             .samplesAssociated(let app, _, _): .app(app)
        case .authorizationDecided, .characteristicSet, .characteristicCleared, .activitySummariesRecorded,
             .importStarted, .importFinished, .importAborted, .exportElementsKept, .ownerTimeZoneSet, .sourcePrioritySet, .preferredUnitSet,
             .absentFromExport, .credentialIssued, .credentialRevoked, .erased, .encryptedFrom: .owner
        case .samplesDeleted(let actor, _, _), .workoutActivitiesAdded(let actor, _, _): actor
        }
    }

    /// The version of its kind this event is written in: the current one, but for a
    /// legacy import's start and finish (read from an older ledger), which keep
    /// version 1 so that their bytes, and the digest over them, never change.
    package var kindVersion: UInt16 {
        switch self {
        case .importStarted(let s): s.isTransaction ? 2 : 1
        case .importFinished(let f): f.contentSHA256 == nil ? 1 : 2
        case .erased(let e): e.kindVersion
        default: kind.currentVersion
        }
    }

    /// The event's kind.
    package var kind: EventKind {
        switch self {
        case .appRegistered: .appRegistered
        case .authorizationRequested: .authorizationRequested
        case .authorizationDecided: .authorizationDecided
        case .characteristicSet: .characteristicSet
        case .characteristicCleared: .characteristicCleared
        case .samplesSaved: .samplesSaved
        case .samplesDeleted: .samplesDeleted
        case .activitySummariesRecorded: .activitySummariesRecorded
        case .importStarted: .importStarted
        case .importFinished: .importFinished
        case .importAborted: .importAborted
        case .exportElementsKept: .exportElementsKept
        case .ownerTimeZoneSet: .ownerTimeZoneSet
        case .sourcePrioritySet: .sourcePrioritySet
        case .preferredUnitSet: .preferredUnitSet
        case .samplesAssociated: .samplesAssociated
        case .workoutActivitiesAdded: .workoutActivitiesAdded
        case .absentFromExport: .absentFromExport
        case .credentialIssued: .credentialIssued
        case .credentialRevoked: .credentialRevoked
        case .erased: .erased
        case .encryptedFrom: .encryptedFrom
        }
    }
}

/// Event kinds: the record `kind` field. Shipped numbers never change.
package enum EventKind: UInt16, Sendable, CaseIterable {
    case appRegistered = 1
    case authorizationRequested = 2
    case authorizationDecided = 3
    case characteristicSet = 4
    case characteristicCleared = 5
    case samplesSaved = 6
    case samplesDeleted = 7
    case activitySummariesRecorded = 8
    case importStarted = 9
    case importFinished = 10
    case exportElementsKept = 11
    case ownerTimeZoneSet = 12
    case sourcePrioritySet = 13
    case preferredUnitSet = 14
    case samplesAssociated = 15
    case workoutActivitiesAdded = 16
    // 17–19 and 22–24 are reserved.
    case importAborted = 20
    case absentFromExport = 21
    case credentialIssued = 25
    case credentialRevoked = 26
    case erased = 27
    case encryptedFrom = 28

    /// The newest version of the kind (`kindVersion`) this release reads and writes.
    /// Version 2 of `samplesSaved` added sample flags 64 (written UTC offsets) and 128
    /// (HRV beats) and an unrecognized sample's reason; version 2 of `importStarted`
    /// and `importFinished` made an import a transaction (the content hash moved to
    /// the finish); version 2 of `erased` added what the change feed had given of each
    /// erased sample. Version 1 of each is still read.
    package var currentVersion: UInt16 {
        switch self {
        case .samplesSaved, .importStarted, .importFinished, .erased: 2
        default: 1
        }
    }

    /// `appRegistered`, …
    package var name: String { String(describing: self) }
}

/// The ledger an encrypted copy was made from (`encrypt SRC DST`): its id, the chain
/// head and event count the copy reached, and when the copy was made. The copy's events
/// keep their times; this first event, at the time of the source's first, says when.
package struct LedgerOrigin: Hashable, Sendable {
    package let ledgerId: UUID
    /// The source's chain head after its last event copied (32 bytes).
    package let chainHead: [UInt8]
    package let events: UInt64
    /// When the copy was made (ns since 1970).
    package let copiedAt: Int64

    package init(ledgerId: UUID, chainHead: [UInt8], events: UInt64, copiedAt: Int64) {
        precondition(chainHead.count == 32, "a chain head is a SHA-256 digest")
        self.ledgerId = ledgerId
        self.chainHead = chainHead
        self.events = events
        self.copiedAt = copiedAt
    }
}

/// An event with what the log stamped on it.
package struct StoredEvent: Hashable, Sendable {
    package let sequence: UInt64
    /// Nanoseconds since the Unix epoch.
    package let recordedAt: Int64
    /// Byte offset of the record in the log.
    package let offset: UInt64
    package let event: Event

    package init(sequence: UInt64, recordedAt: Int64, offset: UInt64, event: Event) {
        self.sequence = sequence
        self.recordedAt = recordedAt
        self.offset = offset
        self.event = event
    }

    /// `recordedAt` as a date.
    package var recordedDate: Date { Date(timeIntervalSince1970: Double(recordedAt) / 1e9) }
}
