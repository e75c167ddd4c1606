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
        for _ in 0..<(try r.count()) {
            let kind = try r.u16(), count = try r.varint()
            // Written for kinds folded at least once, each once: anything else is not a
            // snapshot this release wrote (S5), and would restore counts a replay never has.
            guard count > 0, contents.eventCounts[kind] == nil else { throw r.malformed("event counts: kind \(kind) counted \(count == 0 ? "0 times" : "twice")", rule: "S5") }
            contents.eventCounts[kind] = count
        }
    }, required: true)
}
