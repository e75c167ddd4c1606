import CLedgerAccel
import Foundation
import LedgerChecksums
import LedgerLog
#if canImport(Glibc)
import Glibc
#endif

/// One column of a projection — the sample slots, the UUID table's buckets, a
/// timeline, the statistics values: contiguous fixed-size elements, either **owned**
/// (an array, as every writer and every replay builds them) or **mapped** from a
/// snapshot file (`SnapshotFile.load(…, mapped: true)`: what a reader uses, so that
/// opening a large ledger reads and parses no column).
///
/// A mapped column is read and checked lazily (rule S8): each 4 MiB block is copied
/// from the file into private memory and checked there — its CRC32C and, for columns
/// that hold slot numbers, that every value is a slot — the first time any element of
/// it is read, by whichever thread reads first; every later read uses that copy
/// (`MappedColumnBytes`), so a file changed after the check changes nothing. A block
/// that fails is read as zeros and recorded in the snapshot's `SnapshotDamage`, which
/// readers check before they answer — a damaged snapshot makes a read fail, never
/// answer wrongly, never trap. Writing to a mapped column first copies it into an
/// owned one (every block checked), so the state a writer changes is always its own.
///
/// Invariant: exactly one of `owned` (when `mapped` is nil) and `mapped` holds the
/// elements.
package struct Column<Element: BitwiseCopyable & Sendable>: Sendable {
    private var owned: [Element]
    private var mapped: MappedSpan?

    /// A run of elements of a mapped column section.
    struct MappedSpan: Sendable {
        let bytes: MappedColumnBytes
        /// Index of the first element in the section, and how many.
        let first: Int
        let count: Int
    }

    package init() { owned = [] }

    package init(_ elements: [Element]) { owned = elements }

    /// `count` elements of a mapped section from element `first` on.
    init(mapped bytes: MappedColumnBytes, first: Int = 0, count: Int) {
        precondition(first >= 0 && count >= 0 && (first + count) * MemoryLayout<Element>.stride <= bytes.byteCount,
                     "a column's elements lie inside its section")
        owned = []
        mapped = MappedSpan(bytes: bytes, first: first, count: count)
    }

    /// Whether the elements are mapped from a snapshot (not copied).
    var isMapped: Bool { mapped != nil }

    /// The mapped span, if mapped (`ColumnBlockReader`).
    var mappedSpan: MappedSpan? { mapped }

    // Read in place (`subscript`'s note): `mapped?.count` copied the span, a retain and
    // a release per call, which replay's fold made for every sample.
    package var count: Int { mapped == nil ? owned.count : mapped.unsafelyUnwrapped.count }
    package var isEmpty: Bool { count == 0 }

    /// The elements as a buffer, every mapped block checked first.
    @inline(__always)
    package func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        guard mapped != nil else { return try owned.withUnsafeBufferPointer(body) }
        let m = mapped.unsafelyUnwrapped
        return try m.bytes.withElements(Element.self, first: m.first, count: m.count, body)
    }

    package subscript(i: Int) -> Element {
        get {
            // Read through the stored span in place: binding it (`if let m = mapped`)
            // copies it, a retain and a release of its bytes per element read, which
            // showed as a tenth of a query's time.
            guard mapped != nil else { return owned[i] }
            precondition(i >= 0 && i < mapped.unsafelyUnwrapped.count, "index in range")
            return mapped.unsafelyUnwrapped.bytes.element(Element.self, at: mapped.unsafelyUnwrapped.first + i)
        }
        set {
            materialize()
            owned[i] = newValue
        }
    }

    package var last: Element? {
        guard mapped != nil else { return owned.last }
        return count == 0 ? nil : self[count - 1]
    }

    /// Asks the CPU to start loading element `i`'s cache line (a hint: nothing is read,
    /// checked or faulted in; an index out of range is ignored). For loops that visit a
    /// column out of order, a few elements ahead.
    @inline(__always)
    package func prefetch(_ i: Int) {
        guard i >= 0 && i < count else { return }
        if mapped != nil {
            // The block's private copy, checked or not: a prefetch of memory not yet
            // copied is a no-op, never a fault.
            hl_prefetch(mapped.unsafelyUnwrapped.bytes.base + (mapped.unsafelyUnwrapped.first + i) * MemoryLayout<Element>.stride)
        } else {
            owned.withUnsafeBufferPointer { hl_prefetch($0.baseAddress! + i) }
        }
    }

    package mutating func append(_ element: Element) {
        materialize()
        owned.append(element)
    }

    package mutating func append(contentsOf elements: some Sequence<Element>) {
        materialize()
        owned.append(contentsOf: elements)
    }

    package mutating func reserveCapacity(_ n: Int) {
        materialize()
        owned.reserveCapacity(n)
    }

    package mutating func removeAll(keepingCapacity: Bool = false) {
        mapped = nil
        owned.removeAll(keepingCapacity: keepingCapacity)
    }

    package mutating func withUnsafeMutableBufferPointer<R>(_ body: (inout UnsafeMutableBufferPointer<Element>) throws -> R) rethrows -> R {
        materialize()
        return try owned.withUnsafeMutableBufferPointer(body)
    }

    /// Elements `range` as a column of their own: for a mapped column, a span of the
    /// same mapping (nothing copied); for an owned one, a copy.
    package func slice(_ range: Range<Int>) -> Column {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "a slice lies inside the column")
        guard let m = mapped else { return Column(Array(owned[range])) }
        return Column(mapped: m.bytes, first: m.first + range.lowerBound, count: range.count)
    }

    /// The elements as an array (a copy when mapped).
    package var array: [Element] {
        mapped == nil ? owned : withUnsafeBufferPointer { Array($0) }
    }

    /// Turns a mapped column into an owned one (a copy, every block checked), with
    /// room for a quarter more: it is about to grow.
    private mutating func materialize() {
        guard let m = mapped else { return }
        var copy: [Element] = []
        copy.reserveCapacity(m.count + m.count / 4)
        m.bytes.withElements(Element.self, first: m.first, count: m.count) { copy.append(contentsOf: $0) }
        owned = copy
        mapped = nil
    }
}

