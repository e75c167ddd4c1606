import Foundation

extension SnapshotFile {
    /// Section 22: the tombstones in order (slot, sequence, actor, replacing slot + 1 or 0).
    static let tombstonesSection = SnapshotSectionCodec(section: .tombstones, encode: { source, w in
        let tombstones = source.columns.tombstones
        w.varint(tombstones.count)
        for t in tombstones {
            w.varint(UInt64(t.slot))
            w.varint(t.sequence)
            w.varint(t.actor.encoded)
            w.varint(t.replacedBy.map { UInt64($0) + 1 } ?? 0)
        }
        return true
    }, decode: { r, contents in
        for _ in 0..<(try r.count()) {
            let slot = UInt32(try r.count(limit: Int(UInt32.max)))
            let sequence = try r.varint()
            let actor = ActorID(encoded: try r.varint())
            let replaced = try r.varint()
            guard replaced <= UInt64(UInt32.max) else { throw r.malformed("tombstone replacement slot") }
            contents.columns.tombstones.append(SampleIndex.Tombstone(slot: slot, sequence: sequence, actor: actor,
                                                                     replacedBy: replaced == 0 ? nil : UInt32(replaced - 1)))
        }
    }, required: true)
}
