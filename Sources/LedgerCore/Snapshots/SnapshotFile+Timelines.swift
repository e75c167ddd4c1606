import Foundation

extension SnapshotFile {
    /// Section 20: the UUID table's count and (since version 3) its bucket count, then per type code (ascending) whether its
    /// timeline is sorted and how many of the `timelineSlots` column's slots are its.
    static let timelinesSection = SnapshotSectionCodec(section: .timelines, encode: { source, w in
        let c = source.columns
        w.varint(c.table.count)
        w.varint(c.table.bucketCount)
        w.varint(source.timelineCodes.count)
        for code in source.timelineCodes {
            let t = c.timelines[code]!
            w.u16(code)
            w.u8(t.sorted ? 1 : 0)
            w.varint(t.slots.count)
        }
        return true
    }, decode: { r, contents in
        contents.tableCount = try r.count(limit: Int(UInt32.max))
        contents.tableBuckets = try r.count(limit: 1 << 32)
        var start = 0
        let all = contents.timelineSlots
        for _ in 0..<(try r.count()) {
            let code = try r.u16()
            let sorted = try r.u8() == 1
            let n = try r.count(limit: all.count - start)
            contents.columns.timelines[code] = SampleIndex.Timeline(slots: all.slice(start..<start + n), sorted: sorted)
            start += n
        }
        guard start == all.count else { throw r.malformed("timeline slots") }
    }, required: true)
}
