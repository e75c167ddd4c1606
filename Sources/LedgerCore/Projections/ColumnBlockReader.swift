/// Reads a column's elements keeping no shared copy of a mapped column's blocks: for
/// a walk that passes through most of a large column once (a query's windows over
/// the slots, `SampleReader`), whose memory must not grow with the column.
///
/// A mapped column (rule S8) normally copies each block it reads into private memory
/// kept for the state's life: a walk over every slot of a ten-million-sample ledger
/// would keep 400 MB. This reader holds at most two blocks of its own instead
/// (`MappedColumnBytes.borrow`: a block already in the shared copy is read there, any
/// other is read from the file into the reader's buffer and checked — its CRC32C and
/// value check — before any element of it is used). Reads in ascending or descending
/// order read each block once; an element straddling two blocks takes both. An
/// element of a damaged block reads as zeros, and the damage is recorded in the
/// snapshot's `SnapshotDamage` as for any read: the caller checks it
/// (`LedgerState.checkIntact`) before it uses what it read. An owned column is read in
/// place.
///
/// Not `Sendable`: one walk, one thread.
final class ColumnBlockReader<Element: BitwiseCopyable & Sendable> {
    private let column: Column<Element>
    /// The mapped bytes (nil: an owned column), and the span's scalars, read per
    /// element without touching the reference (binding the span retained and released
    /// it for every element: a tenth of a query's reading thread).
    private let mapped: MappedColumnBytes?
    private let first: Int, mappedCount: Int, blockSize: Int
    /// The two blocks held: their numbers (−1: none), their checked bytes (nil:
    /// damaged), and which was used last.
    private var held: (Int, Int) = (-1, -1)
    private var heldBytes: (UnsafeRawBufferPointer?, UnsafeRawBufferPointer?) = (nil, nil)
    private var lastUsed = 0
    /// The reader's own buffers, a block each, allocated when a block is first read
    /// from the file.
    private var buffers: (UnsafeMutableRawBufferPointer?, UnsafeMutableRawBufferPointer?) = (nil, nil)
    /// Blocks read from the file into the buffers (tests, benchmarks).
    private(set) var blocksRead = 0

    init(_ column: Column<Element>) {
        self.column = column
        let span = column.mappedSpan
        mapped = span?.bytes
        first = span?.first ?? 0
        mappedCount = span?.count ?? 0
        blockSize = span?.bytes.blockSize ?? MemoryLayout<Element>.stride
        // An element spans at most two blocks: a snapshot's column layout refuses
        // smaller blocks (S3, `ColumnSource.layout`).
        precondition(blockSize >= MemoryLayout<Element>.stride, "a block holds an element")
    }

    deinit {
        buffers.0?.deallocate()
        buffers.1?.deallocate()
    }

    var count: Int { column.count }

    /// Element `i` (in range), zeros when a block it lies in is damaged.
    @inline(__always)
    subscript(i: Int) -> Element {
        if mapped == nil { return column[i] }
        precondition(i >= 0 && i < mappedCount, "index in range")
        let stride = MemoryLayout<Element>.stride, size = MemoryLayout<Element>.size
        let lower = (first + i) * stride
        let b = lower / blockSize, within = lower - b * blockSize
        if within + size <= blockSize {
            guard let bytes = block(b) else { return Self.zero }
            return bytes.loadUnaligned(fromByteOffset: within, as: Element.self)
        }
        // Straddling two blocks: both held at once (reading the second keeps the first,
        // the nearer one).
        guard let first = block(b), let second = block(b + 1) else { return Self.zero }
        return withUnsafeTemporaryAllocation(byteCount: size, alignment: MemoryLayout<Element>.alignment) { t in
            let head = blockSize - within
            t.baseAddress!.copyMemory(from: first.baseAddress! + within, byteCount: head)
            (t.baseAddress! + head).copyMemory(from: second.baseAddress!, byteCount: size - head)
            return t.loadUnaligned(as: Element.self)
        }
    }

    private static var zero: Element {
        withUnsafeTemporaryAllocation(byteCount: MemoryLayout<Element>.size, alignment: MemoryLayout<Element>.alignment) { z in
            z.initializeMemory(as: UInt8.self, repeating: 0)
            return z.loadUnaligned(as: Element.self)
        }
    }

    /// Block `b`'s checked bytes, held; nil when damaged.
    @inline(__always)
    private func block(_ b: Int) -> UnsafeRawBufferPointer? {
        if held.0 == b { lastUsed = 0; return heldBytes.0 }
        if held.1 == b { lastUsed = 1; return heldBytes.1 }
        return load(b)
    }

    /// Reads block `b` in place of the held block farther from it (on a tie, the one
    /// not used last): a walk in either direction keeps the block it is in and reads
    /// each block once, straddling elements included.
    private func load(_ b: Int) -> UnsafeRawBufferPointer? {
        let bytes = mapped!
        let far0 = held.0 < 0 ? Int.max : abs(held.0 - b), far1 = held.1 < 0 ? Int.max : abs(held.1 - b)
        let entry = far0 == far1 ? 1 - lastUsed : (far0 > far1 ? 0 : 1)
        var buffer = entry == 0 ? buffers.0 : buffers.1
        if buffer == nil {
            buffer = .allocate(byteCount: bytes.blockSize, alignment: 16)
            if entry == 0 { buffers.0 = buffer } else { buffers.1 = buffer }
        }
        let got = bytes.borrow(b, into: buffer!)
        if let got, got.baseAddress == UnsafeRawPointer(buffer!.baseAddress) { blocksRead += 1 }
        if entry == 0 { held.0 = b; heldBytes.0 = got } else { held.1 = b; heldBytes.1 = got }
        lastUsed = entry
        return got
    }
}
