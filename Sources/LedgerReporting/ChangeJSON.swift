import Foundation
import HealthModel
import LedgerCore

/// A change of the anchored feed as one JSON line: `{"change":"added","sample":{…}}`
/// or `{"change":"deleted","uuid":…,"type":…,"syncIdentifier":…,"syncVersion":…,
/// "replacedBy":…,"erasedAt":…}`; the anchor after them as `{"anchor":"…"}`.
package enum ChangeJSON {
    package static func append(_ change: Change, to bytes: inout [UInt8]) {
        switch change {
        case .added(let sample):
            bytes.append(contentsOf: "{\"change\":\"added\",\"sample\":".utf8)
            SampleJSONWriter.append(sample, to: &bytes)
            bytes.append(UInt8(ascii: "}"))
        case .deleted(let d):
            var o = JSONObject()
            o.set("change", "deleted")
            o.set("uuid", d.uuid.uuidString)
            o.set("type", d.type?.identifier)
            o.set("syncIdentifier", d.syncIdentifier)
            o.set("syncVersion", d.syncVersion.map { Int($0) })
            o.set("replacedBy", d.replacedBy?.uuidString)
            o.set("erasedAt", d.erasedAt.map { Int($0) })
            bytes.append(contentsOf: o.string.utf8)
        }
    }

    /// `{"anchor":"…"}`.
    package static func anchor(_ anchor: ChangeAnchor) -> String { "{\"anchor\":\(JSONObject.quote(anchor.text))}" }
}
