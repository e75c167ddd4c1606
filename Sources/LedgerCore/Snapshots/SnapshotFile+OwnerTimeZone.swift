import Foundation

extension SnapshotFile {
    /// Section 7, only when set: the owner's time zone identifier.
    static let ownerTimeZoneSection = SnapshotSectionCodec(section: .ownerTimeZone, encode: { source, w in
        guard let zone = source.state.ownerTimeZone else { return false }
        w.string(zone)
        return true
    }, decode: { r, contents in
        contents.events.append(.ownerTimeZoneSet(try r.string()))
    }, required: false)
}
