import Foundation
import HealthModel
import LedgerCore
import LedgerLog

/// What `healthledger replay` prints: the profile, the latest sample per type,
/// authorization, counts and the digest.
public enum ReplayReport {
    /// One JSON object (stable key order: golden files compare it byte for byte).
    package static func json(_ state: LedgerState, profile: Profile, latest: [Sample]) -> String {
        var o = JSONObject()
        o.set("lastSequence", state.lastSequence)
        o.set("lastRecordedAt", state.lastSequence == 0 ? nil : ISO8601.string(Date(timeIntervalSince1970: Double(state.lastRecordedAt) / 1e9)))
        o.set("digest", state.digest().hex)
        var p = JSONObject()
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
        o.setRaw("latest", JSONObject.array(latest.map { SampleJSON.object($0).string }))
        var auth: [String] = []
        for app in state.authorization.permissions.keys.sorted() {
            for code in state.authorization.permissions[app]!.keys.sorted() {
                let perm = state.authorization.permissions[app]![code]!
                var j = JSONObject()
                j.set("app", state.registry.label(app))
                j.set("type", ObjectType(code: code)?.identifier ?? String(code))
                j.set("share", perm.share.name)
                j.set("read", perm.read.map { $0 ? "granted" : "denied" } ?? "notDetermined")
                j.set("requestedShare", perm.requestedShare)
                j.set("requestedRead", perm.requestedRead)
                j.set("basis", perm.basis == .owner ? "owner" : "imported")
                auth.append(j.string)
            }
        }
        o.setRaw("authorization", JSONObject.array(auth))
        var counts = JSONObject()
        for kind in EventKind.allCases {
            let n = state.eventCounts[kind.rawValue] ?? 0
            // Kinds added after the golden ledgers are shown only when present, so
            // that a ledger without them keeps its report byte for byte.
            if kind.rawValue > EventKind.exportElementsKept.rawValue && n == 0 { continue }
            counts.set(kind.name, n)
        }
        if let zone = state.ownerTimeZone { o.set("ownerTimeZone", zone) }
        o.set("events", counts)
        var s = JSONObject()
        s.set("stored", UInt64(state.samples.count))
        s.set("deleted", UInt64(state.samples.deletedCount))
        o.set("samples", s)
        return o.string
    }

    /// `json` of a whole log replayed from its first event (snapshots unused): what
    /// the golden ledgers in `events/golden/` are compared with.
    public static func json(replaying fs: any LogFileSystem) throws -> String {
        let reader = try LogReader(fs)
        let loaded = try StateLoader.load(fs, reader: reader, useSnapshots: false)
        var fetcher = SampleFetcher(reader: reader)
        let profile = try loaded.state.profile(fetcher: &fetcher)
        let latest = try latestSamples(loaded.state, at: nil) { try fetcher.sample($0, in: loaded.state) }
        return json(loaded.state, profile: profile, latest: latest)
    }

    /// The latest live sample of every type present, in type-code order, as the index
    /// answers at `instant` (end at or before it; nil: the time of the state's last event).
    package static func latestSamples(_ state: LedgerState, at instant: Date?, fetch: (UInt32) throws -> Sample) throws -> [Sample] {
        let bound = (instant ?? Date(timeIntervalSince1970: Double(state.lastRecordedAt) / 1e9)).timeIntervalSinceReferenceDate
        return try state.samples.typeCodesPresent.compactMap { code in
            try state.samples.latest(typeCode: code, endingBy: bound).map(fetch)
        }
    }
}
