import Foundation
import HealthModel

extension SnapshotFile {
    /// Section 1: the apps in ordinal order (bundle identifier, name, purposes, imported).
    static let registrySection = SnapshotSectionCodec(section: .registry, encode: { source, w in
        let apps = source.state.registry.apps
        w.varint(apps.count)
        for a in apps {
            w.string(a.bundleIdentifier)
            w.string(a.name)
            SampleCodec.optionalString(a.readPurpose, into: &w)
            SampleCodec.optionalString(a.sharePurpose, into: &w)
            w.u8(a.imported ? 1 : 0)
        }
        return true
    }, decode: { r, contents in
        for i in 0..<(try r.count()) {
            contents.events.append(.appRegistered(app: AppOrdinal(i + 1), AppRegistration(
                bundleIdentifier: try r.string(), name: try r.string(), readPurpose: try SampleCodec.optionalString(&r),
                sharePurpose: try SampleCodec.optionalString(&r), imported: try EventCodec.bool(&r))))
        }
    }, required: true)
}
