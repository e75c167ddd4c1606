import Foundation

extension SnapshotFile {
    /// Section 23: per slot with a sync identity (ascending) its identifier and version.
    static let syncSection = SnapshotSectionCodec(section: .sync, encode: { source, w in
        let sync = source.columns.syncOfSlot
        let slots = sync.keys.sorted()
        w.varint(slots.count)
        for slot in slots {
            w.varint(UInt64(slot))
            w.string(sync[slot]!.identifier)
            w.zigzag(sync[slot]!.version)
        }
        return true
    }, decode: { r, contents in
        for _ in 0..<(try r.count()) {
            let slot = UInt32(try r.count(limit: Int(UInt32.max)))
            contents.columns.syncOfSlot[slot] = SampleIndex.SyncValue(identifier: try r.string(), version: try r.zigzag())
        }
    }, required: true)
}

extension SnapshotFile {
    /// Section 24: the apps of slots whose ordinal does not fit the slot's word (2047
    /// apps or more), by slot ascending: varint n · n × (varint slot · varint app).
    static let appOverflowsSection = SnapshotSectionCodec(section: .appOverflows, encode: { source, w in
        let overflows = source.columns.appOverflows
        let slots = overflows.keys.sorted()
        w.varint(slots.count)
        for slot in slots {
            w.varint(UInt64(slot))
            w.varint(UInt64(overflows[slot]!))
        }
        return true
    }, decode: { r, contents in
        for _ in 0..<(try r.count()) {
            let slot = UInt32(try r.count(limit: Int(UInt32.max)))
            contents.columns.appOverflows[slot] = UInt32(try r.count(limit: Int(UInt32.max)))
        }
    }, required: true)
}
