import Foundation

extension SnapshotFile {
    /// Section 6, only with summaries: one `activitySummariesRecorded` payload per day, ascending.
    static let activitySummariesSection = SnapshotSectionCodec(section: .activitySummaries, encode: { source, w in
        let summaries = source.state.activitySummaries
        guard !summaries.isEmpty else { return false }
        let days = summaries.keys.sorted()
        w.varint(days.count)
        for day in days {
            w.lengthPrefixed { $0.append(contentsOf: EventCodec.payload(.activitySummariesRecorded([summaries[day]!]))) }
        }
        return true
    }, decode: { r, contents in
        for _ in 0..<(try r.count()) { contents.events.append(try SnapshotContents.event(&r, .activitySummariesRecorded)) }
    }, required: false)
}
