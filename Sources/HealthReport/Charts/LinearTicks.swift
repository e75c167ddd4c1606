import Foundation

/// "Nice" ticks for a linear axis: steps of 1, 2 or 5 × 10ⁿ, the axis widened to
/// whole steps (Heckbert's labelling: kg 68.2…74.9 → 68, 70, 72, 74, 76).
public struct LinearTicks: Sendable, Equatable {
    /// The axis's low end (the first tick).
    public let lower: Double
    /// The axis's high end (the last tick).
    public let upper: Double
    /// The distance between ticks.
    public let step: Double
    /// The tick values, from `lower` to `upper`.
    public let values: [Double]
    /// Decimals a label needs to show the step exactly (0 for a step ≥ 1).
    public let decimals: Int

    /// Ticks covering [min, max] with about `count` ticks (at least 2). A single value
    /// gets an axis around it; `includeZero` stretches the axis to 0 (bars, counts).
    /// Non-finite input gives the axis 0…1.
    /// `minimumStep`: no step below it (1 for counts: no ticks at 0.2 workouts).
    public static func nice(min a: Double, max b: Double, count: Int = 5, includeZero: Bool = false,
                            minimumStep: Double = 0) -> LinearTicks {
        var low = Swift.min(a, b), high = Swift.max(a, b)
        if !low.isFinite || !high.isFinite { low = 0; high = 1 }
        if includeZero { low = Swift.min(low, 0); high = Swift.max(high, 0) }
        if low == high {
            let pad = low == 0 ? 1 : abs(low) * 0.1
            low -= pad
            high += pad
            if includeZero, a >= 0 { low = Swift.max(low, 0) }
        }
        let target = Swift.max(count, 2)
        let range = niceNumber(high - low, round: false)
        let step = Swift.max(niceNumber(range / Double(target - 1), round: true), minimumStep)
        let first = (low / step).rounded(.down), last = (high / step).rounded(.up)
        let decimals = Swift.max(0, -Int((log10(step)).rounded(.down)))
        let scale = pow(10, Double(decimals))
        func clean(_ v: Double) -> Double { (v * scale).rounded() / scale }
        var values: [Double] = []
        var i = first
        while i <= last + 0.5 {
            values.append(clean(i * step))
            i += 1
        }
        return LinearTicks(lower: clean(first * step), upper: clean(last * step), step: step, values: values, decimals: decimals)
    }

    /// The nice number near `x`: 1, 2, 5 or 10 × 10ⁿ (rounded to the nearest when
    /// `round`, else the next at or above).
    public static func niceNumber(_ x: Double, round: Bool) -> Double {
        guard x > 0, x.isFinite else { return 1 }
        let exponent = log10(x).rounded(.down)
        let power = pow(10, exponent)
        let fraction = x / power
        let nice: Double
        if round {
            nice = fraction < 1.5 ? 1 : fraction < 3 ? 2 : fraction < 7 ? 5 : 10
        } else {
            nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10
        }
        return nice * power
    }
}
