import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

/// `healthledger statistics`: HKStatisticsQuery / HKStatisticsCollectionQuery.
enum StatisticsCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] statistics TYPE (--app ID | --owner)
                   [--sum|--average|--min|--max|--most-recent|--duration]... [--separate-by-source]
                   [--by minute|hour|day|week|month|year [--every N]] [--anchor T] [--tz ZONE]
                   [--from T --to T] [--where EXPR] [--unit U] [--as-of T] [--json]

        HealthKit's statistics of a quantity type (HKStatisticsQuery; with --by, an
        HKStatisticsCollectionQuery), computed from the samples' values, sources and
        times — the totals people compare with the Health app. (`stats` is another
        thing: counts of events and samples per kind, type and source in the log.)

          --sum             cumulative types (steps, energy): where sources overlap in
                            time, only the highest-priority source counts in each stretch
                            (`healthledger priority`); one source's own overlaps all count
          --average         discrete types: arithmetic, time-weighted (heart rate) or
                            energy-averaged dB (audio exposure), by the type's style
          --min, --max      discrete types
          --most-recent     discrete types: the value and interval of the newest sample
          --duration        time covered by samples, overlaps counted once (seconds)
          --separate-by-source  also each source's values (not merged)
          Without any: --sum for a cumulative type, --average for the others. A
          cumulative option on a discrete type (or the reverse) is exit 3, as in HealthKit.

          --by UNIT         buckets of --every N (default 1) calendar UNITs from --anchor
                            (default: midnight 2000-01-01 in the zone, for weeks Monday
                            2000-01-03), gapless both ways, in --tz ZONE (default: the
                            owner's zone): a day across a DST change is 23 or 25 hours
          --from, --to      samples overlapping [--from, --to) (the read engine's date
                            predicate); a sample spanning buckets is split by time.
                            A date alone (--from, --to, --anchor) is the start of
                            that day in the zone
          --where EXPR      the read engine's predicate language (reads the matching samples)
          --unit U          values in U (default: the type's canonical unit)
          --as-of T         the ledger as it was at T (ISO 8601): its samples and the
                            source priority then in force
          --json            one line per bucket, empty buckets too ({"empty":true}), every
                            digit kept (the table rounds as the Health app shows: sums of
                            counts such as steps whole, other values to 4 significant digits)

        An app without read permission for TYPE gets statistics over its own samples only.
        A day the zone skipped (Pacific/Apia's 2011-12-30) is no bucket. A value the
        ledger cannot add up to a finite number (values saved before they were bounded)
        fails the read, naming its bucket (statisticNotFinite, exit 1).

        \(WhereExpressionGrammarHint.text)

        \(ExitStatus.table)
        """

    static let flags: [(String, StatisticsOptions, String)] = [
        ("--sum", .cumulativeSum, "sum"), ("--average", .discreteAverage, "average"), ("--min", .discreteMin, "min"),
        ("--max", .discreteMax, "max"), ("--most-recent", .mostRecent, "mostRecent"), ("--duration", .duration, "duration"),
    ]

    static let command = Command(name: "statistics", abstract: "Sums, averages, min/max per bucket, sources merged by priority",
                                 help: help) { args, global in
        if handledHelp(&args, help) { return }
        guard let identity = try Identity.read(&args) else { return }
        var options: StatisticsOptions = []
        for (flag, option, _) in flags where args.flag(flag) { options.insert(option) }
        if args.flag("--separate-by-source") { options.insert(.separateBySource) }
        let byText = try args.option("--by")
        let everyText = try args.option("--every")
        let anchorText = try args.option("--anchor")
        let fromText = try args.option("--from"), toText = try args.option("--to")
        var from = try fromText.map { try Parse.date($0, "--from") }
        var to = try toText.map { try Parse.date($0, "--to") }
        let whereText = try args.option("--where")
        let unit = try args.option("--unit").map { try HealthUnit($0) }
        let asOf = try args.option("--as-of").map { try LedgerAccess.instant($0) }
        let typeText = try args.required("TYPE")
        try args.finish()
        guard case .quantity(let type) = try Parse.type(typeText) else {
            throw CLIError.invalidInput(StatisticsError.notAQuantityType(typeText).description)
        }
        if let unit, !unit.isCompatible(with: type.canonicalUnit) {
            throw CLIError.invalidInput("incompatibleUnits: --unit \(unit.canonicalString) does not convert to \(type.shortName)'s \(type.canonicalUnit.canonicalString)")
        }
        if options.subtracting(.separateBySource).isEmpty {
            options.insert(type.aggregationStyle == .cumulative ? .cumulativeSum : .discreteAverage)
        }
        if let from, let to, to < from { throw CLIError.usage("--to is before --from") }
        var interval: StatisticsInterval?
        if let byText {
            guard let u = StatisticsInterval.Unit(rawValue: byText) else {
                throw CLIError.usage("--by takes minute, hour, day, week, month or year")
            }
            guard let n = Int(everyText ?? "1") else { throw CLIError.usage("--every takes a whole number") }
            do { interval = try StatisticsInterval(u, count: n) } catch { throw CLIError.usage("--every: \(error)") }
        } else if everyText != nil || anchorText != nil {
            throw CLIError.usage("--every and --anchor go with --by")
        }
        var anchorGiven = try anchorText.map { try Parse.date($0, "--anchor") }
        let filter = try whereText.map { try Parse.predicate($0, .quantity(type)) }

        var view = try LedgerView.read(global, as: identity, limit: asOf.map { .instant($0) } ?? .end)
        let zone = global.timeZone(ledgerZone: view.ownerTimeZone)
        // A date alone is the start of that day in the zone of the buckets (checked in UTC above).
        from = try fromText.map { try Parse.date($0, "--from", zone: zone) }
        to = try toText.map { try Parse.date($0, "--to", zone: zone) }
        anchorGiven = try anchorText.map { try Parse.date($0, "--anchor", zone: zone) }
        if let from, let to, to < from { throw CLIError.usage("--to is before --from") }
        let predicate = from == nil && to == nil ? nil : DatePredicate(start: from, end: to)
        let shownUnit = unit ?? type.canonicalUnit
        let printer = Printer(type: type, options: options, unit: shownUnit, zone: zone, json: global.json)
        guard let interval else {
            let s = try view.statistics(for: type, predicate: predicate, filter: filter, options: options)
            if !global.json { printer.header() }
            try printer.print(s)
            return
        }
        let anchor = anchorGiven ?? defaultAnchor(interval.unit, zone)
        let collection = try view.statisticsCollection(for: type, predicate: predicate, filter: filter, options: options,
                                                       anchor: anchor, interval: interval, timeZone: zone)
        let filled = collection.statistics()
        if !global.json { printer.header() }
        guard let first = filled.first, let last = filled.last else {
            if global.json, let from, let to {
                try collection.enumerateStatistics(from: from, to: to) { try printer.print($0) }
            }
            return
        }
        if global.json {
            try collection.enumerateStatistics(from: from ?? first.startDate, to: to ?? last.endDate) { try printer.print($0) }
        } else {
            for s in filled { try printer.print(s) }
        }
    }

    /// Midnight of 2000-01-01 in `zone` (for weeks: Monday 2000-01-03).
    static func defaultAnchor(_ unit: StatisticsInterval.Unit, _ zone: TimeZone) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.date(from: DateComponents(year: 2000, month: 1, day: unit == .week ? 3 : 1))!
    }

    /// `2025-06-01T00:00:00+02:00`: a date in a zone.
    static func local(_ date: Date, _ zone: TimeZone) -> String {
        let offset = zone.secondsFromGMT(for: date)
        var text = ISO8601.string(date.addingTimeInterval(Double(offset)))
        text.removeLast()  // the Z
        let sign = offset < 0 ? "-" : "+"
        let a = abs(offset)
        return text + sign + ISO8601.pad(a / 3600, 2) + ":" + ISO8601.pad(a / 60 % 60, 2)
    }

    struct Printer {
        let type: QuantityType
        let options: StatisticsOptions
        let unit: HealthUnit
        let zone: TimeZone
        let json: Bool

        var columns: [(String, StatisticsOptions)] {
            StatisticsCommand.flags.filter { options.contains($0.1) }.map { ($0.2, $0.1) }
        }

        func header() {
            let names = columns.map { $0.1 == .duration ? "duration (s)" : "\($0.0) (\(unit.canonicalString))" }
            Output.line((["start", "end"] + names).joined(separator: "\t"))
        }

        /// The bucket `s`'s values (of `source`, or merged) in the shown unit, by column;
        /// one that does not convert to a finite number fails the read, naming it.
        func values(_ v: StatisticsValues, of s: Statistics, source: String? = nil) throws -> [(String, Double?)] {
            try columns.map { name, option in
                let canonical: Double?
                switch option {
                case .cumulativeSum: canonical = v.sum
                case .discreteAverage: canonical = v.average
                case .discreteMin: canonical = v.minimum
                case .discreteMax: canonical = v.maximum
                case .mostRecent: canonical = v.mostRecent
                default: return (name, v.duration)
                }
                guard let canonical else { return (name, nil) }
                let shown = type.canonicalUnit == unit ? canonical : try Quantity(canonical, type.canonicalUnit).doubleValue(for: unit)
                guard shown.isFinite else {
                    throw StatisticsNotFinite(type: type, statistic: name, start: s.startDate, end: s.endDate, source: source)
                }
                return (name, shown)
            }
        }

        /// Whether column `name` shows whole numbers: a sum of counts (steps, as the Health app).
        func whole(_ name: String) -> Bool { name == "sum" && unit == .count }

        func json(_ v: StatisticsValues, of s: Statistics, source: String? = nil) throws -> JSONObject {
            var o = JSONObject()
            for (name, value) in try values(v, of: s, source: source) { o.set(name, value) }
            if options.contains(.mostRecent), let i = v.mostRecentInterval {
                o.set("mostRecentStart", StatisticsCommand.local(i.start, zone))
                o.set("mostRecentEnd", StatisticsCommand.local(i.end, zone))
            }
            return o
        }

        func print(_ s: Statistics) throws {
            let start = StatisticsCommand.local(s.startDate, zone), end = StatisticsCommand.local(s.endDate, zone)
            if json {
                var o = JSONObject()
                o.set("start", start)
                o.set("end", end)
                o.set("type", type.shortName)
                o.set("unit", unit.canonicalString)
                if s.isEmpty {
                    o.set("empty", true)
                } else {
                    let merged = try json(s.values, of: s)
                    o.setRaw("values", merged.string)
                    if options.contains(.separateBySource) {
                        var by = JSONObject()
                        for source in s.sources { by.set(source, try json(s.valuesBySource[source]!, of: s, source: source)) }
                        o.set("sources", by)
                    }
                }
                Output.line(o.string)
                return
            }
            guard !s.isEmpty else { return }
            func cells(_ v: StatisticsValues, source: String? = nil) throws -> [String] {
                try values(v, of: s, source: source).map { name, value in value.map { TableNumber.format($0, whole: whole(name)) } ?? "-" }
            }
            Output.line(([start, end] + (try cells(s.values))).joined(separator: "\t"))
            if options.contains(.mostRecent), let i = s.values.mostRecentInterval {
                Output.line("  most recent sample: \(StatisticsCommand.local(i.start, zone)) – \(StatisticsCommand.local(i.end, zone))")
            }
            for source in s.sources {
                Output.line((["  " + source, ""] + (try cells(s.valuesBySource[source]!, source: source))).joined(separator: "\t"))
            }
        }
    }
}

/// Where the `--where` grammar is described.
enum WhereExpressionGrammarHint {
    static let text = "--where EXPR: see `healthledger query --help` for the predicate language."
}
