import CLedgerAccel

/// The slots of a sample index as the read engine reads them, by slot number: the
/// buffer of an owned column (every slot at hand), or a mapped column element by
/// element (rule S8), so that a read copies and checks only the 4 MiB blocks of the
/// slots it looks at — a `--limit 1` or "latest" read of a ten-million-sample ledger a
/// few blocks, not the 436 MB column.
protocol SlotSource {
    /// The slot numbered `n` (below the slot count: the caller's slot numbers come from
    /// the index, checked when it was built or its block was).
    func slot(_ n: UInt32) -> SampleIndex.Slot
    /// Asks the CPU to start loading slot `n` (a hint: nothing read or checked; out of
    /// range ignored). The selection walks a timeline, slots out of log order.
    func prefetch(_ n: UInt32)
}

extension UnsafeBufferPointer: SlotSource where Element == SampleIndex.Slot {
    @inline(__always)
    func slot(_ n: UInt32) -> SampleIndex.Slot { self[Int(n)] }

    @inline(__always)
    func prefetch(_ n: UInt32) {
        guard Int(n) < count, let base = baseAddress else { return }
        hl_prefetch(base + Int(n))
    }
}

extension Column: SlotSource where Element == SampleIndex.Slot {
    @inline(__always)
    func slot(_ n: UInt32) -> SampleIndex.Slot { self[Int(n)] }

    @inline(__always)
    func prefetch(_ n: UInt32) { prefetch(Int(n)) }
}
