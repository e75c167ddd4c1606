/// Projection: events folded in, by kind.
///
/// Replay counts every event, so the count is a plain array indexed by kind for the
/// kinds this release writes (below `directKinds`), not a hash lookup per event (a
/// dictionary's hashing was ~2 % of a million-event replay). A kind at or above it
/// (a log from a later release could name one) is counted in `others`.
///
/// Invariant: a kind below `directKinds` is never in `others`, and `others` holds no
/// zero: so `==` is equality of the counts, however they were reached.
struct EventKindCounts: Sendable, Equatable {
    static let directKinds = 64
    private var direct = [UInt64](repeating: 0, count: Self.directKinds)
    private var others: [UInt16: UInt64] = [:]

    init() {}

    init(_ counts: [UInt16: UInt64]) {
        for (kind, n) in counts where n > 0 { add(kind, n) }
    }

    /// Counts `n` more events of `kind`.
    @inline(__always)
    mutating func add(_ kind: UInt16, _ n: UInt64 = 1) {
        if Int(kind) < Self.directKinds {
            direct[Int(kind)] &+= n
        } else {
            others[kind, default: 0] &+= n
        }
    }

    /// The counts as a dictionary: the kinds counted at least once.
    var dictionary: [UInt16: UInt64] {
        var out = others
        for (kind, n) in direct.enumerated() where n > 0 { out[UInt16(kind)] = n }
        return out
    }
}
