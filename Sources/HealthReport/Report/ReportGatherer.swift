import Foundation
import HealthLedger
import HealthModel
import LedgerCore
import LedgerLog

/// What a report covers and how it is formatted.
public struct ReportOptions: Sendable {
    /// Samples overlapping [from, to) (nil: unbounded).
    public var from: Date?
    public var to: Date?
    /// Day boundaries, ages and times are in this zone.
    public var timeZone: TimeZone
    /// Numbers, heights and weights are formatted for this locale.
    public var locale: Locale
    /// "Now": the report's time, the age's day, the latest sample's bound.
    public var now: Date
    /// The exact command that rebuilds the report (shown in its integrity section).
    public var command: String
    /// At most this many audit timeline entries (the newest are kept).
    public var timelineLimit: Int
    /// Run the whole `verify` (events replayed against the rules, snapshots compared)
    /// rather than the log's own check (framing, checksums, the hash chain over every
    /// byte), which is what a report of a large ledger can afford by default.
    public var fullVerify: Bool

    public init(from: Date? = nil, to: Date? = nil, timeZone: TimeZone = TimeZone(identifier: "UTC")!,
                locale: Locale = Locale(identifier: "en_US"), now: Date = Date(), command: String, timelineLimit: Int = 5000, fullVerify: Bool = false) {
        self.from = from
        self.to = to
        self.timeZone = timeZone
        self.locale = locale
        self.now = now
        self.command = command
        self.timelineLimit = timelineLimit
        self.fullVerify = fullVerify
    }

    var period: DatePredicate? { from == nil && to == nil ? nil : DatePredicate(start: from, end: to) }
}

/// Reads what a report shows, every sample through the viewer's store handle.
public enum ReportGatherer {
    /// Sleep stages drawn, bottom to top: (category value, label).
    public static let sleepStages: [(value: Int, name: String)] = [(4, "deep"), (3, "core"), (5, "REM"), (1, "asleep"), (2, "awake")]

