import Foundation
import HealthModel
import LedgerCore
import LedgerLog

/// The audit timeline: registrations, requests, owner decisions, imports with their
/// counts, deletions, characteristic, time-zone and source-order changes, in log order with their
/// sequence numbers. Saves are not listed one by one (an import holds hundreds of
/// thousands): imports say what they added.
///
/// For an app (`app` non-nil) only the events about that app are listed — its
/// registration, its requests, its own deletions and the owner's *sharing* answers —
/// and never a read answer: as in HealthKit, an app is not told whether it may read.
public enum AuditTimeline {
    /// The entries (the newest `limit` of them) and how many older ones were left out.
    package static func read(_ reader: LogReader, for app: String?, limit: Int) throws -> ([HealthReportData.TimelineEntry], Int) {
        var registry = AppRegistry()
        var entries: [HealthReportData.TimelineEntry] = []
        var omitted = 0
        var problem: Error?
        let erasures = try ErasureIndex.read(reader)
        try reader.forEachRecord { record in
            guard let kind = EventKind(rawValue: record.kind), kind != .samplesSaved, kind != .activitySummariesRecorded,
                  kind != .exportElementsKept else { return true }
            let event: Event
            do {
                // A record an erasure took is told as replay folds it: its replacement, or not at all.
                guard let folded = try erasures.event(of: record, source: registry.source) else { return true }
                event = folded
            } catch {
                problem = ReplayError.undecodable(sequence: record.sequence, offset: record.offset, error as? EventDecodingError ?? .truncated(offset: 0))
                return false
            }
            if case .appRegistered(let o, let r) = event { registry.register(o, r) }
            let at = Date(timeIntervalSince1970: Double(record.recordedAt) / 1e9)
            guard let entry = describe(event, registry, forApp: app) else { return true }
            entries.append(HealthReportData.TimelineEntry(sequence: record.sequence, recordedAt: at, app: entry.app,
                                                          actor: entry.actor, kind: kind.name, what: entry.what))
            if entries.count > 2 * max(limit, 1) {
                let drop = entries.count - limit
                entries.removeFirst(drop)
                omitted += drop
            }
            return true
        }
        if let problem { throw problem }
        if entries.count > limit {
            omitted += entries.count - limit
            entries.removeFirst(entries.count - limit)
        }
        return (entries, omitted)
    }

