import Foundation
import HealthAutoExport
import HealthLedger
import HealthModel
import LedgerHTTP
import LedgerReporting

extension LedgerService {
    /// `POST /v1/health-auto-export`: a Health Auto Export push as the app sends it,
    /// saved under the calling app → `{"new":N,"unchanged":M,"raw":R,"points":{…},
    /// "unknownMetrics":{…}}`. Idempotent: the same points again are all unchanged.
    func healthAutoExport(_ call: Call) async throws -> HTTPResponse {
        try call.only([])
        guard case .app(let bundle, _) = call.principal else { throw Problem(403, "appOnly", "an app's token is needed") }
        let type = call.request.headers["content-type"]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard type == "application/json" else {
            throw Problem(415, "unsupportedMediaType", "a Health Auto Export push is application/json (its CSV pushes are not read)")
        }
        let store = try await appStore(call)
        let payload: HealthAutoExportPayload
        do {
            payload = try HealthAutoExportPayload(json: call.request.body, bundleIdentifier: bundle,
                                                  pushedAt: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
        } catch let e as HealthAutoExportError {
            throw Problem.invalid(e.description)
        }
        let all = payload.samples + payload.raw
        let stored = try await store.savedUUIDs(among: all.map(\.uuid))
        let new = all.filter { !stored.contains($0.uuid) }
        if !new.isEmpty { try await store.saveBridged(new) }
        var o = JSONObject()
        o.set("new", new.count)
        o.set("unchanged", all.count - new.count)
        o.set("raw", payload.raw.filter { !stored.contains($0.uuid) }.count)
        o.set("workouts", payload.workouts)
        var points = JSONObject()
        for (name, n) in payload.points.sorted(by: { $0.key < $1.key }) { points.set(name, n) }
        o.set("points", points)
        var unknown = JSONObject()
        for (name, n) in payload.unknownMetrics.sorted(by: { $0.key < $1.key }) { unknown.set(name, n) }
        o.set("unknownMetrics", unknown)
        return Self.json(200, o.string)
    }
}