    public static func gather(_ viewer: ReportViewer, options: ReportOptions) async throws -> HealthReportData {
        var data = HealthReportData(viewer: viewer.bundleIdentifier ?? "owner", appBundle: viewer.bundleIdentifier,
                                    from: options.from, to: options.to, timeZone: options.timeZone, locale: options.locale,
                                    generatedAt: options.now, command: options.command)
        let format = ReportFormat(locale: options.locale, timeZone: options.timeZone)
        var days = LocalDays(options.timeZone)
        data.profile = try await profile(viewer, options: options, format: format)

        // Body mass, its 7-day mean, BMI.
        var heights: [(Double, Double)] = []
        try await viewer.forEach(.quantity(.height), in: nil) { s in
            if case .quantity(let q) = s, let m = try? q.quantity.doubleValue(for: .meter) { heights.append((q.startDate.timeIntervalSince1970, m)) }
        }
        try await viewer.forEach(.quantity(.bodyMass), in: options.period) { s in
            if case .quantity(let q) = s, let kg = try? q.quantity.doubleValue(for: .kilogram) { data.bodyMass.append((q.startDate.timeIntervalSince1970, kg)) }
        }
        data.bodyMassAverage = movingAverage(dailyMeans(data.bodyMass, &days), window: 7)
        try await viewer.forEach(.quantity(.bodyMassIndex), in: options.period) { s in
            if case .quantity(let q) = s, let v = try? q.quantity.doubleValue(for: .count) { data.bodyMassIndex.append((q.startDate.timeIntervalSince1970, v)) }
        }
        if data.bodyMassIndex.isEmpty, !heights.isEmpty {
            data.bodyMassIndexComputed = true
            var h = 0
            for (t, kg) in data.bodyMass {
                while h + 1 < heights.count, heights[h + 1].0 <= t { h += 1 }
                let m = heights[h].1
                if m > 0, kg > 0 { data.bodyMassIndex.append((t, kg / (m * m))) }
            }
        }

        // Heart rate per day, from the statistics projection (no sample decoded).
        do {
            data.heartRate = try await viewer.dailyRanges(.heartRate, unit: HealthReportUnits.perMinute, period: options.period, days: &days)
        } catch let e as StatisticsNotFinite {
            data.notDrawn.append(HealthReportData.NotDrawn(id: "heart-rate", title: "Heart rate per day", reason: e.description))
        }
        var resting: [(Double, Double)] = []
        try await viewer.forEach(.quantity(.restingHeartRate), in: options.period) { s in
            if case .quantity(let q) = s, let v = try? q.quantity.doubleValue(for: HealthReportUnits.perMinute) { resting.append((q.startDate.timeIntervalSince1970, v)) }
        }
        data.restingHeartRate = dailyMeans(resting, &days)

        // Sleep per night by stage.
        var intervals: [Int: [Int: [(Double, Double)]]] = [:]  // night → stage value → intervals
        let sleepType = ObjectType.category(try CategoryType(identifier: "sleepAnalysis"))
        try await viewer.forEach(sleepType, in: options.period) { s in
            guard case .category(let c) = s else { return }
            let end = c.endDate.timeIntervalSince1970
            let night = days.day(end - 43_200) + 1
            intervals[night, default: [:]][c.value, default: []].append((c.startDate.timeIntervalSince1970, end))
        }
        data.sleep = intervals.keys.sorted().map { night in
            let stages = intervals[night]!
            return HealthReportData.Night(day: night, hours: sleepStages.map { unionHours(stages[$0.value] ?? []) },
                                          inBed: unionHours(stages[0] ?? []))
        }

        // Workouts per week by activity type (the five most common, the rest as "other").
        var perWeek: [Int: [String: Int]] = [:], totals: [String: Int] = [:]
        try await viewer.forEach(.workout, in: options.period) { s in
            guard case .workout(let w) = s else { return }
            let week = LocalDays.week(ofDay: days.day(w.startDate.timeIntervalSince1970))
            perWeek[week, default: [:]][w.activityType.shortName, default: 0] += 1
            totals[w.activityType.shortName, default: 0] += 1
        }
        let ranked = totals.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map(\.key)
        let top = Array(ranked.prefix(ranked.count > 6 ? 5 : 6))
        data.workoutTypes = top + (ranked.count > top.count ? ["other"] : [])
        data.workouts = perWeek.keys.sorted().map { week in
            let byType = perWeek[week]!
            var row = top.map { byType[$0] ?? 0 }
            if ranked.count > top.count { row.append(byType.filter { !top.contains($0.key) }.values.reduce(0, +)) }
            return HealthReportData.WorkoutWeek(week: week, counts: row)
        }

        // Daily steps and active energy: the statistics engine, sources merged by the
        // priority order in force (as the Health app counts), never a sum of our own.
        // A chart whose values do not add up (old values too large) is named as not drawn.
        do {
            data.steps = try await viewer.dailySums(.stepCount, unit: .count, period: options.period, zone: options.timeZone, days: &days)
        } catch let e as StatisticsNotFinite {
            data.notDrawn.append(HealthReportData.NotDrawn(id: "steps", title: "Daily steps", reason: e.description))
        }
        do {
            data.activeEnergy = try await viewer.dailySums(.activeEnergyBurned, unit: .kilocalorie, period: options.period,
                                                           zone: options.timeZone, days: &days)
        } catch let e as StatisticsNotFinite {
            data.notDrawn.append(HealthReportData.NotDrawn(id: "active-energy", title: "Active energy per day", reason: e.description))
        }
        for type in [QuantityType.stepCount, .activeEnergyBurned] {
            if let order = await viewer.sourcePriority(type), !order.isEmpty { data.priorities.append((type.shortName, order)) }
        }

        // Where the data came from: samples per (type, source, device), from the sample
        // index and each sample's device bytes, no sample decoded.
        var tallies: [SourceKey: Int] = [:]
        for row in try await viewer.sourceDeviceCounts(ObjectType.allTypes, period: options.period) {
            let deviceName = row.device.map { d in [d.name, d.model].compactMap { $0 }.joined(separator: " · ") } ?? ""
            let key = SourceKey(type: row.type.shortName, identifier: row.type.identifier,
                                source: row.source?.name ?? row.source?.bundleIdentifier ?? "?", device: deviceName)
            tallies[key, default: 0] += row.count
        }
        data.sources = tallies.map { HealthReportData.SourceCount(type: $0.key.type, identifier: $0.key.identifier, source: $0.key.source, device: $0.key.device, count: $0.value) }
            .sorted { ($0.type, $0.source, $0.device) < ($1.type, $1.source, $1.device) }

        let fs = viewer.ledger.fs
        let reader = try LogReader(fs)
        (data.timeline, data.timelineOmitted) = try AuditTimeline.read(reader, for: viewer.bundleIdentifier, limit: options.timelineLimit)
        data.integrity = try IntegrityCheck.run(fs, reader: reader, full: options.fullVerify)
        return data
    }

