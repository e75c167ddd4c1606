import Foundation
import HealthModel

/// The report as one self-contained HTML page: CSS and SVG inline, a
/// Content-Security-Policy that allows no network access at all, no fonts but the
/// reader's own, a print style sheet, and one small inline script (the audit
/// timeline's app filter; the page reads fully without it).
public enum ReportHTML {
    public static func render(_ data: HealthReportData) -> String {
        let format = ReportFormat(locale: data.locale, timeZone: data.timeZone)
        var days = LocalDays(data.timeZone)
        var h = "<!DOCTYPE html>\n<html lang=\"\(SVGText.escape(data.locale.identifier.replacingOccurrences(of: "_", with: "-")))\"><head><meta charset=\"utf-8\">"
        h += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        h += "<title>Health and audit report — \(SVGText.escape(data.viewer))</title><style>\(css)</style></head><body>"
        let period = [data.from.map { "from " + format.dateTime($0) }, data.to.map { "to " + format.dateTime($0) }].compactMap { $0 }
        h += "<header><h1>Health and audit report</h1><p class=\"meta\">For <strong id=\"viewer\">\(SVGText.escape(data.viewer))</strong>"
        h += data.appBundle == nil ? " (the owner: every source)" : " (what this app may read, as every read of the store)"
        h += " · \(period.isEmpty ? "all dates" : period.joined(separator: " "))"
        h += " · time zone \(SVGText.escape(data.timeZone.identifier)) · locale \(SVGText.escape(data.locale.identifier))"
        h += " · made <time>\(format.dateTime(data.generatedAt))</time></p>"
        h += "<nav><a href=\"#profile\">Profile</a> <a href=\"#charts\">Charts</a> <a href=\"#sources\">Where the data came from</a> <a href=\"#audit\">Audit timeline</a> <a href=\"#integrity\">Integrity</a></nav></header><main>"

        h += profileSection(data, format)
        h += chartsSection(data, format, &days)
        h += sourcesSection(data, format)
        h += auditSection(data, format)
        h += integritySection(data, format)
        h += "</main><script>\(script)</script></body></html>\n"
        return h
    }

    static func profileSection(_ data: HealthReportData, _ format: ReportFormat) -> String {
        let p = data.profile
        func row(_ id: String, _ label: String, _ value: String?, _ date: Date? = nil, _ source: String? = nil) -> String {
            "<tr><th scope=\"row\">\(label)</th><td id=\"\(id)\">\(SVGText.escape(value ?? "—"))</td><td>\(date.map(format.dateTime) ?? "")</td><td>\(SVGText.escape(source ?? ""))</td></tr>"
        }
        var s = "<section id=\"profile\"><h2>Profile</h2><table class=\"profile\"><thead><tr><th scope=\"col\"></th><th scope=\"col\">Value</th><th scope=\"col\">Measured</th><th scope=\"col\">Source</th></tr></thead><tbody>"
        s += row("age", "Age", p.age.map(String.init))
        s += row("sex", "Sex", p.sex == .notSet ? nil : p.sex.displayName)
        s += row("blood-type", "Blood type", p.bloodType == .notSet ? nil : p.bloodType.displayName)
        s += row("height", "Height", p.height?.text, p.height?.date, p.height?.source)
        s += row("weight", "Weight", p.weight?.text, p.weight?.date, p.weight?.source)
        s += row("bmi", "BMI", p.bodyMassIndex, p.bodyMassIndexDate, p.bodyMassIndex == nil ? nil : "from the latest height and weight")
        return s + "</tbody></table></section>"
    }

    static func chartsSection(_ data: HealthReportData, _ format: ReportFormat, _ days: inout LocalDays) -> String {
        let zone = data.timeZone
        let day = 86_400.0
        let numbers: @Sendable (Double, Int) -> String = { v, d in format.number(v, decimals: d) }
        let range: ClosedRange<Double>? = {
            guard let f = data.from, let t = data.to, t > f else { return nil }
            return f.timeIntervalSince1970...t.timeIntervalSince1970
        }()
        func noon(_ d: Int) -> Double { days.start(ofDay: d) + day / 2 }
        var figures: [String] = []
        var notDrawn = data.notDrawn
        /// Whether every value of a chart is finite; else the chart is named as not drawn.
        func drawable(_ id: String, _ title: String, _ values: [Double]) -> Bool {
            guard let bad = values.first(where: { !$0.isFinite }) else { return true }
            notDrawn.append(HealthReportData.NotDrawn(id: id, title: title, reason: "a value is \(bad) (the ledger holds values too large to add up or convert, saved before values were bounded)"))
            return false
        }
        func figure(_ chart: Chart, _ table: ReportTable, note: String = "") -> String {
            "<figure id=\"fig-\(chart.id)\"><figcaption><h3>\(SVGText.escape(chart.title))</h3>\(note.isEmpty ? "" : "<p class=\"note\">\(SVGText.escape(note))</p>")</figcaption>"
                + chart.svg()
                + "<details><summary>Data table (\(table.rows.count) row\(table.rows.count == 1 ? "" : "s"), one per \(table.rowUnit))</summary>\(table.html)</details></figure>"
        }

