import Foundation
import HealthModel
import LedgerCore
import LedgerReporting

/// The file `export csv --wide --by day` wrote.
package struct DailyCSVFile: Sendable, Equatable {
    package let path: String
    /// Days, after the header.
    package let rows: Int
    /// The types of its columns, in order.
    package let types: [QuantityType]
}

extension ReadSession {
    /// Writes `folder/daily.csv` (the folder new, or empty): one row per day of the
    /// owner's calendar (`timeZone`, else the ledger's zone, else UTC) from the first
    /// day any of `types` has a sample `viewer` may read to the last, and a column per
    /// type — its daily sum for a cumulative type, its daily average for any other, as
    /// `statistics --by day` computes them (sources merged by the priority in force),
    /// in the type's canonical unit; a day without a sample of the type is empty.
    /// `types` nil: every quantity type with a sample the viewer may read.
    package func exportDailyCSV(as viewer: Viewer, types: [QuantityType]?, limit: ReplayLimit = .end, timeZone: TimeZone?,
                                to folder: String, progress: ((ReplayProgress) -> Void)? = nil) throws -> DailyCSVFile {
        var view = try self.view(as: viewer, limit: limit, progress: progress)  // first: a refused export makes no folder
        try Self.prepareEmptyFolder(folder)
        let zone = timeZone ?? view.ownerTimeZone.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let anchor = calendar.date(from: DateComponents(year: 2000, month: 1, day: 1))!
        let day = try StatisticsInterval(.day)
        var columns: [QuantityType] = []
        var cells: [Date: [QuantityType: Double]] = [:]
        for type in types ?? QuantityType.allTypes {
            if types == nil {
                // Only the types with a sample this viewer may read get a column.
                var any = false
                _ = try view.forEach(SampleQuery(type: .quantity(type), limit: 1)) { _ in any = true }
                guard any else { continue }
            }
            columns.append(type)
            let cumulative = type.aggregationStyle == .cumulative
            let collection = try view.statisticsCollection(for: type, options: cumulative ? .cumulativeSum : .discreteAverage,
                                                           anchor: anchor, interval: day, timeZone: zone)
            for s in collection.statistics() {
                guard let v = cumulative ? s.values.sum : s.values.average else { continue }
                cells[s.startDate, default: [:]][type] = v
            }
        }
        var out = Array(SampleCSV.row(["date"] + columns.map { "\($0.identifier) (\($0.canonicalUnit))" }).utf8)
        var rows = 0
        if let first = cells.keys.min(), let last = cells.keys.max() {
            // Every day from the first to the last, the empty ones too (a calendar, not a list).
            var dayStart = first
            while dayStart <= last {
                let c = calendar.dateComponents([.year, .month, .day], from: dayStart)
                let label = String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
                let values = cells[dayStart] ?? [:]
                out.append(contentsOf: SampleCSV.row([label] + columns.map { values[$0].map(JSONObject.number) ?? "" }).utf8)
                rows += 1
                guard let next = calendar.date(byAdding: .day, value: 1, to: dayStart) else { break }
                dayStart = next
            }
        }
        let path = (folder as NSString).appendingPathComponent("daily.csv")
        let file = try PartialFile(path + ".partial")
        try file.write(out)
        try file.commit(as: path)
        return DailyCSVFile(path: path, rows: rows, types: columns)
    }
}
