import Foundation
import HealthModel

extension SnapshotFile {
    /// Section 2: per app (ascending) and type code (ascending), the permission.
    static let authorizationSection = SnapshotSectionCodec(section: .authorization, encode: { source, w in
        let permissions = source.state.authorization.permissions
        let apps = permissions.keys.sorted()
        w.varint(apps.count)
        for app in apps {
            let types = permissions[app]!.keys.sorted()
            w.varint(UInt64(app))
            w.varint(types.count)
            for code in types {
                let p = permissions[app]![code]!
                w.u16(code)
                w.u8(UInt8(p.share.rawValue))
                w.u8(p.read.map { $0 ? 1 : 2 } ?? 0)
                w.u8((p.requestedShare ? 1 : 0) | (p.requestedRead ? 2 : 0))
                w.u8(p.basis.rawValue)
            }
        }
        return true
    }, decode: { r, contents in
        for _ in 0..<(try r.count()) {
            let app = AppOrdinal(try r.count(limit: Int(UInt32.max)))
            for _ in 0..<(try r.count()) {
                let code = try r.u16()
                var p = TypePermission()
                guard let share = SharingStatus(rawValue: Int(try r.u8())) else { throw r.malformed("share") }
                p.share = share
                switch try r.u8() { case 1: p.read = true; case 2: p.read = false; default: p.read = nil }
                let requested = try r.u8()
                p.requestedShare = requested & 1 != 0
                p.requestedRead = requested & 2 != 0
                guard let basis = DecisionBasis(rawValue: try r.u8()) else { throw r.malformed("basis") }
                p.basis = basis
                contents.permissions.append((app, code, p))
            }
        }
    }, required: true)
}
