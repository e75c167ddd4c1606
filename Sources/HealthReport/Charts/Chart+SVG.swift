import Foundation

extension Chart {
    /// The chart as one `<svg>` element: `<title>` and `<desc>` first (named by
    /// `aria-labelledby`), pattern definitions, grid and ticks, the layers (each
    /// downsampled to the plot's pixel columns), axes and the legend.
    public func svg() -> String {
        let w = Double(width), h = Double(height)
        let plotLeft = Self.left, plotRight = w - Self.right, plotTop = Self.top, plotBottom = h - Self.bottom
        let columns = max(1, Int(plotRight - plotLeft))
        let xr = xRange ?? paddedDataXRange ?? 0...1
        let x0 = xr.lowerBound, x1 = xr.upperBound > xr.lowerBound ? xr.upperBound : xr.lowerBound + 1
        let (dataLow, dataHigh) = dataYRange
        let yTicks = LinearTicks.nice(min: dataLow, max: dataHigh, count: 5, includeZero: includeZero, minimumStep: wholeNumbers ? 1 : 0)
        let y0 = yTicks.lower, y1 = yTicks.upper > yTicks.lower ? yTicks.upper : yTicks.lower + 1
        func px(_ x: Double) -> Double { plotLeft + (x - x0) / (x1 - x0) * (plotRight - plotLeft) }
        func py(_ y: Double) -> Double { plotBottom - (y - y0) / (y1 - y0) * (plotBottom - plotTop) }
        let c = SVGText.coordinate

        var s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" role=\"img\" id=\"\(id)\" viewBox=\"0 0 \(width) \(height)\""
            + " aria-labelledby=\"\(id)-title \(id)-desc\">"
        s += "<title id=\"\(id)-title\">\(SVGText.escape(title))</title>"
        s += "<desc id=\"\(id)-desc\">\(SVGText.escape(description))</desc>"

        // Pattern definitions for the styles that fill.
        var styles: [Int] = []
        for layer in layers {
            switch layer {
            case .area(_, _, let st, _), .bars(_, _, let st, _): styles.append(st)
            case .stacked(let names, _, let first, _): styles += (0..<names.count).map { first + $0 }
            case .line, .band: break
            }
        }
        let defs = Set(styles).sorted().map { ChartStyle.patternDefinition($0, chartID: id) }.joined()
        if !defs.isEmpty { s += "<defs>\(defs)</defs>" }

        // Horizontal grid and y labels.
        s += "<g class=\"grid\" stroke=\"#d0d0d0\" stroke-width=\"1\">"
        for v in yTicks.values { s += "<path d=\"M\(c(plotLeft)) \(c(py(v)))H\(c(plotRight))\"/>" }
        s += "</g><g class=\"ylabels\" font-size=\"11\" text-anchor=\"end\" fill=\"#333\">"
        for v in yTicks.values {
            s += "<text x=\"\(c(plotLeft - 6))\" y=\"\(c(py(v) + 4))\">\(SVGText.escape(numberFormat(v, yTicks.decimals)))</text>"
        }
        s += "</g><text class=\"unit\" x=\"\(c(plotLeft - 6))\" y=\"\(c(plotTop - 10))\" font-size=\"11\" text-anchor=\"end\" fill=\"#333\">\(SVGText.escape(unit))</text>"

        // x ticks.
        s += "<g class=\"xlabels\" font-size=\"11\" text-anchor=\"middle\" fill=\"#333\">"
        switch xAxis {
        case .time(let zone):
            let t = TimeTicks.ticks(from: x0, to: x1, in: zone, maxCount: max(2, columns / 80))
            for (v, label) in zip(t.values, t.labels) {
                s += "<path d=\"M\(c(px(v))) \(c(plotBottom))v4\" stroke=\"#333\"/><text x=\"\(c(px(v)))\" y=\"\(c(plotBottom + 16))\">\(SVGText.escape(label))</text>"
            }
        case .linear:
            let t = LinearTicks.nice(min: x0, max: x1, count: max(2, columns / 80))
            for v in t.values where v >= x0 && v <= x1 {
                s += "<path d=\"M\(c(px(v))) \(c(plotBottom))v4\" stroke=\"#333\"/><text x=\"\(c(px(v)))\" y=\"\(c(plotBottom + 16))\">\(SVGText.escape(numberFormat(v, t.decimals)))</text>"
            }
        }
        s += "</g>"

        // Layers, clipped to the plot.
        s += "<clipPath id=\"\(id)-clip\"><rect x=\"\(c(plotLeft))\" y=\"\(c(plotTop - 1))\" width=\"\(c(plotRight - plotLeft))\" height=\"\(c(plotBottom - plotTop + 2))\"/></clipPath>"
        s += "<g clip-path=\"url(#\(id)-clip)\">"
        let xPerColumn = (x1 - x0) / Double(columns)
        for layer in layers {
            switch layer {
            case .line(let name, let points, let style, let maxGap):
                let shown = ColumnDownsampler.minMax(points, from: x0, to: x1, columns: columns)
                s += linePath(shown, maxGap: max(maxGap, xPerColumn * 2), px, py, name: name, style: style)
            case .area(let name, let points, let style, let maxGap):
                let shown = ColumnDownsampler.minMax(points, from: x0, to: x1, columns: columns)
                for run in runs(shown, maxGap: max(maxGap, xPerColumn * 2)) {
                    guard let first = run.first, let last = run.last else { continue }
                    var d = "M\(c(px(first.x))) \(c(py(max(y0, 0))))"
                    for p in run { d += "L\(c(px(p.x))) \(c(py(p.y)))" }
                    d += "L\(c(px(last.x))) \(c(py(max(y0, 0))))Z"
                    s += "<path class=\"area\" d=\"\(d)\" fill=\"\(ChartStyle.fill(style, chartID: id))\" fill-opacity=\"0.55\"><title>\(SVGText.escape(name))</title></path>"
                }
                s += linePath(shown, maxGap: max(maxGap, xPerColumn * 2), px, py, name: name, style: style)
            case .band(let name, let points, let style, let maxGap):
                let shown = ColumnDownsampler.band(points, from: x0, to: x1, columns: columns)
                for run in runs(shown, maxGap: max(maxGap, xPerColumn * 2)) {
                    var d = ""
                    for (i, p) in run.enumerated() { d += (i == 0 ? "M" : "L") + "\(c(px(p.x))) \(c(py(p.high ?? p.y)))" }
                    for p in run.reversed() { d += "L\(c(px(p.x))) \(c(py(p.low ?? p.y)))" }
                    if run.count == 1, let p = run.first {
                        s += "<path class=\"band\" d=\"M\(c(px(p.x))) \(c(py(p.high ?? p.y)))V\(c(py(p.low ?? p.y)))\" stroke=\"\(ChartStyle.colour(style))\" stroke-opacity=\"0.4\" stroke-width=\"3\"/>"
                    } else {
                        s += "<path class=\"band\" d=\"\(d)Z\" fill=\"\(ChartStyle.colour(style))\" fill-opacity=\"0.25\"/>"
                    }
                }
                s += linePath(shown, maxGap: max(maxGap, xPerColumn * 2), px, py, name: name, style: style)
            case .bars(let name, let points, let style, let width):
                s += "<g class=\"bars\" fill=\"\(ChartStyle.fill(style, chartID: id))\">"
                let barWidth = max(1, width / (x1 - x0) * (plotRight - plotLeft) - 1)
                if points.count > columns {
                    // One bar per column: the column's highest, its lowest in the tooltip.
                    for group in groupByColumn(points.map(\.x), x0, x1, columns) {
                        let values = group.map { points[$0].y }
                        let high = values.max() ?? 0, low = values.min() ?? 0
                        let x = points[group[0]].x
                        s += rect(px(x), py(max(high, y0)), max(1, (plotRight - plotLeft) / Double(columns)), py(max(y0, 0)) - py(max(high, y0)),
                                  tip: "\(name): \(numberFormat(low, 0))–\(numberFormat(high, 0))")
                    }
                } else {
                    for p in points {
                        s += rect(px(p.x), py(max(p.y, y0)), barWidth, py(max(y0, 0)) - py(max(p.y, y0)), tip: "\(name): \(numberFormat(p.y, p.y.rounded() == p.y ? 0 : 1))")
                    }
                }
                s += "</g>"
            case .stacked(let names, let stacks, let firstStyle, let width):
                var shown = stacks
                var barWidth = max(1, width / (x1 - x0) * (plotRight - plotLeft) - 1)
                if stacks.count > columns {
                    // Columns holding several stacks show their mean per category.
                    shown = groupByColumn(stacks.map(\.x), x0, x1, columns).map { group in
                        var sums = [Double](repeating: 0, count: names.count)
                        for i in group { for (k, v) in stacks[i].values.enumerated() where k < sums.count { sums[k] += v } }
                        return Stack(x: stacks[group[0]].x, values: sums.map { $0 / Double(group.count) })
                    }
                    barWidth = max(1, (plotRight - plotLeft) / Double(columns))
                }
                for k in names.indices {
                    s += "<g class=\"stack\" fill=\"\(ChartStyle.fill(firstStyle + k, chartID: id))\">"
                    for st in shown where k < st.values.count && st.values[k] > 0 {
                        let below = st.values[..<k].reduce(0, +)
                        let top = py(below + st.values[k]), bottom = py(below)
                        s += rect(px(st.x), top, barWidth, bottom - top, tip: "\(names[k]): \(numberFormat(st.values[k], 1))")
                    }
                    s += "</g>"
                }
            }
        }
        s += "</g>"

        // Axes.
        s += "<path class=\"axes\" d=\"M\(c(plotLeft)) \(c(plotTop))V\(c(plotBottom))H\(c(plotRight))\" fill=\"none\" stroke=\"#333\"/>"

        // Legend, above the plot.
        var items: [(String, Int, Bool)] = []  // name, style, filled
        for layer in layers {
            switch layer {
            case .line(let n, _, let st, _), .band(let n, _, let st, _): items.append((n, st, false))
            case .area(let n, _, let st, _), .bars(let n, _, let st, _): items.append((n, st, true))
            case .stacked(let names, _, let first, _): items += names.enumerated().map { ($0.element, first + $0.offset, true) }
            }
        }
        s += "<g class=\"legend\" font-size=\"11\" fill=\"#222\">"
        var lx = plotLeft + 8
        for (name, style, filled) in items {
            if filled {
                s += "<rect x=\"\(c(lx))\" y=\"6\" width=\"14\" height=\"10\" fill=\"\(ChartStyle.fill(style, chartID: id))\" stroke=\"#333\" stroke-width=\"0.5\"/>"
            } else {
                let dash = ChartStyle.dash(style)
                s += "<path d=\"M\(c(lx)) 11h16\" stroke=\"\(ChartStyle.colour(style))\" stroke-width=\"2\"\(dash.isEmpty ? "" : " stroke-dasharray=\"\(dash)\"")/>"
            }
            s += "<text x=\"\(c(lx + 20))\" y=\"15\">\(SVGText.escape(name))</text>"
            lx += 28 + Double(name.count) * 6.2
        }
        s += "</g></svg>"
        return s
    }

    /// Splits points where consecutive ones are more than `maxGap` apart.
    func runs(_ points: [ChartPoint], maxGap: Double) -> [ArraySlice<ChartPoint>] {
        var out: [ArraySlice<ChartPoint>] = []
        var start = 0
        for i in points.indices.dropFirst() where points[i].x - points[i - 1].x > maxGap {
            out.append(points[start..<i])
            start = i
        }
        if start < points.count { out.append(points[start...]) }
        return out
    }

    /// A polyline per run; a run of one point is a dot.
    func linePath(_ points: [ChartPoint], maxGap: Double, _ px: (Double) -> Double, _ py: (Double) -> Double,
                  name: String, style: Int) -> String {
        let c = SVGText.coordinate
        var d = "", dots = ""
        for run in runs(points, maxGap: maxGap) {
            if run.count == 1, let p = run.first {
                dots += "<circle cx=\"\(c(px(p.x)))\" cy=\"\(c(py(p.y)))\" r=\"2.5\"/>"
                continue
            }
            for (i, p) in run.enumerated() { d += (i == 0 ? "M" : "L") + "\(c(px(p.x))) \(c(py(p.y)))" }
        }
        let dash = ChartStyle.dash(style)
        var s = "<g class=\"series\" stroke=\"\(ChartStyle.colour(style))\" fill=\"\(ChartStyle.colour(style))\"><title>\(SVGText.escape(name))</title>"
        if !d.isEmpty {
            s += "<path d=\"\(d)\" fill=\"none\" stroke-width=\"1.8\" stroke-linejoin=\"round\"\(dash.isEmpty ? "" : " stroke-dasharray=\"\(dash)\"")/>"
        }
        return s + dots + "</g>"
    }

    func rect(_ x: Double, _ y: Double, _ w: Double, _ h: Double, tip: String) -> String {
        let c = SVGText.coordinate
        return "<rect x=\"\(c(x))\" y=\"\(c(y))\" width=\"\(c(w))\" height=\"\(c(max(0, h)))\"><title>\(SVGText.escape(tip))</title></rect>"
    }

    /// Indices of sorted xs grouped by pixel column.
    func groupByColumn(_ xs: [Double], _ x0: Double, _ x1: Double, _ columns: Int) -> [[Int]] {
        var out: [[Int]] = []
        var current = -1
        for (i, x) in xs.enumerated() {
            let col = ColumnDownsampler.column(x, from: x0, to: x1, columns: columns)
            if col != current { out.append([i]); current = col } else { out[out.count - 1].append(i) }
        }
        return out
    }
}
