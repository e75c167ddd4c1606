import Foundation

extension SnapshotFile {
    /// Section 4: last sequence, last `recordedAt`, events folded per kind.
    static let countsSection = SnapshotSectionCodec(section: .counts, encode: { source, w in
        let state = source.state
        w.varint(state.lastSequence)
        w.zigzag(state.lastRecordedAt)
        let counts = state.eventCounts
        let kinds = counts.keys.sorted()
        w.varint(kinds.count)
        for k in kinds {
            w.u16(k)
            w.varint(counts[k]!)
        }
        return true
    }, decode: { r, contents in
        contents.lastSequence = try r.varint()
        contents.lastRecordedAt = try r.zigzag()
        for _ in 0..<(try r.count()) { contents.eventCounts[try r.u16()] = try r.varint() }
    }, required: true)
}