extension Column: RandomAccessCollection, MutableCollection {
    package var startIndex: Int { 0 }
    package var endIndex: Int { count }
}

extension Column: Equatable where Element: Equatable {
    package static func == (a: Column, b: Column) -> Bool {
        a.count == b.count && a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in x.elementsEqual(y) } }
    }
}

extension Column: ExpressibleByArrayLiteral {
    package init(arrayLiteral elements: Element...) { self.init(elements) }
}

/// What a reader found wrong in a mapped snapshot while reading it (rule S8): the
/// first block that failed its check. Shared by the columns of one snapshot; readers
/// ask it before they answer.
package final class SnapshotDamage: Sendable, Equatable {
    private let found = Locked<SnapshotProblem?>(nil)
    /// The snapshot file.
    package let file: String

    init(file: String) { self.file = file }

    /// The first problem found, if any.
    package var problem: SnapshotProblem? { found.withLock { $0 } }

    /// Not part of a state's meaning: any two compare equal (a state's `==` is over its
    /// projections).
    package static func == (a: SnapshotDamage, b: SnapshotDamage) -> Bool { true }

    func record(_ problem: SnapshotProblem) {
        found.withLock { if $0 == nil { $0 = problem } }
    }
}

/// A column section's array in a mapped snapshot (rule S8), held as private copies of
/// its blocks: the first read of any element of a block copies the block from the file
/// (`pread`, which comes back short when the file was cut — never a SIGBUS) into a
/// region reserved for the whole array (`ReservedMemory`: untouched blocks cost
/// nothing), checks the copy (its CRC32C and `valid`), and every later read of the
/// block reads that copy. So the bytes a reader uses are the bytes it checked: the file
/// truncated, overwritten in place, shrunk or grown after a block's check changes
/// nothing read from it, and before the check makes the block fail. A block that fails
/// reads as zeros and is recorded in `damage`.
///
/// Block states (atomic bytes): 0 unread, 3 being read (by the one thread that claimed
/// it; others wait for it), 1 checked, 2 damaged.
final class MappedColumnBytes: @unchecked Sendable {
    // @unchecked: `file` is read with `pread` (thread-safe); each block of `copy` is
    // written by the one thread that claimed it, and read only after its state says
    // it is settled (release/acquire).
    private let file: any LogFile
    /// Where the array starts in the file.
    private let fileOffset: UInt64
    private let copy: ReservedMemory
    let base: UnsafeRawPointer
    let byteCount: Int
    let blockSize: Int
    let crcs: [UInt32]
    let section: UInt32
    let damage: SnapshotDamage
    /// More than the checksum: whether a checked block's values are all valid (the
    /// slot numbers of a timeline below the slot count).
    let valid: (@Sendable (UnsafeRawBufferPointer) -> Bool)?
    private let states: UnsafeMutablePointer<UInt8>

