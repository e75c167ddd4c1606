import Foundation
import HealthModel
import LedgerCore
import LedgerLog

/// What `healthledger replay` prints: the profile, the latest sample per type,
/// authorization, counts and the digest.
package enum ReplayReport {
    /// One JSON object (stable key order: golden files compare it byte for byte).
    package static func json(_ r: ReplaySummary) -> String {
        var o = JSONObject()
        o.set("lastSequence", r.lastSequence)
        o.set("lastRecordedAt", r.lastRecordedAt.map(ISO8601.string))
        o.set("digest", r.digest.hex)
        var p = JSONObject()
        let profile = r.profile
        p.set("dateOfBirth", profile.dateOfBirth?.description)
        p.set("biologicalSex", profile.biologicalSex.rawName)
        p.set("bloodType", profile.bloodType.rawName)
        p.set("fitzpatrickSkinType", profile.fitzpatrickSkinType.rawName)
        p.set("wheelchairUse", profile.wheelchairUse.rawName)
        p.set("activityMoveMode", profile.activityMoveMode?.rawName)
        p.setRaw("height", profile.height.map { SampleJSON.object(.quantity($0)).string } ?? "null")
        p.setRaw("weight", profile.weight.map { SampleJSON.object(.quantity($0)).string } ?? "null")
        p.set("bodyMassIndex", profile.bodyMassIndex?.value)
        o.set("profile", p)
        o.setRaw("latest", JSONObject.array(r.latest.map { SampleJSON.object($0).string }))
        var auth: [String] = []
        for a in r.authorization {
            let perm = a.permission
            var j = JSONObject()
            j.set("app", a.app)
            j.set("type", ObjectType(code: a.typeCode)?.identifier ?? String(a.typeCode))
            j.set("share", perm.share.name)
            j.set("read", perm.read.map { $0 ? "granted" : "denied" } ?? "notDetermined")
            j.set("requestedShare", perm.requestedShare)
            j.set("requestedRead", perm.requestedRead)
            j.set("basis", perm.basis == .owner ? "owner" : "imported")
            auth.append(j.string)
        }
        o.setRaw("authorization", JSONObject.array(auth))
        var counts = JSONObject()
        for kind in EventKind.allCases {
            let n = r.eventCounts[kind] ?? 0
            // Kinds added after the golden ledgers are shown only when present, so
            // that a ledger without them keeps its report byte for byte.
            if kind.rawValue > EventKind.exportElementsKept.rawValue && n == 0 { continue }
            counts.set(kind.name, n)
        }
        if let zone = r.ownerTimeZone { o.set("ownerTimeZone", zone) }
        o.set("events", counts)
        var s = JSONObject()
        s.set("stored", UInt64(r.samplesStored))
        s.set("deleted", UInt64(r.samplesDeleted))
        o.set("samples", s)
        return o.string
    }

    /// `json` of a whole log replayed from its first event (snapshots unused): what
    /// the golden ledgers in `events/golden/` are compared with.
    package static func json(replaying fs: any LogFileSystem) throws -> String {
        json(try ReplaySummary.replay(fs, reader: try LogReader(fs), useSnapshots: false))
    }
}
