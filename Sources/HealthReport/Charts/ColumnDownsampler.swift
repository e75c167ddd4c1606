/// Downsampling per pixel column: whatever the number of points, a chart draws at
/// most two per column (the column's lowest and highest, in time order), so ten years
/// of samples cost what one screen width costs, and no peak or dip disappears.
public enum ColumnDownsampler {
    /// The column of `x` among `columns` equal columns over [from, to].
    static func column(_ x: Double, from: Double, to: Double, columns: Int) -> Int {
        guard to > from else { return 0 }
        let c = Int(((x - from) / (to - from) * Double(columns)).rounded(.down))
        return Swift.max(0, Swift.min(columns - 1, c))
    }

    /// Points (sorted by x) reduced to each column's minimum and maximum, in x order
    /// (one point when they are the same point). Returns the input unchanged when it
    /// has at most two points per column.
    public static func minMax(_ points: [ChartPoint], from: Double, to: Double, columns: Int) -> [ChartPoint] {
        guard columns > 0, points.count > 2 * columns else { return points }
        var out: [ChartPoint] = []
        out.reserveCapacity(2 * columns)
        var i = 0
        while i < points.count {
            let c = column(points[i].x, from: from, to: to, columns: columns)
            var lowest = i, highest = i
            var j = i + 1
            while j < points.count, column(points[j].x, from: from, to: to, columns: columns) == c {
                if points[j].y < points[lowest].y { lowest = j }
                if points[j].y > points[highest].y { highest = j }
                j += 1
            }
            if lowest == highest {
                out.append(points[lowest])
            } else {
                out.append(points[Swift.min(lowest, highest)])
                out.append(points[Swift.max(lowest, highest)])
            }
            i = j
        }
        return out
    }

    /// Band points (sorted by x) reduced to one per column: the column's lowest low,
    /// highest high, and the mean of its `y`, at the column's first x.
    public static func band(_ points: [ChartPoint], from: Double, to: Double, columns: Int) -> [ChartPoint] {
        guard columns > 0, points.count > columns else { return points }
        var out: [ChartPoint] = []
        out.reserveCapacity(columns)
        var i = 0
        while i < points.count {
            let c = column(points[i].x, from: from, to: to, columns: columns)
            var low = points[i].minimum, high = points[i].maximum, sum = points[i].y
            var j = i + 1
            while j < points.count, column(points[j].x, from: from, to: to, columns: columns) == c {
                low = Swift.min(low, points[j].minimum)
                high = Swift.max(high, points[j].maximum)
                sum += points[j].y
                j += 1
            }
            out.append(ChartPoint(x: points[i].x, y: sum / Double(j - i), low: low, high: high))
            i = j
        }
        return out
    }
}
