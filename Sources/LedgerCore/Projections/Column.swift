import CLedgerAccel
import Foundation
import LedgerChecksums
import LedgerLog

/// One column of a projection — the sample slots, the UUID table's buckets, a
/// timeline, the statistics values: contiguous fixed-size elements, either **owned**
/// (an array, as every writer and every replay builds them) or **mapped** read-only
/// from a snapshot file (`SnapshotFile.load(…, mapped: true)`: what a reader uses, so
/// that opening a large ledger reads and parses no column).
///
/// A mapped column is checked lazily (rule S8): each 4 MiB block's CRC32C (and, for
/// columns that hold slot numbers, that every value is a slot) the first time any
/// element of it is read, by whichever thread reads first. A block that fails is
/// read as zeros and recorded in the snapshot's `SnapshotDamage`, which readers check
/// before they answer — a damaged snapshot makes a read fail, never answer wrongly,
/// never trap. Writing to a mapped column first copies it into an owned one (every
/// block checked), so the state a writer changes is always its own.
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

    package var count: Int { mapped?.count ?? owned.count }
    package var isEmpty: Bool { count == 0 }

    /// The elements as a buffer, every mapped block checked first.
    package func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        guard let m = mapped else { return try owned.withUnsafeBufferPointer(body) }
        return try m.bytes.withElements(Element.self, first: m.first, count: m.count, body)
    }

    package subscript(i: Int) -> Element {
        get {
            guard let m = mapped else { return owned[i] }
            precondition(i >= 0 && i < m.count, "index in range")
            return m.bytes.element(Element.self, at: m.first + i)
        }
        set {
            materialize()
            owned[i] = newValue
        }
    }

    package var last: Element? { count == 0 ? nil : self[count - 1] }

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

/// A column section's array in a mapped snapshot, with its block checksums and the
/// state of each block (0 unchecked, 1 checked, 2 damaged; atomic bytes).
final class MappedColumnBytes: @unchecked Sendable {
    // @unchecked: the mapping is read-only; `states` are atomic bytes; `repaired`
    // is guarded by `lock`.
    let mapping: FileMapping
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
    private let lock = NSLock()
    /// With a damaged block: a copy of the array with every damaged block zeroed.
    private var repaired: UnsafeMutableRawBufferPointer?

    /// `checked`: every block was checked already, and found sound (by reading it).
    init(mapping: FileMapping, offset: Int, byteCount: Int, blockSize: Int, crcs: [UInt32], section: UInt32,
         damage: SnapshotDamage, valid: (@Sendable (UnsafeRawBufferPointer) -> Bool)? = nil, checked: Bool = false) {
        precondition(offset >= 0 && byteCount >= 0 && offset + byteCount <= mapping.bytes.count && offset % 8 == 0,
                     "a mapped section lies inside the file, aligned")
        precondition(blockSize > 0 && crcs.count == (byteCount + blockSize - 1) / blockSize, "one checksum per block")
        self.mapping = mapping
        self.base = mapping.bytes.baseAddress! + offset
        self.byteCount = byteCount
        self.blockSize = blockSize
        self.crcs = crcs
        self.section = section
        self.damage = damage
        self.valid = valid
        states = .allocate(capacity: max(1, crcs.count))
        states.initialize(repeating: checked ? 1 : 0, count: max(1, crcs.count))
    }

    deinit {
        states.deallocate()
        repaired?.deallocate()
    }

    /// Checks block `b` if nobody has; whether it is sound.
    @inline(__always)
    func sound(_ b: Int) -> Bool {
        let state = hl_atomic_load_u8(states + b)
        if state == 1 { return true }
        if state == 2 { return false }
        return check(b)
    }

    private func check(_ b: Int) -> Bool {
        let lower = b * blockSize, upper = min(byteCount, lower + blockSize)
        let block = UnsafeRawBufferPointer(start: base + lower, count: upper - lower)
        let ok = CRC32C.checksum(block) == crcs[b] && (valid?(block) ?? true)
        hl_atomic_store_u8(states + b, ok ? 1 : 2)
        if !ok {
            damage.record(.unreadable(file: damage.file, reason: "section \(section) block \(b) fails its check", rule: "S8"))
        }
        return ok
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

    /// The elements `first..<first + count` as a buffer, every block checked first (on
    /// both cores); with a damaged block, from a copy in which it is zeros.
    func withElements<T: BitwiseCopyable, R>(_: T.Type, first: Int, count: Int,
                                             _ body: (UnsafeBufferPointer<T>) throws -> R) rethrows -> R {
        let stride = MemoryLayout<T>.stride
        let lower = first * stride, upper = (first + count) * stride
        var allSound = true
        if count > 0 {
            let firstBlock = lower / blockSize, lastBlock = (upper - 1) / blockSize
            let unchecked = (firstBlock...lastBlock).filter { hl_atomic_load_u8(states + $0) == 0 }
            if unchecked.count > 1 {
                DispatchQueue.concurrentPerform(iterations: unchecked.count) { k in _ = sound(unchecked[k]) }
            } else {
                for b in unchecked { _ = sound(b) }
            }
            allSound = (firstBlock...lastBlock).allSatisfy { hl_atomic_load_u8(states + $0) == 1 }
        }
        let source = allSound ? base : UnsafeRawPointer(repairedCopy().baseAddress!)
        let typed = (source + lower).bindMemory(to: T.self, capacity: count)
        return try body(UnsafeBufferPointer(start: count == 0 ? nil : typed, count: count))
    }

    /// The array with every damaged block zeroed (made once).
    private func repairedCopy() -> UnsafeMutableRawBufferPointer {
        lock.withLock {
            if let repaired { return repaired }
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(8, byteCount), alignment: 8)
            copy.copyMemory(from: UnsafeRawBufferPointer(start: base, count: byteCount))
            for b in 0..<crcs.count where !sound(b) {
                let lower = b * blockSize, upper = min(byteCount, lower + blockSize)
                UnsafeMutableRawBufferPointer(rebasing: copy[lower..<upper]).initializeMemory(as: UInt8.self, repeating: 0)
            }
            repaired = copy
            return copy
        }
    }
}