    private static let unread: UInt8 = 0, checked: UInt8 = 1, damaged: UInt8 = 2, reading: UInt8 = 3

    /// `byteCount` bytes of `file` from `offset` on, in blocks of `blockSize` with one
    /// CRC32C each; nothing is read until an element is.
    init(file: any LogFile, offset: UInt64, byteCount: Int, blockSize: Int, crcs: [UInt32], section: UInt32,
         damage: SnapshotDamage, valid: (@Sendable (UnsafeRawBufferPointer) -> Bool)? = nil) throws {
        precondition(byteCount >= 0 && blockSize > 0 && crcs.count == (byteCount + blockSize - 1) / blockSize,
                     "one checksum per block")
        self.file = file
        self.fileOffset = offset
        copy = try ReservedMemory(byteCount: byteCount)
        base = UnsafeRawPointer(copy.bytes.baseAddress!)
        self.byteCount = byteCount
        self.blockSize = blockSize
        self.crcs = crcs
        self.section = section
        self.damage = damage
        self.valid = valid
        states = .allocate(capacity: max(1, crcs.count))
        states.initialize(repeating: Self.unread, count: max(1, crcs.count))
    }

    deinit { states.deallocate() }

    /// Reads and checks block `b` if nobody has; whether it is sound.
    @inline(__always)
    func sound(_ b: Int) -> Bool {
        let state = hl_atomic_load_u8(states + b)
        if state == Self.checked { return true }
        if state == Self.damaged { return false }
        return settle(b)
    }

    /// Claims block `b` and reads it, or waits for the thread that claimed it.
    private func settle(_ b: Int) -> Bool {
        while true {
            if hl_atomic_cas_u8(states + b, Self.unread, Self.reading) != 0 { return readAndCheck(b) }
            let state = hl_atomic_load_u8(states + b)
            if state == Self.checked { return true }
            if state == Self.damaged { return false }
            sched_yield()  // another thread is copying the block (a millisecond)
        }
    }

    /// Copies block `b` from the file and checks the copy; a block that is not all in
    /// the file, cannot be read or fails its check is zeroed and recorded.
    private func readAndCheck(_ b: Int) -> Bool {
        let lower = b * blockSize, upper = min(byteCount, lower + blockSize)
        let block = UnsafeMutableRawBufferPointer(rebasing: copy.bytes[lower..<upper])
        let sound = read(b, into: block)
        if !sound { block.initializeMemory(as: UInt8.self, repeating: 0) }
        hl_atomic_store_u8(states + b, sound ? Self.checked : Self.damaged)
        return sound
    }

