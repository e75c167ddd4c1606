import Foundation
import HealthLedger
import HealthModel
import LedgerCore

extension ReportViewer {
    /// Daily sums of a cumulative type from the statistics engine (HKStatisticsCollection
    /// with `cumulativeSum`, one bucket per local day in `zone`: every source merged by
    /// the priority order in force, as the Health app counts), as this viewer may see
    /// them. Days without samples are left out; a day whose sum is not a finite number
    /// (old values too large to add up) throws `StatisticsNotFinite`.
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
            guard let sum = bucket.values.sum else { continue }  // (a bucket listed has its sum)
            // a day whose sum does not convert to a finite number fails the chart by name, never left out
            let value = type.canonicalUnit == unit ? sum : try Quantity(sum, type.canonicalUnit).doubleValue(for: unit)
            guard value.isFinite else {
                throw StatisticsNotFinite(type: type, statistic: "sum", start: bucket.startDate, end: bucket.endDate)
            }
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

extension ReportViewer {
    /// Each local day's minimum, mean and maximum of a quantity type in `unit`, over the
    /// samples (as this viewer may see them) starting that day, from the statistics
    /// projection: no sample is decoded. Days without samples are left out; a day
    /// whose values are not finite in `unit` or do not add up to a finite mean (old values
    /// too large) throws `StatisticsNotFinite`.
    func dailyRanges(_ type: QuantityType, unit: HealthUnit, period: DatePredicate?,
                     days: inout LocalDays) async throws -> [HealthReportData.DayRange] {
        let entries: [StatisticsEntry]
        switch self {
        case .owner(let s): entries = try await s.quantityValues(for: type, predicate: period)
        case .app(let s): entries = try await s.quantityValues(for: type, predicate: period)
        }
        // the conversion `Quantity.doubleValue(for:)` makes, built once (no unit: no day)
        guard let convert = try? type.canonicalUnit.converter(to: unit) else { return [] }
        let same = type.canonicalUnit == unit
        let epoch = Date.timeIntervalBetween1970AndReferenceDate
        var rangeDays: [Int] = [], mins: [Double] = [], maxs: [Double] = [], sums: [Double] = [], ns: [Int] = []
        var last = -1
        for e in entries {
            let v = same ? e.value : convert.convert(e.value)
            let d = days.day(e.start + epoch)
            var i = last
            if i < 0 || rangeDays[i] != d {
                // entries ascend by start, so a day's samples are consecutive
                rangeDays.append(d); mins.append(v); maxs.append(v); sums.append(0); ns.append(0)
                i = rangeDays.count - 1
                last = i
            }
            mins[i] = min(mins[i], v); maxs[i] = max(maxs[i], v); sums[i] += v; ns[i] += 1
        }
        var out: [HealthReportData.DayRange] = []
        for i in rangeDays.indices {
            let range = HealthReportData.DayRange(day: rangeDays[i], min: mins[i], mean: sums[i] / Double(ns[i]), max: maxs[i], count: ns[i])
            // a day whose values do not add up to a finite mean fails the chart by name, never left out
            for (name, v) in [("minimum", range.min), ("average", range.mean), ("maximum", range.max)] where !v.isFinite {
                throw StatisticsNotFinite(type: type, statistic: name, start: Date(timeIntervalSince1970: days.start(ofDay: range.day)),
                                          end: Date(timeIntervalSince1970: days.start(ofDay: range.day + 1)))
            }
            out.append(range)
        }
        return out
    }
}

extension ReportViewer {
    /// Samples of `types` in `period`, as this viewer may see them, counted per (type,
    /// source, device) without decoding them.
    func sourceDeviceCounts(_ types: [ObjectType], period: DatePredicate?) async throws -> [SourceDeviceCount] {
        switch self {
        case .owner(let s): try await s.sourceDeviceCounts(for: types, predicate: period)
        case .app(let s): try await s.sourceDeviceCounts(for: types, predicate: period)
        }
    }
}
