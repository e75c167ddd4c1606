import Foundation
import HealthModel
import LedgerChecksums
import LedgerLog

/// What a replay shows of the projections at the point it stopped: the digest, the
/// profile, the latest sample of each type, authorization, counts and the source
/// orders in force (`healthledger replay`; the golden ledgers compare it byte for
/// byte once printed as JSON).
package struct ReplaySummary: Sendable {
    /// One app's permission for one type.
    package struct Permission: Sendable, Equatable {
        /// The app's bundle identifier (or `app#N` for a registration not in the log).
        package let app: String
        /// The type's code (an `ObjectType` code; one this build does not know stays a number).
        package let typeCode: UInt16
        package let permission: TypePermission
    }

    /// The last event folded (0: none).
    package let lastSequence: UInt64
    /// When the last event folded was recorded; nil for an empty ledger.
    package let lastRecordedAt: Date?
    /// The projections' digest (equal for equal logs, however replayed).
    package let digest: SHA256Digest
    package let profile: Profile
    /// The latest live sample of every type present, in type-code order, as the
    /// index answers at the replayed instant.
    package let latest: [Sample]
    /// Every permission asked for or answered, by app ordinal then type code.
    package let authorization: [Permission]
    /// Events of each kind (kinds with none are left out).
    package let eventCounts: [EventKind: UInt64]
    /// The owner's time zone, nil until one is set.
    package let ownerTimeZone: String?
    /// Samples saved, live or deleted, and deleted.
    package let samplesStored: Int, samplesDeleted: Int
    /// The owner's source orders, by type code.
    package let sourcePriorities: [(typeCode: UInt16, sources: [String])]
    /// The snapshot the replay started from, if any, and the events replayed on it.
    package let snapshot: String?, replayed: UInt64
    /// Snapshots skipped, and why.
    package let warnings: [String]
    /// The snapshot written for this replay (`writeSnapshot`), if any.
    package let writtenSnapshot: String?

    /// Replays the ledger in `fs` up to `limit` (from a snapshot unless
    /// `useSnapshots` is false) and summarizes it as of `instant` (nil: the time of
    /// its last event). `writeSnapshot` (the whole log only) writes a snapshot of the
    /// result.
    package static func replay(_ fs: any LogFileSystem, reader: LogReader, limit: ReplayLimit = .end,
                               useSnapshots: Bool = true, at instant: Date? = nil, writeSnapshot: Bool = false,
                               progress: ((ReplayProgress) -> Void)? = nil) throws -> ReplaySummary {
        let loaded = try StateLoader.load(fs, reader: reader, limit: limit, useSnapshots: useSnapshots, progress: progress)
        let state = loaded.state
        var fetcher = SampleFetcher(reader: reader)
        let profile = try state.profile(fetcher: &fetcher, at: instant)
        let bound = (instant ?? Date(timeIntervalSince1970: Double(state.lastRecordedAt) / 1e9)).timeIntervalSinceReferenceDate
        let latest = try state.samples.typeCodesPresent.compactMap { code in
            try state.samples.latest(typeCode: code, endingBy: bound).map { try fetcher.sample($0, in: state) }
        }
        var written: String?
        if writeSnapshot, let position = loaded.position {
            written = try SnapshotFile.write(state, at: position, ledgerId: reader.header.ledgerId, to: fs)
        }
        var authorization: [Permission] = []
        for app in state.authorization.permissions.keys.sorted() {
            for (code, permission) in state.authorization.permissions[app]!.sorted(by: { $0.key < $1.key }) {
                authorization.append(Permission(app: state.registry.label(app), typeCode: code, permission: permission))
            }
        }
        return ReplaySummary(
            lastSequence: state.lastSequence,
            lastRecordedAt: state.lastSequence == 0 ? nil : Date(timeIntervalSince1970: Double(state.lastRecordedAt) / 1e9),
            digest: state.digest(), profile: profile, latest: latest, authorization: authorization,
            eventCounts: Dictionary(uniqueKeysWithValues: state.eventCounts.compactMap { code, n in EventKind(rawValue: code).map { ($0, n) } }),
            ownerTimeZone: state.ownerTimeZone, samplesStored: state.samples.count, samplesDeleted: state.samples.deletedCount,
            sourcePriorities: state.statistics.priorities.keys.sorted().map { ($0, state.statistics.priority($0)) },
            snapshot: loaded.snapshot, replayed: loaded.replayed, warnings: loaded.warnings, writtenSnapshot: written)
    }
}