    struct SourceKey: Hashable {
        let type: String
        let identifier: String
        let source: String
        let device: String
    }

    static func profile(_ viewer: ReportViewer, options: ReportOptions, format: ReportFormat) async throws -> HealthReportData.Profile {
        var p = HealthReportData.Profile()
        let (dob, sex, blood) = try await viewer.characteristics()
        p.age = dob?.age(at: options.now, in: options.timeZone)
        p.sex = sex
        p.bloodType = blood
        let height = try await viewer.mostRecent(.quantity(.height), now: options.now)
        let weight = try await viewer.mostRecent(.quantity(.bodyMass), now: options.now)
        func source(_ s: Sample) -> String { s.common.source?.name ?? s.common.source?.bundleIdentifier ?? "?" }
        var h: Quantity?, w: Quantity?
        if case .quantity(let q)? = height {
            h = q.quantity
            p.height = HealthReportData.Measured(text: try PersonFormatting.height(q.quantity, locale: options.locale), date: q.startDate, source: source(.quantity(q)))
        }
        if case .quantity(let q)? = weight {
            w = q.quantity
            p.weight = HealthReportData.Measured(text: try PersonFormatting.bodyMass(q.quantity, locale: options.locale), date: q.startDate, source: source(.quantity(q)))
        }
        if let bmi = try BodyMassIndex.compute(weight: w, height: h), let hd = height?.startDate, let wd = weight?.startDate {
            p.bodyMassIndex = format.number((try? bmi.doubleValue(for: .count)) ?? bmi.value, decimals: 2)
            p.bodyMassIndexDate = max(hd, wd)
        }
        return p
    }

    /// The mean of each local day's values, by day.
    static func dailyMeans(_ values: [(Double, Double)], _ days: inout LocalDays) -> [HealthReportData.DayValue] {
        var sums: [Int: (Double, Int)] = [:]
        for (t, v) in values {
            let d = days.day(t)
            let e = sums[d] ?? (0, 0)
            sums[d] = (e.0 + v, e.1 + 1)
        }
        return sums.keys.sorted().map { HealthReportData.DayValue(day: $0, value: sums[$0]!.0 / Double(sums[$0]!.1)) }
    }

    /// On each day with a value, the mean of the values of the `window` days ending then.
    static func movingAverage(_ daily: [HealthReportData.DayValue], window: Int) -> [HealthReportData.DayValue] {
        var out: [HealthReportData.DayValue] = []
        var first = 0, sum = 0.0
        for (i, d) in daily.enumerated() {
            sum += d.value
            while daily[first].day <= d.day - window { sum -= daily[first].value; first += 1 }
            out.append(HealthReportData.DayValue(day: d.day, value: sum / Double(i - first + 1)))
        }
        return out
    }

    /// Hours covered by the union of intervals.
    static func unionHours(_ intervals: [(Double, Double)]) -> Double {
        var total = 0.0, end = -Double.infinity
        for (s, e) in intervals.sorted(by: { $0.0 < $1.0 }) {
            let start = max(s, end)
            if e > start { total += e - start }
            end = max(end, e)
        }
        return total / 3600
    }
}

/// Units the report converts to.
enum HealthReportUnits {
    static let perMinute = try! HealthUnit("count/min")
}
