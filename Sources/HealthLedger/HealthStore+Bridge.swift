import Foundation
import HealthModel
import LedgerCore

extension HealthStore {
    /// Which of `uuids` this app has saved, live or deleted (a UUID is never reused,
    /// rule E3): what a bridge that derives UUIDs from content asks before it saves,
    /// so that a resend is "unchanged" rather than refused. Others' UUIDs are never
    /// reported.
    public func savedUUIDs(among uuids: [UUID]) async throws -> Set<UUID> {
        try await read { try $0.savedUUIDs(among: uuids) }
    }

    /// Saves what a bridge brought (Health Auto Export's pushes), all or nothing, as
    /// `save` does — and, unlike `save` (HealthKit's API has no such thing), records
    /// with no HealthKit type too, kept raw under this app (rule E2): the owner sees
    /// them (`query --owner --raw`); no app reads them.
    public func saveBridged(_ objects: [Sample]) async throws {
        guard !objects.isEmpty else { throw HealthStoreError.invalidArgument("save needs at least one object") }
        let known = objects.filter { if case .unrecognized = $0 { false } else { true } }
        if !known.isEmpty { try Self.checkSavable(known) }
        try await mappingRules {
            try await ledger.append(.save(bundleIdentifier: app.bundleIdentifier, samples: objects))
        }
    }
}
