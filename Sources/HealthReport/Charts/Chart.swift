import Foundation

/// A chart as values: axes, layers of series, a title and a description. `svg()`
/// draws it; nothing here reads or writes anything.
public struct Chart: Sendable {
    /// The horizontal axis.
    public enum XAxis: Sendable {
        /// Instants (seconds since 1970) with calendar ticks in a time zone.
        case time(TimeZone)
        /// Plain numbers.
        case linear
    }

    /// One stacked bar: its start and a value per category.
    public struct Stack: Sendable, Equatable {
        public var x: Double
        public var values: [Double]
        public init(x: Double, values: [Double]) {
            self.x = x
            self.values = values
        }
    }

    /// What is drawn. `style` picks colour, dash and fill pattern (`ChartStyle`);
    /// `maxGap`: consecutive points further apart than this are not joined (no data).
    public enum Layer: Sendable {
        case line(name: String, points: [ChartPoint], style: Int, maxGap: Double)
        case area(name: String, points: [ChartPoint], style: Int, maxGap: Double)
        /// A bar from 0 to y at each x, `width` x-units wide.
        case bars(name: String, points: [ChartPoint], style: Int, width: Double)
        /// A min–max band (`low`…`high`) with its `y` drawn as a line.
        case band(name: String, points: [ChartPoint], style: Int, maxGap: Double)
        /// Bars of categories stacked from 0; `names[i]` names `values[i]`; styles
        /// `firstStyle`, `firstStyle + 1`, …
        case stacked(names: [String], stacks: [Stack], firstStyle: Int, width: Double)
    }

    public var id: String
    public var title: String
    public var description: String
    /// The unit of the vertical axis, shown above it (`kg`, `count/min`).
    public var unit: String
    public var xAxis: XAxis
    public var layers: [Layer]
    /// The x range shown; nil: the data's.
    public var xRange: ClosedRange<Double>?
    /// Whether the vertical axis starts at 0 (bars, counts).
    public var includeZero: Bool
    /// Whether the values are whole counts (no tick between two integers).
    public var wholeNumbers: Bool
    /// Formats tick labels: (value, decimals) → text.
    public var numberFormat: @Sendable (Double, Int) -> String
    public var width: Int
    public var height: Int

    public init(id: String, title: String, description: String, unit: String, xAxis: XAxis, layers: [Layer],
                xRange: ClosedRange<Double>? = nil, includeZero: Bool = false, wholeNumbers: Bool = false,
                numberFormat: @escaping @Sendable (Double, Int) -> String = { v, d in String(format: "%.\(d)f", v) },
                width: Int = 760, height: Int = 260) {
        self.id = id
        self.title = title
        self.description = description
        self.unit = unit
        self.xAxis = xAxis
        self.layers = layers
        self.xRange = xRange
        self.includeZero = includeZero
        self.wholeNumbers = wholeNumbers
        self.numberFormat = numberFormat
        self.width = width
        self.height = height
    }

    /// Margins around the plot area, in px.
    static let left = 60.0, right = 14.0, top = 30.0, bottom = 26.0

    /// The x range drawn without an explicit one: the data's, widened on each side by
    /// 2 %, by a bar's width, and to at least two days on a time axis (one day of data
    /// is not a hair-thin axis, one bar not the whole plot).
    var paddedDataXRange: ClosedRange<Double>? {
        guard let r = dataXRange else { return nil }
        let span = r.upperBound - r.lowerBound
        var pad = span * 0.02
        if case .time = xAxis, span < 2 * 86_400 { pad = max(pad, (2 * 86_400 - span) / 2) }
        // a bar's width on each side, so that one week of one bar is not the whole plot
        for layer in layers {
            switch layer {
            case .bars(_, _, _, let w), .stacked(_, _, _, let w): pad = max(pad, w)
            case .line, .area, .band: break
            }
        }
        return (r.lowerBound - pad)...(r.upperBound + pad)
    }

    /// The data's x extent (bars and stacks include their width).
    var dataXRange: ClosedRange<Double>? {
        var low = Double.infinity, high = -Double.infinity
        for layer in layers {
            switch layer {
            case .line(_, let p, _, _), .area(_, let p, _, _), .band(_, let p, _, _):
                if let f = p.first, let l = p.last { low = min(low, f.x); high = max(high, l.x) }
            case .bars(_, let p, _, let w):
                if let f = p.first, let l = p.last { low = min(low, f.x); high = max(high, l.x + w) }
            case .stacked(_, let s, _, let w):
                if let f = s.first, let l = s.last { low = min(low, f.x); high = max(high, l.x + w) }
            }
        }
        guard low.isFinite, high.isFinite else { return nil }
        return low...max(high, low + 1)
    }

    /// The data's y extent (stacks as their sums).
    var dataYRange: (Double, Double) {
        var low = Double.infinity, high = -Double.infinity
        for layer in layers {
            switch layer {
            case .line(_, let p, _, _), .area(_, let p, _, _), .band(_, let p, _, _), .bars(_, let p, _, _):
                for q in p { low = min(low, q.minimum); high = max(high, q.maximum) }
            case .stacked(_, let s, _, _):
                for q in s { let sum = q.values.reduce(0, +); low = min(low, 0); high = max(high, sum) }
            }
        }
        return low.isFinite ? (low, high) : (0, 1)
    }
}
