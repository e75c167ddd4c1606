import HealthModel

/// HealthKit's sharing status (HKAuthorizationStatus), with its raw values.
public enum SharingStatus: Int, Hashable, Sendable {
    case notDetermined = 0
    case sharingDenied = 1
    case sharingAuthorized = 2

    /// `notDetermined`, …
    public var name: String { String(describing: self) }
}

/// One app's permissions for one type.
public struct TypePermission: Hashable, Sendable {
    /// Sharing (write) status: what `authorizationStatus(for:)` reveals.
    public var share: SharingStatus = .notDetermined
    /// Read permission: nil while never answered. Never revealed to the app.
    public var read: Bool?
    /// The app asked to share / to read this type.
    public var requestedShare = false
    public var requestedRead = false
    /// Whether the last decision was the owner's or an import's.
    package var basis: DecisionBasis = .owner

    /// Whether the app may read every source's samples of the type.
    public var canRead: Bool { read == true }
}

/// Projection: per app, per type, the permissions in force.
package struct AuthorizationProjection: Sendable, Equatable {
    package static func == (a: Self, b: Self) -> Bool { a.permissions == b.permissions }

    /// app → type code → permission.
    package private(set) var permissions: [AppOrdinal: [UInt16: TypePermission]] = [:]
    /// The sharing status again, flat (app − 1) × codeLimit + code, for the rules'
    /// per-sample check (an array read instead of two hash lookups).
    private var shareTable: [UInt8] = []
    private static let codeLimit = SampleIndex.typeCodeLimit

    package init() {}

    /// The sharing status in force for an app and a type code.
    @inline(__always)
    func shareStatus(app: AppOrdinal, code: UInt16) -> SharingStatus {
        let i = (Int(app) - 1) * Self.codeLimit + Int(code)
        guard app >= 1, Int(code) < Self.codeLimit, i < shareTable.count else { return .notDetermined }
        return SharingStatus(rawValue: Int(shareTable[i])) ?? .notDetermined
    }

    private mutating func storeShare(app: AppOrdinal, code: UInt16, _ status: SharingStatus) {
        guard app >= 1, Int(code) < Self.codeLimit else { return }
        let i = (Int(app) - 1) * Self.codeLimit + Int(code)
        if i >= shareTable.count { shareTable.append(contentsOf: [UInt8](repeating: 0, count: (i / Self.codeLimit + 1) * Self.codeLimit - shareTable.count)) }
        shareTable[i] = UInt8(status.rawValue)
    }

    /// The permission in force (all defaults when the app never asked and was never answered).
    package func permission(app: AppOrdinal, type: ObjectType) -> TypePermission {
        permissions[app]?[type.code] ?? TypePermission()
    }

    func permission(app: AppOrdinal, code: UInt16) -> TypePermission {
        permissions[app]?[code] ?? TypePermission()
    }

    mutating func request(app: AppOrdinal, share: [ObjectType], read: [ObjectType]) {
        for t in share { permissions[app, default: [:]][t.code, default: TypePermission()].requestedShare = true }
        for t in read { permissions[app, default: [:]][t.code, default: TypePermission()].requestedRead = true }
    }

    mutating func set(app: AppOrdinal, code: UInt16, _ permission: TypePermission) {
        permissions[app, default: [:]][code] = permission
        storeShare(app: app, code: code, permission.share)
    }

    mutating func decide(_ d: AuthorizationDecision) {
        var p = permission(app: d.app, type: d.type)
        if let share = d.share { p.share = share == .granted ? .sharingAuthorized : .sharingDenied }
        if let read = d.read { p.read = read == .granted }
        p.basis = d.basis
        permissions[d.app, default: [:]][d.type.code] = p
        storeShare(app: d.app, code: d.type.code, p.share)
    }
}