        if !data.bodyMass.isEmpty,
           drawable("body-mass", "Body mass", data.bodyMass.map(\.1) + data.bodyMassAverage.map(\.value)
                        + ReportGatherer.dailyMeans(data.bodyMass, &days).map(\.value)) {
            let points = data.bodyMass.map { ChartPoint(x: $0.0, y: $0.1) }
            let average = data.bodyMassAverage.map { ChartPoint(x: noon($0.day), y: $0.value) }
            let chart = Chart(id: "body-mass", title: "Body mass", description: "Body mass in kilograms, \(points.count) measurements from \(LocalDays.text(ofDay: days.day(points.first!.x))) to \(LocalDays.text(ofDay: days.day(points.last!.x))), with the 7-day mean.",
                              unit: "kg", xAxis: .time(zone), layers: [.line(name: "weight", points: points, style: 0, maxGap: 14 * day),
                                                                        .line(name: "7-day mean", points: average, style: 1, maxGap: 8 * day)],
                              xRange: range, numberFormat: numbers)
            let daily = ReportGatherer.dailyMeans(data.bodyMass, &days)
            let table = ReportTable.daily(days: daily.map(\.day), columns: ["Day", "Weight (kg, mean of the day)", "7-day mean (kg)"],
                                          values: zip(daily, data.bodyMassAverage).map { [$0.value, $1.value] }, rollups: [.mean, .mean],
                                          format: format.number, decimals: [2, 2])
            figures.append(figure(chart, table))
        }
        if !data.bodyMassIndex.isEmpty,
           drawable("bmi", "Body mass index", data.bodyMassIndex.map(\.1) + ReportGatherer.dailyMeans(data.bodyMassIndex, &days).map(\.value)) {
            let points = data.bodyMassIndex.map { ChartPoint(x: $0.0, y: $0.1) }
            let name = data.bodyMassIndexComputed ? "BMI (weight over the latest height)" : "BMI"
            let chart = Chart(id: "bmi", title: "Body mass index", description: "\(name), \(points.count) values.", unit: "kg/m²",
                              xAxis: .time(zone), layers: [.line(name: name, points: points, style: 2, maxGap: 14 * day)], xRange: range,
                              numberFormat: numbers, height: 180)
            let daily = ReportGatherer.dailyMeans(data.bodyMassIndex, &days)
            let table = ReportTable.daily(days: daily.map(\.day), columns: ["Day", "BMI (mean of the day)"], values: daily.map { [$0.value] },
                                          rollups: [.mean], format: format.number, decimals: [2])
            figures.append(figure(chart, table))
        }
        if !data.steps.isEmpty {
            let steps = data.steps
            var weeks: [Int: (Double, Int)] = [:]
            for s in steps { let w = LocalDays.week(ofDay: s.day); let e = weeks[w] ?? (0, 0); weeks[w] = (e.0 + s.value, e.1 + 1) }
            let weekly = weeks.keys.sorted().map { w in ChartPoint(x: days.start(ofDay: LocalDays.firstDay(ofWeek: w)) + 3.5 * day, y: weeks[w]!.0 / Double(weeks[w]!.1)) }
            if drawable("steps", "Daily steps", steps.map(\.value) + weekly.map(\.y)) {
            let chart = Chart(id: "steps", title: "Daily steps", description: "Steps per day, every source merged by priority (the statistics engine), \(steps.count) days, with each week's mean.",
                              unit: "steps", xAxis: .time(zone), layers: [.bars(name: "steps per day", points: steps.map { ChartPoint(x: days.start(ofDay: $0.day), y: $0.value) }, style: 4, width: day),
                                                                           .line(name: "weekly mean", points: weekly, style: 1, maxGap: 8 * day)],
                              xRange: range, includeZero: true, numberFormat: numbers)
            let table = ReportTable.daily(days: steps.map(\.day), columns: ["Day", "Steps"], values: steps.map { [$0.value] }, rollups: [.sum],
                                          format: format.number, decimals: [0])
            figures.append(figure(chart, table))
            }
        }
        if !data.heartRate.isEmpty || !data.restingHeartRate.isEmpty,
           drawable("heart-rate", "Heart rate per day", data.heartRate.flatMap { [$0.min, $0.mean, $0.max] } + data.restingHeartRate.map(\.value)) {
            var layers: [Chart.Layer] = []
            if !data.heartRate.isEmpty {
                layers.append(.band(name: "min–max, line: mean", points: data.heartRate.map { ChartPoint(x: noon($0.day), y: $0.mean, low: $0.min, high: $0.max) }, style: 1, maxGap: 1.5 * day))
            }
            if !data.restingHeartRate.isEmpty {
                layers.append(.line(name: "resting", points: data.restingHeartRate.map { ChartPoint(x: noon($0.day), y: $0.value) }, style: 0, maxGap: 1.5 * day))
            }
            let chart = Chart(id: "heart-rate", title: "Heart rate per day", description: "Heart rate in beats per minute: each day's minimum, mean and maximum over \(data.heartRate.reduce(0) { $0 + $1.count }) samples on \(data.heartRate.count) days, and resting heart rate on \(data.restingHeartRate.count) days.",
                              unit: "bpm", xAxis: .time(zone), layers: layers, xRange: range, numberFormat: numbers)
            var byDay: [Int: [Double?]] = [:]
            for r in data.heartRate { byDay[r.day] = [r.min, r.mean, r.max, nil] }
            for r in data.restingHeartRate { byDay[r.day, default: [nil, nil, nil, nil]][3] = r.value }
            let keys = byDay.keys.sorted()
            let table = ReportTable.daily(days: keys, columns: ["Day", "Minimum (bpm)", "Mean (bpm)", "Maximum (bpm)", "Resting (bpm)"],
                                          values: keys.map { byDay[$0]! }, rollups: [.min, .mean, .max, .mean], format: format.number, decimals: [0, 1, 0, 1])
            figures.append(figure(chart, table))
        }
        if !data.sleep.isEmpty, drawable("sleep", "Sleep per night", data.sleep.flatMap { $0.hours + [$0.inBed] }) {
            let names = ReportGatherer.sleepStages.map(\.name)
            var layers: [Chart.Layer] = [.stacked(names: names, stacks: data.sleep.map { Chart.Stack(x: days.start(ofDay: $0.day) - day / 2, values: $0.hours) }, firstStyle: 0, width: day)]
            let inBed = data.sleep.filter { $0.inBed > 0 }
            if !inBed.isEmpty { layers.append(.line(name: "in bed", points: inBed.map { ChartPoint(x: days.start(ofDay: $0.day), y: $0.inBed) }, style: 6, maxGap: 1.5 * day)) }
            let chart = Chart(id: "sleep", title: "Sleep per night", description: "Hours asleep per night by stage (deep, core, REM, unspecified asleep, awake) and time in bed, \(data.sleep.count) nights; a night is the noon-to-noon window ending on its date; overlapping records from several sources count once.",
                              unit: "hours", xAxis: .time(zone), layers: layers, xRange: range, includeZero: true, numberFormat: numbers)
            let table = ReportTable.daily(days: data.sleep.map(\.day), columns: ["Day"] + names.map { "\($0) (h)" } + ["in bed (h)"],
                                          values: data.sleep.map { $0.hours.map(Optional.some) + [$0.inBed] },
                                          rollups: Array(repeating: .mean, count: names.count + 1), format: format.number,
                                          decimals: Array(repeating: 2, count: names.count + 1))
            figures.append(figure(chart, table))
        }
        if !data.activeEnergy.isEmpty, drawable("active-energy", "Active energy per day", data.activeEnergy.map(\.value)) {
            let energy = data.activeEnergy
            let chart = Chart(id: "active-energy", title: "Active energy per day", description: "Active energy burned per day in kilocalories, every source merged by priority (the statistics engine), \(energy.count) days.",
                              unit: "kcal", xAxis: .time(zone), layers: [.bars(name: "active energy", points: energy.map { ChartPoint(x: days.start(ofDay: $0.day), y: $0.value) }, style: 5, width: day)],
                              xRange: range, includeZero: true, numberFormat: numbers)
            let table = ReportTable.daily(days: energy.map(\.day), columns: ["Day", "Active energy (kcal)"], values: energy.map { [$0.value] },
                                          rollups: [.sum], format: format.number, decimals: [0])
            figures.append(figure(chart, table))
        }
        if !data.workouts.isEmpty {
            let stacks = data.workouts.map { Chart.Stack(x: days.start(ofDay: LocalDays.firstDay(ofWeek: $0.week)), values: $0.counts.map(Double.init)) }
            let total = data.workouts.reduce(0) { $0 + $1.counts.reduce(0, +) }
            let chart = Chart(id: "workouts", title: "Workouts per week", description: "\(total) workouts in \(data.workouts.count) weeks (weeks start on Monday), by activity type: \(data.workoutTypes.joined(separator: ", ")).",
                              unit: "workouts", xAxis: .time(zone), layers: [.stacked(names: data.workoutTypes, stacks: stacks, firstStyle: 0, width: 7 * day)],
                              xRange: range, includeZero: true, wholeNumbers: true, numberFormat: numbers)
            let rows = data.workouts.map { w in [LocalDays.text(ofDay: LocalDays.firstDay(ofWeek: w.week))] + w.counts.map(String.init) }
            figures.append(figure(chart, ReportTable(columns: ["Week of"] + data.workoutTypes, rows: rows, rowUnit: "week")))
        }
        var s = "<section id=\"charts\"><h2>Charts</h2>"
        for n in notDrawn {
            s += "<p class=\"problem\" id=\"not-drawn-\(SVGText.escape(n.id))\"><strong>\(SVGText.escape(n.title))</strong>: not drawn: \(SVGText.escape(n.reason))</p>"
        }
        s += figures.isEmpty && notDrawn.isEmpty ? "<p>No data to chart in this period.</p>" : figures.joined()
        return s + "</section>"
    }

    static func sourcesSection(_ data: HealthReportData, _ format: ReportFormat) -> String {
        var s = "<section id=\"sources\"><h2>Where the data came from</h2>"
        var totals: [String: Int] = [:], identifiers: [String: String] = [:]
        for r in data.sources { totals[r.type, default: 0] += r.count; identifiers[r.type] = r.identifier }
        s += "<h3>Samples per type</h3><table id=\"type-totals\"><thead><tr><th scope=\"col\">Type</th><th scope=\"col\">Samples</th></tr></thead><tbody>"
        for type in totals.keys.sorted() {
            s += "<tr data-type=\"\(SVGText.escape(identifiers[type]!))\"><th scope=\"row\">\(SVGText.escape(type))</th><td data-count=\"\(totals[type]!)\">\(format.number(Double(totals[type]!), decimals: 0))</td></tr>"
        }
        s += "</tbody></table>"
        s += "<h3>Samples per source and device</h3><table id=\"source-counts\"><thead><tr><th scope=\"col\">Type</th><th scope=\"col\">Source</th><th scope=\"col\">Device</th><th scope=\"col\">Samples</th></tr></thead><tbody>"
        for r in data.sources {
            s += "<tr><th scope=\"row\">\(SVGText.escape(r.type))</th><td>\(SVGText.escape(r.source))</td><td>\(SVGText.escape(r.device.isEmpty ? "—" : r.device))</td><td data-count=\"\(r.count)\">\(format.number(Double(r.count), decimals: 0))</td></tr>"
        }
        s += "</tbody></table><h3>Source priority</h3>"
        if data.appBundle != nil {
            s += "<p id=\"priority\">The order of sources is the owner’s to see; daily sums above follow it.</p>"
        } else if data.priorities.isEmpty {
            s += "<p id=\"priority\">No steps or active energy: no order of sources is in use.</p>"
        } else {
            s += "<p class=\"note\">Where sources overlap in time, the daily steps and active energy count only the first of them (the owner’s order, then HealthKit’s default: entered by hand, Apple Watch, iPhone, other apps).</p>"
            s += "<table id=\"priority\"><thead><tr><th scope=\"col\">Type</th><th scope=\"col\">Sources, first wins</th></tr></thead><tbody>"
            for p in data.priorities { s += "<tr><th scope=\"row\">\(SVGText.escape(p.type))</th><td>\(SVGText.escape(p.sources.joined(separator: " › ")))</td></tr>" }
            s += "</tbody></table>"
        }
        return s + "</section>"
    }

    static func auditSection(_ data: HealthReportData, _ format: ReportFormat) -> String {
        var s = "<section id=\"audit\"><h2>Audit timeline</h2>"
        s += data.appBundle == nil
            ? "<p class=\"note\">Registrations, requests, decisions, imports, deletions and characteristic changes, in log order (saves are counted by their imports, not listed).</p>"
            : "<p class=\"note\">The events about this app: its registration, requests, deletions and the owner’s sharing answers (read answers are never shown to an app).</p>"
        if data.timelineOmitted > 0 { s += "<p class=\"note\">\(data.timelineOmitted) older events are left out; `healthledger log` lists every one.</p>" }
        let apps = Set(data.timeline.compactMap(\.app)).sorted()
        s += "<p class=\"filter\"><label>Show <select id=\"app-filter\"><option value=\"\">every app and the owner</option><option value=\"-\">the owner’s own events</option>"
        s += apps.map { "<option value=\"\(SVGText.escape($0))\">\(SVGText.escape($0))</option>" }.joined()
        s += "</select></label></p><table id=\"timeline\"><thead><tr><th scope=\"col\">#</th><th scope=\"col\">Recorded</th><th scope=\"col\">By</th><th scope=\"col\">Event</th><th scope=\"col\">What</th></tr></thead><tbody>"
        for e in data.timeline {
            s += "<tr data-app=\"\(SVGText.escape(e.app ?? "-"))\"><th scope=\"row\">\(e.sequence)</th><td class=\"time\">\(format.dateTime(e.recordedAt))</td><td>\(SVGText.escape(e.actor))</td><td>\(e.kind)</td><td>\(SVGText.escape(e.what))</td></tr>"
        }
        return s + "</tbody></table></section>"
    }

    static func integritySection(_ data: HealthReportData, _ format: ReportFormat) -> String {
        let i = data.integrity
        var s = "<section id=\"integrity\"><h2>Integrity</h2><dl>"
        s += "<dt>verify\(i.full ? "" : " (the log: framing, checksums, the hash chain over every byte)")</dt>"
        s += "<dd id=\"verify\">\(i.intact ? "OK: the ledger is intact" : "NOT INTACT")</dd>"
        for p in i.problems { s += "<dd class=\"problem\">\(SVGText.escape(p))</dd>" }
        if !i.full {
            s += "<dd class=\"note\">Events against the rules and snapshots against a fresh replay were not checked here: `healthledger verify` (or `report --full-verify`) checks them too.</dd>"
        }
        s += "<dt>Events</dt><dd id=\"events\">\(i.events)</dd><dt>Log</dt><dd>\(i.logBytes) bytes</dd>"
        s += "<dt>Chain head</dt><dd><code id=\"chain-head\">\(i.chainHead)</code></dd>"
        if let digest = i.projectionDigest { s += "<dt>Projection digest</dt><dd><code>\(digest)</code></dd>" }
        if let c = i.checkpoint {
            s += "<dt>Checkpoint (Merkle tree head)</dt><dd><code id=\"checkpoint\">\(c.size) events, root \(SVGText.escape(c.root))</code></dd>"
        } else {
            s += "<dt>Checkpoint</dt><dd id=\"checkpoint\">none kept (`healthledger checkpoint` makes one)</dd>"
        }
        s += "<dt>Report made</dt><dd>\(format.dateTime(data.generatedAt)) (\(SVGText.escape(ISO8601.string(data.generatedAt))))</dd>"
        s += "<dt>Rebuild with</dt><dd><code id=\"command\">\(SVGText.escape(data.command))</code></dd>"
        return s + "</dl></section>"
    }

    static let css = """
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1a1a1a;background:#fff;margin:0 auto;max-width:62rem;padding:1rem 1.5rem}
        h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.25rem;border-bottom:2px solid #333;margin-top:2rem}h3{font-size:1rem;margin:.8rem 0 .3rem}
        .meta,.note{color:#444}nav a{margin-right:1rem}
        table{border-collapse:collapse;margin:.4rem 0;font-variant-numeric:tabular-nums}
        th,td{border-bottom:1px solid #ddd;padding:.15rem .6rem;text-align:left;vertical-align:top}td[data-count]{text-align:right}
        figure{margin:1rem 0;break-inside:avoid}figcaption h3{margin-bottom:0}svg.chart{width:100%;height:auto;max-width:760px;display:block}
        details{margin:.3rem 0}summary{cursor:pointer;color:#0b4f8a}details table{font-size:12px}
        dt{font-weight:600;margin-top:.4rem}dd{margin-left:1rem}code{font:12px ui-monospace,"DejaVu Sans Mono",monospace;word-break:break-all}
        .problem{color:#a00000}.time{white-space:nowrap}
        @media print{nav,.filter{display:none}body{max-width:none;font-size:11pt}h2{break-after:avoid}summary{color:#000}a{color:#000;text-decoration:none}}
        """

    static let script = """
        (function(){var f=document.getElementById('app-filter');if(!f)return;f.addEventListener('change',function(){var v=f.value;
        var rows=document.querySelectorAll('#timeline tbody tr');for(var i=0;i<rows.length;i++){rows[i].hidden=!(v===''||rows[i].getAttribute('data-app')===v);}});})();
        """
}
