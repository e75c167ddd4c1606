import Foundation

extension SnapshotFile {
    /// Section 21: per type code (ascending) its latest live slot.
    static let latestSection = SnapshotSectionCodec(section: .latest, encode: { source, w in
        let latest = source.columns.latest
        let codes = latest.keys.sorted()
        w.varint(codes.count)
        for code in codes {
            w.u16(code)
            w.varint(UInt64(latest[code]!))
        }
        return true
    }, decode: { r, contents in
        for _ in 0..<(try r.count()) { contents.columns.latest[try r.u16()] = UInt32(try r.count(limit: Int(UInt32.max))) }
    }, required: true)
}
