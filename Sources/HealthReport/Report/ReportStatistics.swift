import Foundation
import HealthLedger
import HealthModel
import LedgerCore

extension ReportViewer {
    /// Daily sums of a cumulative type from the statistics engine (HKStatisticsCollection
    /// with `cumulativeSum`, one bucket per local day in `zone`: every source merged by
    /// the priority order in force, as the Health app counts), as this viewer may see
    /// them. Days without samples are left out.
    func dailySums(_ type: QuantityType, unit: HealthUnit, period: DatePredicate?, zone: TimeZone,
                   days: inout LocalDays) async throws -> [HealthReportData.DayValue] {
        let anchor = Date(timeIntervalSince1970: days.start(ofDay: 0))  // a local midnight
        let interval = try StatisticsInterval(.day)
        let collection: StatisticsCollection
        switch self {
        case .owner(let s):
            collection = try await s.statisticsCollection(for: type, predicate: period, options: .cumulativeSum, anchor: anchor,
                                                          interval: interval, timeZone: zone)
        case .app(let s):
            collection = try await s.statisticsCollection(for: type, predicate: period, options: .cumulativeSum, anchor: anchor,
                                                          interval: interval, timeZone: zone)
        }
        var out: [HealthReportData.DayValue] = []
        for bucket in collection.statistics() {
            guard let sum = bucket.sumQuantity, let value = try? sum.doubleValue(for: unit) else { continue }
            // the bucket starts at a local midnight; an hour in keeps DST days on their date
            out.append(HealthReportData.DayValue(day: days.day(bucket.startDate.timeIntervalSince1970 + 3600), value: value))
        }
        return out
    }

    /// The source order in force for a type (the owner's list, then the default order):
    /// the owner's to see; nil for an app (the store does not tell an app).
    func sourcePriority(_ type: QuantityType) async -> [String]? {
        if case .owner(let s) = self { return await s.sourcePriority(for: type) }
        return nil
    }
}
