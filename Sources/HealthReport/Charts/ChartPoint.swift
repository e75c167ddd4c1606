/// One point of a series: `x` (seconds since 1970 on a time axis), the value `y`,
/// and for a band its `low` and `high` (min–max around `y`).
public struct ChartPoint: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var low: Double?
    public var high: Double?

    public init(x: Double, y: Double, low: Double? = nil, high: Double? = nil) {
        self.x = x
        self.y = y
        self.low = low
        self.high = high
    }

    /// The smallest value the point shows (its band's low, else y).
    public var minimum: Double { Swift.min(low ?? y, y) }
    /// The largest value the point shows (its band's high, else y).
    public var maximum: Double { Swift.max(high ?? y, y) }
}
