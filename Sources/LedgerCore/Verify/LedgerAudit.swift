import Foundation
import HealthModel
import LedgerLog

/// `healthledger audit`: the history of a type or of one object — every event that
/// touched it, by whom, when, and the authorization in force at that moment.
package enum LedgerAudit {
    /// What to trace.
    package enum Subject: Sendable, Equatable {
        case type(ObjectType)
        case object(UUID)
        /// Records kept raw with this identifier as written (the owner's view).
        case raw(String)
    }

    /// One event in the history.
    package struct Entry: Sendable, Equatable {
        package let sequence: UInt64
        /// Nanoseconds since the epoch.
        package let recordedAt: Int64
        package let kind: EventKind
        /// `owner` or the app's bundle identifier.
        package let actor: String
        /// What the event did to the subject.
        package let what: String
        /// The acting app's permission for the type just before the event
        /// (`share sharingAuthorized, read granted (owner)`), nil for the owner.
        package let authorization: String?
        package var recordedDate: Date { Date(timeIntervalSince1970: Double(recordedAt) / 1e9) }
    }

    /// Replays the whole log and collects the subject's history.
    package static func history(_ reader: LogReader, of subject: Subject) throws -> [Entry] {
        var entries: [Entry] = []
        var state = LedgerState()
        var fetcher = SampleFetcher(reader: reader)
        _ = try Replayer.replay(reader, into: &state, from: reader.start, limit: .end, decodeFully: false, progress: nil,
                                onBatch: nil) { point, facts, before in
            guard let kind = EventKind(rawValue: point.kind) else { return }
            func permission(_ app: AppOrdinal, _ code: UInt16) -> String {
                let p = before.authorization.permission(app: app, code: code)
                let read = p.read.map { $0 ? "granted" : "denied" } ?? "notDetermined"
                return "share \(p.share.name), read \(read) (\(p.basis == .owner ? "owner" : "imported"))"
            }
            switch facts {
            case .samplesSaved(let app, let headers, _):
                for h in headers {
                    let what: String
                    switch subject {
                    case .object(let uuid) where h.uuid == uuid: what = "saved"
                    case .object(let uuid) where h.replaces == uuid: what = "replaced by \(h.uuid.uuidString) (higher sync version)"
                    case .type(let type) where type.code == h.typeCode: what = "saved \(h.uuid.uuidString)"
                    case .raw where h.typeCode == 0: what = "saved \(h.uuid.uuidString)"
                    default: continue
                    }
                    entries.append(Entry(sequence: point.sequence, recordedAt: point.recordedAt, kind: kind,
                                         actor: before.registry.label(app), what: what, authorization: permission(app, h.typeCode)))
                }
            case .other(let event):
                let actorApp: AppOrdinal? = { if case .app(let a) = event.actor { a } else { nil } }()
                switch (event, subject) {
                case (.samplesDeleted(_, let objects, let reason), _):
                    for o in objects {
                        // Folded from the log's start: every UUID is in memory, none read.
                        guard let slot = (try? before.samples.slot(of: o.uuid)) ?? nil else { continue }
                        let entry = before.samples.entry(slot)
                        let matches: Bool
                        switch subject {
                        case .object(let uuid): matches = uuid == o.uuid
                        case .type(let type): matches = type.code == entry.typeCode
                        case .raw: matches = entry.typeCode == 0
                        }
                        if matches {
                            entries.append(Entry(sequence: point.sequence, recordedAt: point.recordedAt, kind: .samplesDeleted,
                                                 actor: label(event.actor, before), what: "deleted \(o.uuid.uuidString)" + (reason.map { " (\($0))" } ?? ""),
                                                 authorization: actorApp.map { permission($0, entry.typeCode) }))
                        }
                    }
                case (.absentFromExport(let absence), _):
                    // The importer acts: the import is named, with the export it compared.
                    for o in absence.objects {
                        // Folded from the log's start: every UUID is in memory, none read.
                        guard let slot = (try? before.samples.slot(of: o.uuid)) ?? nil else { continue }
                        let entry = before.samples.entry(slot)
                        let matches: Bool
                        switch subject {
                        case .object(let uuid): matches = uuid == o.uuid
                        case .type(let type): matches = type.code == entry.typeCode
                        case .raw: matches = entry.typeCode == 0
                        }
                        if matches {
                            entries.append(Entry(sequence: point.sequence, recordedAt: point.recordedAt, kind: .absentFromExport,
                                                 actor: "import \(absence.importId.uuidString)",
                                                 what: "deleted \(o.uuid.uuidString) (\(absence.reason))", authorization: nil))
                        }
                    }
                case (.erased(let e), .object(let uuid)) where e.samples.contains(uuid):
                    entries.append(Entry(sequence: point.sequence, recordedAt: point.recordedAt, kind: .erased, actor: "owner",
                                         what: "erased (\(e.scope)), reason: \(e.reason)", authorization: nil))
                case (.erased(let e), .type(let type)) where e.scope == .type(code: type.code) || e.scope == .all:
                    entries.append(Entry(sequence: point.sequence, recordedAt: point.recordedAt, kind: .erased, actor: "owner",
                                         what: "erased \(e.scope), reason: \(e.reason)", authorization: nil))
                case (.authorizationRequested(let app, let share, let read), .type(let type)) where share.contains(type) || read.contains(type):
                    let asked = [share.contains(type) ? "share" : nil, read.contains(type) ? "read" : nil].compactMap { $0 }.joined(separator: " and ")
                    entries.append(Entry(sequence: point.sequence, recordedAt: point.recordedAt, kind: .authorizationRequested,
                                         actor: before.registry.label(app), what: "asked to \(asked) \(type.shortName)",
                                         authorization: permission(app, type.code)))
                case (.authorizationDecided(let d), .type(let type)) where d.type == type:
                    let share = d.share.map { $0 == .granted ? "granted sharing" : "denied sharing" }
                    let read = d.read.map { $0 == .granted ? "granted reading" : "denied reading" }
                    entries.append(Entry(sequence: point.sequence, recordedAt: point.recordedAt, kind: .authorizationDecided,
                                         actor: "owner", what: "\([share, read].compactMap { $0 }.joined(separator: ", ")) \(type.shortName) for \(before.registry.label(d.app))",
                                         authorization: nil))
                default: break
                }
            }
        }
        // A raw subject: keep the raw records whose identifier is the one asked for.
        if case .raw(let identifier) = subject {
            var keep: [UUID: Bool] = [:]
            entries = try entries.filter { e in
                guard let text = e.what.split(separator: " ").dropFirst().first.map(String.init),
                      let uuid = UUIDText.parse(text), let slot = try state.samples.slot(of: uuid) else { return false }
                if let known = keep[uuid] { return known }
                guard case .unrecognized(let u) = try fetcher.sample(slot, in: state) else { return false }
                keep[uuid] = u.typeIdentifier == identifier
                return u.typeIdentifier == identifier
            }
        }
        // Add the values of saved objects (read from the log by their slots).
        return try entries.map { e in
            guard e.kind == .samplesSaved, e.what.hasPrefix("saved") else { return e }
            let uuidText: String
            if case .object(let uuid) = subject { uuidText = uuid.uuidString } else { uuidText = String(e.what.dropFirst(6)) }
            guard let uuid = UUIDText.parse(uuidText), let slot = try state.samples.slot(of: uuid) else { return e }
            let sample = try fetcher.sample(slot, in: state)
            return Entry(sequence: e.sequence, recordedAt: e.recordedAt, kind: e.kind, actor: e.actor,
                         what: e.what + ": " + summary(sample), authorization: e.authorization)
        }
    }

    static func label(_ actor: ActorID, _ state: LedgerState) -> String {
        switch actor {
        case .owner: "owner"
        case .app(let o): state.registry.label(o)
        }
    }

    /// `bodyMassIndex 22.86 count at 2026-03-01T09:00:00Z`.
    package static func summary(_ s: Sample) -> String {
        let at = ISO8601.string(s.startDate)
        switch s {
        case .quantity(let q): return "\(q.type.shortName) \(Quantity.format(q.quantity.value)) \(q.quantity.unit) at \(at)"
        case .category(let c): return "\(c.type.shortName) \(c.type.values.first { $0.value == c.value }?.shortName ?? String(c.value)) at \(at)"
        case .workout(let w): return "workout \(w.activityType.shortName), \(w.duration < 1e15 ? String(Int(w.duration)) : String(w.duration)) s at \(at)"
        case .correlation(let c): return "\(c.type.shortName) of \(c.objects.count) at \(at)"
        case .unrecognized(let u):
            return "raw \(u.typeIdentifier) \(u.value ?? "")\(u.unit.map { " " + $0 } ?? "") at \(at)" + (u.reason.map { " (\($0))" } ?? "")
        }
    }
}