    static func describe(_ event: Event, _ registry: AppRegistry, forApp app: String?) -> (app: String?, actor: String, what: String)? {
        func bundle(_ o: AppOrdinal) -> String { registry.label(o) }
        func names(_ types: [ObjectType]) -> String { types.map(\.shortName).sorted().joined(separator: ", ") }
        switch event {
        case .appRegistered(let o, let r):
            guard app == nil || app == bundle(o) else { return nil }
            return (bundle(o), bundle(o), "registered as “\(r.name)”" + (r.imported ? " (a source of imported data)" : ""))
        case .authorizationRequested(let o, let share, let read):
            guard app == nil || app == bundle(o) else { return nil }
            let parts = [share.isEmpty ? nil : "to share \(names(share))", read.isEmpty ? nil : "to read \(names(read))"].compactMap { $0 }
            return (bundle(o), bundle(o), "asked " + parts.joined(separator: "; "))
        case .authorizationDecided(let d):
            guard app == nil || app == bundle(d.app) else { return nil }
            var parts: [String] = []
            if let s = d.share { parts.append(s == .granted ? "granted sharing" : "denied sharing") }
            if app == nil, let r = d.read { parts.append(r == .granted ? "granted reading" : "denied reading") }
            guard !parts.isEmpty else { return nil }
            return (bundle(d.app), d.basis == .imported ? "import" : "owner",
                    parts.joined(separator: ", ") + " \(d.type.shortName) for \(bundle(d.app))" + (d.basis == .imported ? " (imported data)" : ""))
        case .characteristicSet(let v):
            guard app == nil else { return nil }
            return (nil, "owner", "set \(v.type.shortName)")
        case .characteristicCleared(let t):
            guard app == nil else { return nil }
            return (nil, "owner", "cleared \(t.shortName)")
        case .samplesDeleted(let actor, let objects, let reason):
            let who: String? = { if case .app(let o) = actor { return bundle(o) } else { return nil } }()
            guard app == nil || (who != nil && app == who) else { return nil }
            return (who, who ?? "owner", "deleted \(objects.count) object\(objects.count == 1 ? "" : "s")" + (reason.map { " (\($0))" } ?? ""))
        case .importStarted(let s):
            guard app == nil else { return nil }
            return (nil, "owner", "import of \(s.sourcePath) began" + (s.exportDate.map { " (export of \($0))" } ?? "") + (s.again ? ", again" : ""))
        case .importFinished(let f):
            guard app == nil else { return nil }
            return (nil, "owner", "import finished: " + f.counts.map { "\($0.name) \($0.value)" }.joined(separator: ", "))
        case .importAborted(let a):
            guard app == nil else { return nil }
            return (nil, "owner", "import aborted, none of it applied: \(a.reason)")
        case .ownerTimeZoneSet(let zone):
            guard app == nil else { return nil }
            return (nil, "owner", "time zone set to \(zone)")
        case .sourcePrioritySet(let type, let sources):
            guard app == nil else { return nil }
            return (nil, "owner", sources.isEmpty ? "source order for \(type.shortName) back to the default"
                                                  : "source order for \(type.shortName): \(sources.joined(separator: " › "))")
        case .preferredUnitSet(let type, let unit):
            guard app == nil else { return nil }
            return (nil, "owner", unit.map { "preferred unit of \(type.shortName): \($0.canonicalString)" }
                                  ?? "preferred unit of \(type.shortName) back to the locale's")
        case .samplesAssociated(let o, let workout, let samples):
            guard app == nil || app == bundle(o) else { return nil }
            return (bundle(o), bundle(o), "added \(samples.count) sample\(samples.count == 1 ? "" : "s") to workout \(workout.uuidString)")
        case .workoutActivitiesAdded(let actor, let workout, let activities):
            let who: String? = { if case .app(let o) = actor { return bundle(o) } else { return nil } }()
            guard app == nil || (who != nil && app == who) else { return nil }
            return (who, who ?? "owner", "added \(activities.count) activit\(activities.count == 1 ? "y" : "ies") to workout \(workout.uuidString)")
        case .absentFromExport(let absence):
            guard app == nil else { return nil }
            let days = absence.days.isEmpty ? "" : " and \(absence.days.count) activity summar\(absence.days.count == 1 ? "y" : "ies")"
            return (nil, "import", "removed \(absence.objects.count) object\(absence.objects.count == 1 ? "" : "s")\(days) absent from the export"
                                   + (absence.exportDate.map { " dated \($0)" } ?? ""))
        case .credentialIssued(let c):
            let subject: String? = { if case .app(let o) = c.subject { return bundle(o) } else { return nil } }()
            guard app == nil || (subject != nil && app == subject) else { return nil }
            return (subject, "owner", "issued credential \(c.id) to \(subject ?? "the owner")" + (c.name.map { " (\($0))" } ?? ""))
        case .credentialRevoked(let id, let reason):
            guard app == nil else { return nil }
            return (nil, "owner", "revoked credential \(id)" + (reason.map { " (\($0))" } ?? ""))
        case .encryptedFrom(let origin):
            guard app == nil else { return nil }
            return (nil, "owner", "began as an encrypted copy of ledger \(origin.ledgerId.uuidString) (\(origin.events) events)")
        case .erased(let e):
            guard app == nil else { return nil }
            return (nil, "owner", "erased \(e.scope): \(e.liveAtErasure) sample\(e.liveAtErasure == 1 ? "" : "s"), reason: \(e.reason)")
        case .samplesSaved, .activitySummariesRecorded, .exportElementsKept:
            return nil
        }
    }
}
