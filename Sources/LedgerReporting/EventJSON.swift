import Foundation
import HealthModel
import LedgerCore

/// Events as JSON Lines for people and `jq` (`healthledger log --json`).
package enum EventJSON {
    /// One event: `seq`, `recordedAt`, `kind`, `version`, `actor` (the owner or a
    /// bundle identifier), `offset`, then — only for an event of an import that is not
    /// applied (rule E11) — `applied: false` and `transaction: "aborted"` or `"open"`,
    /// then the kind's own fields.
    package static func line(_ e: StoredEvent, version: UInt16, registry: AppRegistry, notApplied: TransactionState? = nil,
                             erasedBy: UInt64? = nil) -> String {
        var o = JSONObject()
        o.set("seq", e.sequence)
        o.set("recordedAt", ISO8601.string(e.recordedDate))
        o.set("kind", e.event.kind.name)
        o.set("version", Int(version))
        o.set("actor", actor(e.event.actor, registry))
        o.set("offset", e.offset)
        if let notApplied {
            o.set("applied", false)
            o.set("transaction", notApplied.rawValue)
        }
        if let erasedBy {
            // Its content erased: what replay folds in its place (issue 32).
            o.set("erasedBy", erasedBy)
        }
        switch e.event {
        case .appRegistered(let ordinal, let r):
            o.set("app", r.bundleIdentifier)
            o.set("ordinal", Int(ordinal))
            o.set("name", r.name)
            o.set("readPurpose", r.readPurpose)
            o.set("sharePurpose", r.sharePurpose)
            o.set("imported", r.imported)
        case .authorizationRequested(let app, let share, let read):
            o.set("app", registry.label(app))
            o.setRaw("share", JSONObject.array(share.map { JSONObject.quote($0.identifier) }))
            o.setRaw("read", JSONObject.array(read.map { JSONObject.quote($0.identifier) }))
        case .authorizationDecided(let d):
            o.set("app", registry.label(d.app))
            o.set("type", d.type.identifier)
            o.set("share", d.share.map(answer))
            o.set("read", d.read.map(answer))
            o.set("basis", d.basis == .owner ? "owner" : "imported")
        case .characteristicSet(let v):
            o.set("characteristic", v.type.identifier)
            o.set("value", v.description)
        case .characteristicCleared(let t):
            o.set("characteristic", t.identifier)
        case .samplesSaved(let app, let samples):
            o.set("app", registry.label(app))
            o.setRaw("samples", JSONObject.array(samples.map { saved in
                var s = SampleJSON.object(saved.sample)
                if let replaced = saved.replaces { s.set("replaces", replaced.uuidString) }
                return s.string
            }))
        case .samplesDeleted(_, let objects, let reason):
            o.set("reason", reason)
            o.setRaw("objects", JSONObject.array(objects.map { d in
                var j = JSONObject()
                j.set("uuid", d.uuid.uuidString)
                j.set("syncIdentifier", d.syncIdentifier)
                if let v = d.syncVersion { j.set("syncVersion", v) }
                return j.string
            }))
        case .activitySummariesRecorded(let summaries):
            o.setRaw("summaries", JSONObject.array(summaries.map { ActivitySummaryJSON.object($0).string }))
        case .ownerTimeZoneSet(let identifier):
            o.set("timeZone", identifier)
        case .sourcePrioritySet(let type, let sources):
            o.set("type", type.shortName)
            o.setRaw("sources", JSONObject.array(sources.map { JSONObject.quote($0) }))
        case .preferredUnitSet(let type, let unit):
            o.set("type", type.shortName)
            o.set("unit", unit?.canonicalString)
        case .samplesAssociated(let app, let workout, let samples):
            o.set("app", registry.label(app))
            o.set("workout", workout.uuidString)
            o.setRaw("samples", JSONObject.array(samples.map { JSONObject.quote($0.uuidString) }))
        case .workoutActivitiesAdded(_, let workout, let activities):
            o.set("workout", workout.uuidString)
            o.setRaw("activities", JSONObject.array(activities.map { SampleJSON.activity($0).string }))
        case .exportElementsKept(let elements):
            o.setRaw("elements", JSONObject.array(elements.map { element in
                JSONObject.array(element.nodes.map { node in
                    var n = JSONObject()
                    n.set("depth", node.depth)
                    n.set("name", node.name)
                    var attributes = JSONObject()
                    for a in node.attributes { attributes.set(a.key, a.value.description) }
                    n.setRaw("attributes", attributes.string)
                    return n.string
                })
            }))
        case .importStarted(let s):
            o.set("importId", s.importId.uuidString)
            // A legacy start (version 1) carries the content hash and `again`; a
            // transaction (version 2) says so, its hash is in its importFinished.
            if let hash = s.contentSHA256 { o.set("contentSHA256", hex(hash)) } else { o.set("transaction", true) }
            o.set("exportDate", s.exportDate)
            o.set("locale", s.locale)
            o.set("exportVersion", s.exportVersion)
            o.set("sourcePath", s.sourcePath)
            if !s.isTransaction { o.set("again", s.again) }
            var me = JSONObject()
            for e in s.me { me.set(e.key, e.value.description) }
            o.setRaw("me", me.string)
        case .absentFromExport(let a):
            o.set("importId", a.importId.uuidString)
            o.set("exportDate", a.exportDate)
            o.set("reason", a.reason)
            o.setRaw("objects", JSONObject.array(a.objects.map { d in
                var j = JSONObject()
                j.set("uuid", d.uuid.uuidString)
                j.set("syncIdentifier", d.syncIdentifier)
                if let v = d.syncVersion { j.set("syncVersion", v) }
                return j.string
            }))
            o.setRaw("days", JSONObject.array(a.days.map { JSONObject.quote($0.description) }))
        case .importAborted(let a):
            o.set("importId", a.importId.uuidString)
            o.set("reason", a.reason)
        case .importFinished(let f):
            o.set("importId", f.importId.uuidString)
            if let hash = f.contentSHA256 { o.set("contentSHA256", hex(hash)) }
            var counts = JSONObject()
            for c in f.counts { counts.set(c.name, c.value) }
            o.setRaw("counts", counts.string)
        case .credentialIssued(let c):
            o.set("credential", c.id.description)
            o.set("subject", actor(c.subject, registry))
            o.set("secretSHA256", hex(c.secretSHA256))
            o.set("expiresAt", c.expiresAt.map { ISO8601.string(Date(timeIntervalSince1970: Double($0) / 1e9)) })
            o.set("name", c.name)
        case .credentialRevoked(let id, let reason):
            o.set("credential", id.description)
            o.set("reason", reason)
        case .encryptedFrom(let origin):
            o.set("sourceLedger", origin.ledgerId.uuidString)
            o.set("sourceChainHead", hex(origin.chainHead))
            o.set("sourceEvents", origin.events)
            o.set("copiedAt", ISO8601.string(Date(timeIntervalSince1970: Double(origin.copiedAt) / 1e9)))
        case .erased(let e):
            o.set("scope", e.scope.description)
            o.set("reason", e.reason)
            o.setRaw("keys", JSONObject.array(e.keyIds.map { String($0) }))
            o.set("samples", e.samples.count)
            o.set("liveAtErasure", e.liveAtErasure)
            o.setRaw("replacements", JSONObject.array(e.replacements.map { String($0.sequence) }))
        }
        return o.string
    }

    /// A record whose key an erasure destroyed (issue 32): only what its plain header
    /// says, and the erasure. JSON: `seq`, `recordedAt`, `kind`, `version`, `offset`,
    /// `erasedBy`.
    package static func erased(sequence: UInt64, recordedAt: Int64, kind: UInt16, version: UInt16, offset: UInt64,
                               erasedBy: UInt64, json: Bool) -> String {
        let at = ISO8601.string(Date(timeIntervalSince1970: Double(recordedAt) / 1e9))
        let name = EventKind(rawValue: kind)?.name ?? "kind \(kind)"
        guard json else { return "\(sequence)\t\(at)\t\(name)\t-\t[erased at event \(erasedBy)]" }
        var o = JSONObject()
        o.set("seq", sequence)
        o.set("recordedAt", at)
        o.set("kind", name)
        o.set("version", Int(version))
        o.set("offset", offset)
        o.set("erasedBy", erasedBy)
        return o.string
    }

    /// Why an event is not applied: its import was aborted, or is still open (or was
    /// left open by a process that died; the next writer aborts it).
    package enum TransactionState: String, Sendable {
        case aborted, open
    }

    /// A short human line: `17  2026-03-01T12:00:00Z  samplesSaved  com.example.app  1 sample (bodyMass 80 kg)`;
    /// an event not applied (rule E11) is marked `[not applied: import aborted]` or `[not applied: import open]`.
    package static func text(_ e: StoredEvent, registry: AppRegistry, notApplied: TransactionState? = nil) -> String {
        let line = plainText(e, registry: registry)
        guard let notApplied else { return line }
        return line + "\t[not applied: import \(notApplied.rawValue)]"
    }

    private static func plainText(_ e: StoredEvent, registry: AppRegistry) -> String {
        let head = "\(e.sequence)\t\(ISO8601.string(e.recordedDate))\t\(e.event.kind.name)\t\(actor(e.event.actor, registry))"
        switch e.event {
        case .appRegistered(_, let r): return head + "\tregistered \(r.bundleIdentifier) \"\(r.name)\""
        case .authorizationRequested(_, let share, let read):
            return head + "\tshare [\(share.map(\.shortName).joined(separator: ","))] read [\(read.map(\.shortName).joined(separator: ","))]"
        case .authorizationDecided(let d):
            return head + "\t\(registry.label(d.app)) \(d.type.shortName): share \(d.share.map(answer) ?? "-") read \(d.read.map(answer) ?? "-")"
        case .characteristicSet(let v): return head + "\t\(v.type.shortName) = \(v.displayString)"
        case .characteristicCleared(let t): return head + "\t\(t.shortName) cleared"
        case .samplesSaved(_, let samples):
            let first = samples.first.map { describe($0.sample) } ?? ""
            return head + "\t\(samples.count) sample\(samples.count == 1 ? "" : "s") (\(first)\(samples.count > 1 ? ", …" : ""))"
        case .samplesDeleted(_, let objects, let reason):
            return head + "\tdeleted \(objects.map(\.uuid.uuidString).joined(separator: ","))" + (reason.map { " (\($0))" } ?? "")
        case .activitySummariesRecorded(let summaries):
            return head + "\t\(summaries.count) activity summar\(summaries.count == 1 ? "y" : "ies")"
        case .ownerTimeZoneSet(let identifier):
            return head + "\ttime zone \(identifier)"
        case .sourcePrioritySet(let type, let sources):
            return head + "\t\(type.shortName) sources: " + (sources.isEmpty ? "default order" : sources.joined(separator: ", "))
        case .samplesAssociated(_, let workout, let samples):
            return head + "\t\(samples.count) sample\(samples.count == 1 ? "" : "s") added to workout \(workout.uuidString)"
        case .workoutActivitiesAdded(_, let workout, let activities):
            return head + "\t\(activities.count) activit\(activities.count == 1 ? "y" : "ies") ("
                + activities.map(\.activityType.shortName).joined(separator: ", ") + ") added to workout \(workout.uuidString)"
        case .preferredUnitSet(let type, let unit):
            return head + "\tpreferred unit of \(type.shortName): " + (unit.map { "\($0)" } ?? "the locale's")
        case .exportElementsKept(let elements):
            return head + "\tkept as written: " + elements.map(\.name).joined(separator: ", ")
        case .importStarted(let s):
            return head + "\timport \(s.importId.uuidString) of \(s.sourcePath) (exported \(s.exportDate ?? "?"))" + (s.again ? " again" : "")
        case .absentFromExport(let a):
            return head + "\timport \(a.importId.uuidString) removed \(a.objects.count) sample\(a.objects.count == 1 ? "" : "s") and "
                + "\(a.days.count) activity summar\(a.days.count == 1 ? "y" : "ies") (\(a.reason))"
        case .importFinished(let f):
            return head + "\timport \(f.importId.uuidString) finished: " + f.counts.map { "\($0.name) \($0.value)" }.joined(separator: ", ")
        case .importAborted(let a):
            return head + "\timport \(a.importId.uuidString) aborted, none of its events applied: \(a.reason)"
        case .credentialIssued(let c):
            return head + "\tcredential \(c.id) issued to \(actor(c.subject, registry))"
                + (c.expiresAt.map { ", expires \(ISO8601.string(Date(timeIntervalSince1970: Double($0) / 1e9)))" } ?? ", never expires")
                + (c.name.map { " (\($0))" } ?? "")
        case .credentialRevoked(let id, let reason):
            return head + "\tcredential \(id) revoked" + (reason.map { " (\($0))" } ?? "")
        case .encryptedFrom(let origin):
            return head + "\tan encrypted copy of ledger \(origin.ledgerId.uuidString) (\(origin.events) events, chain head "
                + "\(hex(origin.chainHead))), made \(ISO8601.string(Date(timeIntervalSince1970: Double(origin.copiedAt) / 1e9)))"
        case .erased(let e):
            return head + "\terased \(e.scope): \(e.keyIds.count) key\(e.keyIds.count == 1 ? "" : "s") destroyed, "
                + "\(e.liveAtErasure) live sample\(e.liveAtErasure == 1 ? "" : "s") (\(e.samples.count) sealed); reason: \(e.reason)"
        }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func describe(_ s: Sample) -> String {
        switch s {
        case .quantity(let q): "\(q.type.shortName) \(q.quantity.value) \(q.quantity.unit)"
        case .category(let c): "\(c.type.shortName) \(c.type.values.first { $0.value == c.value }?.shortName ?? String(c.value))"
        case .correlation(let c): "\(c.type.shortName) of \(c.objects.count)"
        case .workout(let w): "workout \(w.activityType.shortName) \(Int(w.duration)) s"
        case .unrecognized(let u): "\(u.typeIdentifier) \(u.value ?? "")"
        }
    }

    static func answer(_ a: Answer) -> String { a == .granted ? "granted" : "denied" }

    static func actor(_ a: ActorID, _ registry: AppRegistry) -> String {
        switch a {
        case .owner: "owner"
        case .app(let o): registry.label(o)
        }
    }
}
