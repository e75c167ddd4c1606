/// A data table (a chart's fallback): a header and rows of text. Long daily tables
/// are rolled up into months so that ten years stay small.
struct ReportTable {
    var columns: [String]
    var rows: [[String]]
    /// What one row is (`day`, `month, its days rolled up`).
    var rowUnit: String

    /// How a column is rolled up into a month.
    enum Rollup { case mean, sum, min, max }

    /// Rows per day when there are at most `maxRows` days, else per month.
    static func daily(days: [Int], columns: [String], values: [[Double?]], rollups: [Rollup], maxRows: Int = 800,
                      format: (Double, Int) -> String, decimals: [Int]) -> ReportTable {
        func cell(_ v: Double?, _ k: Int) -> String { v.map { format($0, decimals[k]) } ?? "–" }
        if days.count <= maxRows {
            return ReportTable(columns: columns, rows: zip(days, values).map { d, row in [LocalDays.text(ofDay: d)] + row.indices.map { cell(row[$0], $0) } },
                               rowUnit: "day")
        }
        var rows: [[String]] = []
        var month = "", group: [[Double?]] = []
        func flush() {
            guard !group.isEmpty else { return }
            var row = [month]
            for k in rollups.indices {
                let present = group.compactMap { $0[k] }
                guard !present.isEmpty else { row.append("–"); continue }
                let v: Double
                switch rollups[k] {
                case .mean: v = present.reduce(0, +) / Double(present.count)
                case .sum: v = present.reduce(0, +)
                case .min: v = present.min()!
                case .max: v = present.max()!
                }
                row.append(cell(v, k))
            }
            rows.append(row)
            group = []
        }
        for (d, row) in zip(days, values) {
            let m = String(LocalDays.text(ofDay: d).prefix(7))
            if m != month { flush(); month = m }
            group.append(row)
        }
        flush()
        return ReportTable(columns: [columns[0].replacingOccurrences(of: "Day", with: "Month")] + columns.dropFirst(), rows: rows,
                           rowUnit: "month, its days rolled up")
    }

    var html: String {
        var s = "<table><thead><tr>" + columns.map { "<th scope=\"col\">\(SVGText.escape($0))</th>" }.joined() + "</tr></thead><tbody>"
        for row in rows {
            s += "<tr>" + row.enumerated().map { $0.offset == 0 ? "<th scope=\"row\">\(SVGText.escape($0.element))</th>" : "<td>\(SVGText.escape($0.element))</td>" }.joined() + "</tr>"
        }
        return s + "</tbody></table>"
    }
}