    /// Reads block `b` from the file into `block` (exactly its length) and checks it
    /// there: whether it is sound. A block that is not all in the file, cannot be read
    /// or fails its check is recorded in `damage`.
    private func read(_ b: Int, into block: UnsafeMutableRawBufferPointer) -> Bool {
        var failure: String?
        do {
            let got = try file.read(into: block, at: fileOffset + UInt64(b * blockSize))
            if got != block.count { failure = "is cut short: \(got) of its \(block.count) bytes are in the file" }
        } catch {
            failure = "cannot be read: \(error)"
        }
        if failure == nil, CRC32C.checksum(UnsafeRawBufferPointer(block)) != crcs[b] || !(valid?(UnsafeRawBufferPointer(block)) ?? true) {
            failure = "fails its check"
        }
        if let failure {
            damage.record(.unreadable(file: damage.file, reason: "section \(section) block \(b) \(failure)", rule: "S8"))
        }
        return failure == nil
    }

    /// Block `b`'s bytes, checked, for a reader that keeps no shared copy
    /// (`ColumnBlockReader`): the shared copy when the block has been checked already,
    /// else the block read from the file into `buffer` (at least a block long) and
    /// checked there — the shared copy and the block's state untouched, so memory
    /// does not grow with the blocks such a reader passes through. Nil when the block
    /// is damaged (recorded in `damage`, as for any read).
    func borrow(_ b: Int, into buffer: UnsafeMutableRawBufferPointer) -> UnsafeRawBufferPointer? {
        let lower = b * blockSize, length = min(byteCount, lower + blockSize) - lower
        switch hl_atomic_load_u8(states + b) {
        case Self.checked: return UnsafeRawBufferPointer(start: base + lower, count: length)
        case Self.damaged: return nil
        default:  // unread, or being read by another thread: read a copy of our own
            precondition(buffer.count >= length, "a borrowing buffer holds a block")
            let block = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<length])
            return read(b, into: block) ? UnsafeRawBufferPointer(block) : nil
        }
    }

    /// How many blocks have been copied into the shared copy and checked (tests: a
    /// walk that borrows blocks leaves this unchanged).
    var checkedBlockCount: Int {
        (0..<crcs.count).reduce(0) { $0 + (hl_atomic_load_u8(states + $1) == Self.checked ? 1 : 0) }
    }

    /// Element `i` (of the section), zeros when a block it lies in is damaged.
    @inline(__always)
    func element<T: BitwiseCopyable>(_: T.Type, at i: Int) -> T {
        let lower = i * MemoryLayout<T>.stride, upper = lower + MemoryLayout<T>.size - 1
        if sound(lower / blockSize) && (upper / blockSize == lower / blockSize || sound(upper / blockSize)) {
            return base.loadUnaligned(fromByteOffset: lower, as: T.self)
        }
        return withUnsafeTemporaryAllocation(byteCount: MemoryLayout<T>.size, alignment: MemoryLayout<T>.alignment) { zeros in
            zeros.initializeMemory(as: UInt8.self, repeating: 0)
            return zeros.loadUnaligned(as: T.self)
        }
    }

    /// Reads and checks every block of bytes `lower..<upper` not read yet (on every
    /// core); whether all of them are sound.
    @discardableResult
    func settle(bytes lower: Int, _ upper: Int) -> Bool {
        guard upper > lower else { return true }
        let firstBlock = lower / blockSize, lastBlock = (upper - 1) / blockSize
        let unread = (firstBlock...lastBlock).filter { hl_atomic_load_u8(states + $0) != Self.checked }
        if unread.count > 1 {
            DispatchQueue.concurrentPerform(iterations: unread.count) { k in _ = sound(unread[k]) }
        } else {
            for b in unread { _ = sound(b) }
        }
        return (firstBlock...lastBlock).allSatisfy { hl_atomic_load_u8(states + $0) == Self.checked }
    }

    /// The elements `first..<first + count` as a buffer, every block read and checked
    /// first (on every core); a damaged block's elements are zeros.
    func withElements<T: BitwiseCopyable, R>(_: T.Type, first: Int, count: Int,
                                             _ body: (UnsafeBufferPointer<T>) throws -> R) rethrows -> R {
        let stride = MemoryLayout<T>.stride
        settle(bytes: first * stride, (first + count) * stride)
        let typed = (base + first * stride).bindMemory(to: T.self, capacity: count)
        return try body(UnsafeBufferPointer(start: count == 0 ? nil : typed, count: count))
    }
}
