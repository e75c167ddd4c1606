import Foundation
import HealthModel

/// One sample as statistics see it: interval, value in the type's canonical unit,
/// source, merge rank and log order.
public struct StatisticsEntry: Sendable, Hashable {
    /// Start and end as `timeIntervalSinceReferenceDate`.
    public var start: Double
    public var end: Double
    /// The value in the type's canonical unit.
    public var value: Double
    /// The source (app ordinal): the key of per-source results.
    public var source: UInt32
    /// Merge priority for cumulative sums: lower ranks win; entries of one rank add up.
    public var rank: UInt32
    /// Log order (the slot): breaks ties of `mostRecent`.
    public var order: UInt32

    public init(start: Double, end: Double, value: Double, source: UInt32, rank: UInt32, order: UInt32) {
        self.start = start
        self.end = end
        self.value = value
        self.source = source
        self.rank = rank
        self.order = order
    }
}

/// The statistics arithmetic, over entries and bucket borders; no I/O.
///
/// - A positive-length sample belongs to every bucket its interval [start, end)
///   overlaps for a positive time, with the share `overlap / duration`; a zero-length
///   sample belongs whole to the bucket holding its instant.
/// - **Sum, merged** (cumulative types): a sweep over every sample start and end and
///   every bucket border. In each stretch between two such instants, only the open
///   samples of the best (lowest) rank count, each with value × stretch / duration:
///   samples of one rank (one source) that overlap all count. A zero-length sample
///   counts whole unless a sample of a better rank covers its instant (start ≤ t < end).
/// - **Sum per source**: each sample's share, no merging.
/// - **Average**: arithmetic (`discrete`) over the samples in the bucket;
///   time-weighted (`discreteTemporallyWeighted`) by each sample's overlap with the
///   bucket; equivalent continuous level (`discreteEquivalentContinuousLevel`) as
///   10·log10 of the time-weighted mean of 10^(L/10). When every sample in the bucket
///   has zero length (no time to weigh by), the weighted styles weigh them equally.
/// - **Min, max**: over the values of the samples in the bucket.
/// - **Most recent**: the sample in the bucket with the greatest (start, end, order).
/// - **Duration**: the length of the union of the samples' intervals within the bucket.
/// Only discrete types are averaged, and sources are merged for sums only (as HealthKit).
package enum StatisticsEngine {
    /// One bucket's result: merged values and, when asked, values per source.
    package struct BucketResult: Sendable, Hashable {
        package var merged: StatisticsValues
        package var bySource: [UInt32: StatisticsValues]
    }

    struct Accumulator {
        var present = false
        var count = 0
        var plain = 0.0
        var weight = 0.0
        var weighted = 0.0
        var minimum = Double.infinity
        var maximum = -Double.infinity
        var hasRecent = false
        var recentStart = 0.0, recentEnd = 0.0, recentOrder: UInt32 = 0, recentValue = 0.0
        var sum = 0.0
        var duration = 0.0
    }

    /// The results of buckets [borders[k], borders[k+1]) for k in 0..<borders.count−1;
    /// nil for an empty bucket. `borders` ascend.
    package static func compute(_ input: [StatisticsEntry], style: AggregationStyle, options: StatisticsOptions,
                               borders: [Double]) -> [BucketResult?] {
        let n = borders.count - 1
        guard n > 0 else { return [] }
        var entries = input
        sortByStart(&entries)
        let separate = options.contains(.separateBySource)
        let level = style == .discreteEquivalentContinuousLevel
        var merged = [Accumulator](repeating: Accumulator(), count: n)
        var perSource: [UInt32: [Accumulator]] = [:]
        let needsValues = !options.intersection([.discreteAverage, .discreteMin, .discreteMax, .mostRecent]).isEmpty
        let needsShare = separate && options.contains(.cumulativeSum)

        @inline(__always) func fold(_ a: inout Accumulator, _ e: StatisticsEntry, overlap: Double, share: Double) {
            a.present = true
            if needsShare { a.sum += share }
            guard needsValues else { return }
            let x = level ? pow(10, e.value / 10) : e.value
            a.count += 1
            a.plain += x
            a.weight += overlap
            a.weighted += x * overlap
            if e.value < a.minimum { a.minimum = e.value }
            if e.value > a.maximum { a.maximum = e.value }
            if !a.hasRecent || (e.start, e.end, e.order) > (a.recentStart, a.recentEnd, a.recentOrder) {
                a.hasRecent = true
                a.recentStart = e.start
                a.recentEnd = e.end
                a.recentOrder = e.order
                a.recentValue = e.value
            }
        }

        // Each sample into the buckets it overlaps.
        var k = 0
        for e in entries {
            if e.end < borders[0] || e.start >= borders[n] { continue }
            while k + 1 < n && borders[k + 1] <= e.start { k += 1 }
            if separate && perSource[e.source] == nil { perSource[e.source] = [Accumulator](repeating: Accumulator(), count: n) }
            if e.end == e.start {
                guard e.start >= borders[0] else { continue }
                fold(&merged[k], e, overlap: 0, share: e.value)
                if separate { fold(&perSource[e.source]![k], e, overlap: 0, share: e.value) }
                continue
            }
            var j = e.start < borders[0] ? 0 : k
            let length = e.end - e.start
            while j < n && borders[j] < e.end {
                let overlap = min(e.end, borders[j + 1]) - max(e.start, borders[j])
                if overlap > 0 {
                    let share = overlap == length ? e.value : e.value * overlap / length
                    fold(&merged[j], e, overlap: overlap, share: share)
                    if separate { fold(&perSource[e.source]![j], e, overlap: overlap, share: share) }
                }
                j += 1
            }
        }
        if options.contains(.duration) {
            addCoverage(entries, borders: borders, into: &merged)
            if separate {
                for source in perSource.keys {
                    addCoverage(entries.filter { $0.source == source }, borders: borders, into: &perSource[source]!)
                }
            }
        }
        var sums: [Double] = []
        if options.contains(.cumulativeSum) { sums = mergedSums(entries, borders: borders) }

        func finish(_ a: Accumulator, sum: Double?) -> StatisticsValues {
            var v = StatisticsValues()
            if options.contains(.cumulativeSum) { v.sum = sum ?? a.sum }
            if options.contains(.duration) { v.duration = a.duration }
            guard needsValues, a.count > 0 else { return v }
            if options.contains(.discreteAverage) {
                let mean = style == .discrete || a.weight == 0 ? a.plain / Double(a.count) : a.weighted / a.weight
                v.average = level ? 10 * log10(mean) : mean
            }
            if options.contains(.discreteMin) { v.minimum = a.minimum }
            if options.contains(.discreteMax) { v.maximum = a.maximum }
            if options.contains(.mostRecent) {
                v.mostRecent = a.recentValue
                v.mostRecentInterval = DateInterval(start: Date(timeIntervalSinceReferenceDate: a.recentStart),
                                                    end: Date(timeIntervalSinceReferenceDate: a.recentEnd))
            }
            return v
        }
        var out = [BucketResult?](repeating: nil, count: n)
        let sources = perSource.keys.sorted()
        for b in 0..<n where merged[b].present {
            var result = BucketResult(merged: finish(merged[b], sum: sums.isEmpty ? nil : sums[b]), bySource: [:])
            for s in sources where perSource[s]![b].present { result.bySource[s] = finish(perSource[s]![b], sum: nil) }
            out[b] = result
        }
        return out
    }

    /// Orders entries by (start, end, order) — the timeline's order, so usually a check only.
    static func sortByStart(_ entries: inout [StatisticsEntry]) {
        if !isSortedByStart(entries) {
            entries.sort { ($0.start, $0.end, $0.order) < ($1.start, $1.end, $1.order) }
        }
    }

    /// The buckets `compute` finds non-empty: those a positive-length entry overlaps for
    /// a positive time, and those holding a zero-length entry's instant (entries sorted
    /// by start), ascending and each once.
    static func presentBuckets(_ entries: [StatisticsEntry], borders: [Double]) -> [Int] {
        let n = borders.count - 1
        guard n > 0 else { return [] }
        var present = [Bool](repeating: false, count: n)
        var k = 0
        for e in entries {
            if e.end < borders[0] || e.start >= borders[n] { continue }
            while k + 1 < n && borders[k + 1] <= e.start { k += 1 }
            if e.end == e.start {
                if e.start >= borders[0] { present[k] = true }
                continue
            }
            var j = e.start < borders[0] ? 0 : k
            while j < n && borders[j] < e.end {
                if min(e.end, borders[j + 1]) - max(e.start, borders[j]) > 0 { present[j] = true }
                j += 1
            }
        }
        return present.indices.filter { present[$0] }
    }

    static func isSortedByStart(_ e: [StatisticsEntry]) -> Bool {
        var i = 1
        while i < e.count {
            if (e[i - 1].start, e[i - 1].end, e[i - 1].order) > (e[i].start, e[i].end, e[i].order) { return false }
            i += 1
        }
        return true
    }

    /// Adds the union of the entries' intervals (sorted by start) to each bucket's duration.
    static func addCoverage(_ entries: [StatisticsEntry], borders: [Double], into acc: inout [Accumulator]) {
        let n = borders.count - 1
        func flush(_ a: Double, _ b: Double) {
            guard b > a else { return }
            var j = max(0, upperBound(borders, a) - 1)
            while j < n && borders[j] < b {
                let overlap = min(b, borders[j + 1]) - max(a, borders[j])
                if overlap > 0 { acc[j].duration += overlap }
                j += 1
            }
        }
        var open = false
        var cs = 0.0, ce = 0.0
        for e in entries where e.end > e.start {
            if open && e.start <= ce {
                ce = max(ce, e.end)
            } else {
                if open { flush(cs, ce) }
                open = true
                cs = e.start
                ce = e.end
            }
        }
        if open { flush(cs, ce) }
    }

    /// The index of the first border greater than `t`.
    static func upperBound(_ borders: [Double], _ t: Double) -> Int {
        var low = 0, high = borders.count
        while low < high {
            let mid = (low + high) / 2
            if borders[mid] <= t { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The merged cumulative sum of each bucket: the priority sweep (`PrioritySweep`).
    /// `entries` are sorted by start.
    static func mergedSums(_ entries: [StatisticsEntry], borders: [Double]) -> [Double] {
        var sweep = PrioritySweep(PrioritySweep.Plan(entries))
        return sweep.sums(borders: borders)
    }
}
