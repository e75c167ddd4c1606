import Foundation
import HealthModel

/// An object deleted after an anchor (HKDeletedObject).
public struct DeletedSample: Sendable, Hashable {
    public let uuid: UUID
    /// The deleted sample's type (nil for a raw record).
    public let type: ObjectType?
    /// For a sync-identified sample: its sync identifier and version.
    public let syncIdentifier: String?
    public let syncVersion: Int64?
    /// The object that replaced it through its sync identifier, if that is why it went.
    public let replacedBy: UUID?
    /// The sequence number of the `erased` event that took it, if that is why it went
    /// (an anchor issued before an erasure learns of it so).
    public let erasedAt: UInt64?

    public init(uuid: UUID, type: ObjectType?, syncIdentifier: String?, syncVersion: Int64?, replacedBy: UUID?,
                erasedAt: UInt64? = nil) {
        self.erasedAt = erasedAt
        self.uuid = uuid
        self.type = type
        self.syncIdentifier = syncIdentifier
        self.syncVersion = syncVersion
        self.replacedBy = replacedBy
    }
}

/// One change, in log order.
public enum Change: Sendable, Hashable {
    case added(Sample)
    case deleted(DeletedSample)
}

/// The answer of an anchored query: the changes in log order (`samples` and
/// `deletedObjects` split them as HealthKit does) and the anchor to pass next.
public struct ChangeSet: Sendable, Hashable {
    public let changes: [Change]
    public let newAnchor: ChangeAnchor
    /// Whether the limit cut the answer short (another query returns more).
    public let hasMore: Bool

    public var samples: [Sample] { changes.compactMap { if case .added(let s) = $0 { s } else { nil } } }
    public var deletedObjects: [DeletedSample] { changes.compactMap { if case .deleted(let d) = $0 { d } else { nil } } }
}
