import HealthModel

/// Projection: the registered apps, by ordinal and by bundle identifier.
package struct AppRegistry: Sendable, Equatable {
    /// Registrations in ordinal order (ordinal n at index n − 1).
    package private(set) var apps: [AppRegistration] = []
    private var byBundle: [String: AppOrdinal] = [:]

    package init() {}

    /// The ordinal of a registered bundle identifier.
    package func ordinal(of bundleIdentifier: String) -> AppOrdinal? { byBundle[bundleIdentifier] }

    /// The registration of an ordinal.
    package func registration(_ ordinal: AppOrdinal) -> AppRegistration? {
        ordinal >= 1 && Int(ordinal) <= apps.count ? apps[Int(ordinal) - 1] : nil
    }

    /// Whether an ordinal is registered.
    package func isRegistered(_ ordinal: AppOrdinal) -> Bool { ordinal >= 1 && Int(ordinal) <= apps.count }

    /// The ordinal the next new app gets.
    package var nextOrdinal: AppOrdinal { AppOrdinal(apps.count + 1) }

    /// The source stamped on samples an app saved.
    package func source(_ ordinal: AppOrdinal) -> Source? {
        registration(ordinal).map { Source(bundleIdentifier: $0.bundleIdentifier, name: $0.name) }
    }

    /// A name for messages: the bundle identifier, or `app#n` when unknown.
    package func label(_ ordinal: AppOrdinal) -> String { registration(ordinal)?.bundleIdentifier ?? "app#\(ordinal)" }

    /// Records a registration read from the log (tools that list events without
    /// replaying them use it to name apps).
    package mutating func register(_ ordinal: AppOrdinal, _ registration: AppRegistration) {
        guard ordinal >= 1, Int(ordinal) <= apps.count + 1 else { return }
        apply(ordinal, registration)
    }

    mutating func apply(_ ordinal: AppOrdinal, _ registration: AppRegistration) {
        if Int(ordinal) <= apps.count {
            apps[Int(ordinal) - 1] = registration
        } else {
            precondition(Int(ordinal) == apps.count + 1, "rules admit registrations in ordinal order")
            apps.append(registration)
        }
        byBundle[registration.bundleIdentifier] = ordinal
    }
}
