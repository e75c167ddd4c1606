/// The priority sweep behind every merged cumulative sum (`StatisticsEngine.mergedSums`):
/// a walk over the entries' starts and ends in time order that keeps, per rank, the
/// entries open at the current instant, and credits each stretch between two event
/// times to the buckets it covers, from the open entries of the best (lowest) rank
/// only, each in proportion to the part of its interval the stretch is. An instant
/// (a zero-length entry) adds its whole value to its bucket when no better rank is open.
///
/// The order of the terms a bucket adds is part of the answer (floating-point sums are
/// not associative): a bucket takes its terms in time order, and within a stretch in
/// the order of its rank's open list, which entries join at the end and leave by
/// swapping the last into their place. A sweep can be split into runs at any bucket
/// border B without changing a bit of any sum: every term a bucket at or after B
/// takes comes from a stretch ending after B or an instant at or after B, so a run
/// that first replays the open lists' changes before B (`advance(before:)`, no
/// arithmetic) and then sums from B is, for the buckets from B on, the one sweep.
///
/// Invariants: `open[r]` holds exactly the positive-length entries of dense rank r
/// whose start has been passed and whose end has not; `best` is the lowest rank with
/// an open entry (`Int.max` when none); `previous` is the last event time passed.
struct PrioritySweep {
    /// What every run of a sweep shares: the entries' dense ranks and their events in
    /// time order. Built once; read only.
    struct Plan: Sendable {
        let entries: [StatisticsEntry]
        /// Each entry's position among the distinct ranks, ascending.
        let rankOf: [Int]
        let rankCount: Int
        /// Positive-length entries by start (ascending index: `entries` are in start order).
        let starts: [Int]
        /// The same by end, ties in index order (a stable sort by end).
        let ends: [Int]
        /// Zero-length entries, by start.
        let instants: [Int]

        /// `entries` sorted by start (`StatisticsEngine.sortByStart`).
        init(_ entries: [StatisticsEntry]) {
            self.entries = entries
            // The distinct ranks (a few: two per source), and each entry's position among
            // them. Runs of one rank are the rule (a source's samples come together), so
            // the last rank found is tried first. Many ranks (many sources,
            // interleaved) go through a dictionary instead.
            var ranks: [UInt32] = []
            var rankSet: Set<UInt32>?
            var lastSeen: UInt32?
            for e in entries where e.rank != lastSeen {
                lastSeen = e.rank
                if var set = rankSet {
                    rankSet = nil  // unique while inserting
                    if set.insert(e.rank).inserted { ranks.append(e.rank) }
                    rankSet = set
                } else if !ranks.contains(e.rank) {
                    ranks.append(e.rank)
                    if ranks.count > 16 { rankSet = Set(ranks) }
                }
            }
            ranks.sort()
            let denseOf: [UInt32: Int]? = ranks.count > 16
                ? Dictionary(uniqueKeysWithValues: ranks.enumerated().map { ($1, $0) }) : nil
            var rankOf = [Int](repeating: 0, count: entries.count)
            var lastRank: UInt32?, lastDense = 0
            for i in entries.indices {
                let r = entries[i].rank
                if r != lastRank {
                    lastRank = r
                    lastDense = denseOf?[r] ?? ranks.firstIndex(of: r)!
                }
                rankOf[i] = lastDense
            }
            var starts: [Int] = [], instants: [Int] = []
            starts.reserveCapacity(entries.count)
            for i in entries.indices { if entries[i].end > entries[i].start { starts.append(i) } else { instants.append(i) } }
            // Sorted as (end, index) pairs, not as indices compared through the entries
            // (a cache miss per comparison at a million). Nearly sorted already: the
            // sort's runs make it cheap.
            var endKeys = [(end: Double, index: Int)]()
            endKeys.reserveCapacity(starts.count)
            for i in starts { endKeys.append((entries[i].end, i)) }
            endKeys.sort { $0.end != $1.end ? $0.end < $1.end : $0.index < $1.index }
            self.rankOf = rankOf
            self.rankCount = ranks.count
            self.starts = starts
            self.ends = endKeys.map(\.index)
            self.instants = instants
        }
    }

    let plan: Plan
    private var open: [[Int]]
    private var best = Int.max
    private var si = 0, ei = 0, zi = 0
    private var previous = -Double.infinity

    init(_ plan: Plan) {
        self.plan = plan
        open = [[Int]](repeating: [], count: plan.rankCount)
    }

    /// The next event time (a start, an end or an instant not yet passed), nil after the last.
    private func nextTime() -> Double? {
        guard ei < plan.ends.count || zi < plan.instants.count else { return nil }
        var t = Double.infinity
        if si < plan.starts.count { t = plan.entries[plan.starts[si]].start }
        if ei < plan.ends.count { t = min(t, plan.entries[plan.ends[ei]].end) }
        if zi < plan.instants.count { t = min(t, plan.entries[plan.instants[zi]].start) }
        return t
    }

    /// Passes the ends, then the starts, at `t` (the next event time).
    private mutating func pass(_ t: Double) {
        let entries = plan.entries
        while ei < plan.ends.count && entries[plan.ends[ei]].end == t {
            let i = plan.ends[ei]
            let r = plan.rankOf[i]
            if let at = open[r].firstIndex(of: i) { open[r].swapAt(at, open[r].count - 1); open[r].removeLast() }
            if r == best && open[r].isEmpty {
                best = Int.max
                for q in r..<open.count where !open[q].isEmpty { best = q; break }
            }
            ei += 1
        }
        while si < plan.starts.count && entries[plan.starts[si]].start == t {
            let i = plan.starts[si]
            open[plan.rankOf[i]].append(i)
            best = min(best, plan.rankOf[i])
            si += 1
        }
    }

    /// Passes every event before `cut` as the one sweep does, crediting nothing: the
    /// open lists are then what that sweep has when it reaches `cut`.
    mutating func advance(before cut: Double) {
        while let t = nextTime(), t < cut {
            previous = t
            pass(t)
            while zi < plan.instants.count && plan.entries[plan.instants[zi]].start == t { zi += 1 }
        }
    }

    /// The merged sums of the buckets `[borders[k], borders[k+1])`, sweeping on from
    /// where the sweep stands (the start, or `advance(before: borders[0])`) until no
    /// event is left before the last border.
    mutating func sums(borders: [Double]) -> [Double] {
        let n = borders.count - 1
        var sums = [Double](repeating: 0, count: max(n, 0))
        guard n > 0 else { return sums }
        let entries = plan.entries
        var bucket = 0
        let low = borders[0], high = borders[n]
        while let t = nextTime() {
            if previous > -Double.infinity, best != Int.max {
                // Credit [previous, t) to the buckets it covers.
                var from = max(previous, low)
                let to = min(t, high)
                while from < to {
                    while bucket + 1 < n && borders[bucket + 1] <= from { bucket += 1 }
                    let stop = min(to, borders[bucket + 1])
                    let stretch = stop - from
                    for i in open[best] {
                        let e = entries[i]
                        let length = e.end - e.start
                        sums[bucket] += stretch == length ? e.value : e.value * stretch / length
                    }
                    from = stop
                }
            }
            // Nothing at or after the last border reaches these buckets.
            if t >= high { break }
            previous = t
            pass(t)
            while zi < plan.instants.count && entries[plan.instants[zi]].start == t {
                let i = plan.instants[zi]
                if (best == Int.max || best >= plan.rankOf[i]) && t >= low {
                    sums[StatisticsEngine.upperBound(borders, t) - 1] += entries[i].value
                }
                zi += 1
            }
        }
        return sums
    }
}
