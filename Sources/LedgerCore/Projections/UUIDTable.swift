import CLedgerAccel
import Foundation
import LedgerLog
#if canImport(Glibc)
import Glibc
#endif

/// An open-addressing hash table from UUID to sample slot, sized for millions of
/// entries: 8 bytes per entry (a 32-bit fingerprint of the UUID's hash, the slot + 1),
/// linear probing, grown at 80 % load. The UUIDs themselves are not in the table, nor in
/// the index's snapshot: a probe whose fingerprint matches asks `uuidOf` for the slot's
/// UUID (the index holds the UUIDs of the slots it folded; for slots restored from a
/// snapshot it reads them from the log), and almost every miss is settled by the
/// fingerprint alone.
///
/// An entry's home bucket is its fingerprint's low bits, so the table grows — and is
/// laid out again — from its entries alone, never reading a UUID (slots restored from a
/// snapshot have none in memory). The price: entries sharing a home share those bits,
/// so a fingerprint tells them apart by its remaining 32 − log2(buckets) bits (11 at a
/// million samples' 2^21 buckets, 8 at ten million's 2^24): a false match costs one
/// `uuidOf`, never a wrong answer.
///
/// Two forms: **buckets** (every writer and every replay: one 8-byte word per bucket,
/// 0 when empty) and **compact** (as snapshots store it, mapped by readers: a bitmap of
/// the nonempty buckets, the number of set bits before each run of 256 buckets, and the
/// entries alone in bucket order — 8.25 bytes per entry at any load, against 10–20 in
/// buckets). A compact table is turned into buckets the first time it is changed.
///
/// Iteration order is irrelevant to every output: the digest and snapshots walk
/// slots, not buckets.
///
/// Invariants (`UUIDTable.Invariant`, checked by `checkInvariants(slotCount:)`): the
/// bucket count is a power of two; the load is at most 80 %; `count` is the number of
/// nonempty buckets; every entry names a slot (`slot + 1` in 1...slot count); a compact
/// table's rank directory counts its bitmap's bits and its entries are as many as they.
struct UUIDTable: Sendable, Equatable {
    /// The buckets form; empty when `compact` holds the table.
    private(set) var buckets: Column<UInt64>
    /// The compact form, as mapped from a snapshot; nil once changed (or never mapped).
    private(set) var compact: CompactUUIDTable?
    private(set) var count = 0

    init(capacity: Int = 1024) {
        var size = 16
        while size / 10 * 8 < capacity { size <<= 1 }
        buckets = Column(Self.zeroedBuckets(size))
    }

    /// A zeroed bucket array. Large ones ask for transparent huge pages before the
    /// memory is touched: every lookup is a random access, and on a virtual machine a
    /// TLB miss costs more than the cache miss (about 2× faster replay of 10M events).
    static func zeroedBuckets(_ count: Int) -> [UInt64] {
        // Capacity at least 1: an empty one writes into the shared empty-array storage (a
        // race ThreadSanitizer reports; see `ColumnSource.read`).
        [UInt64](unsafeUninitializedCapacity: max(1, count)) { buffer, initialized in
            HugePages.advise(UnsafeMutableRawBufferPointer(buffer))
            buffer.baseAddress!.initialize(repeating: 0, count: count)
            initialized = count
        }
    }

    /// A table in buckets form (tests, and a table built elsewhere).
    init(buckets: Column<UInt64>, count: Int) {
        precondition(buckets.count.nonzeroBitCount == 1, "bucket count is a power of two")
        self.buckets = buckets
        self.count = count
    }

    /// A table in compact form (a snapshot's). Precondition: its shape is sound
    /// (`CompactUUIDTable.init` checked the sizes; the snapshot loader the count).
    init(compact: CompactUUIDTable) {
        buckets = []
        self.compact = compact
        count = compact.entries.count
    }

    /// Buckets, in either form.
    var bucketCount: Int { compact?.bucketCount ?? buckets.count }

    /// Equal by meaning: the same entries in the same buckets, in either form.
    static func == (a: UUIDTable, b: UUIDTable) -> Bool {
        guard a.count == b.count, a.bucketCount == b.bucketCount else { return false }
        if a.compact == nil, b.compact == nil { return a.buckets == b.buckets }
        return a.compactForm == b.compactForm
    }

    @inline(__always)
    static func hash(_ uuid: UUID) -> UInt64 {
        let (a, b) = withUnsafeBytes(of: uuid.uuid) {
            ($0.loadUnaligned(fromByteOffset: 0, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
        var h = a &* 0x9E37_79B9_7F4A_7C15 ^ b
        h ^= h >> 32
        h &*= 0xD6E8_FEB8_6659_FD93
        h ^= h >> 32
        return h
    }

    /// A UUID's fingerprint: the high half of its hash. Its low bits are its home bucket.
    @inline(__always)
    static func fingerprint(_ uuid: UUID) -> UInt32 { UInt32(truncatingIfNeeded: hash(uuid) >> 32) }

    /// Starts loading the bucket `uuid` hashes to, so that a lookup a few samples
    /// later finds it in cache (replay looks ahead in the batch it is folding).
    @inline(__always)
    func prefetch(_ uuid: UUID) {
        guard compact == nil, !buckets.isMapped else { return }  // a mapped table checks its blocks as it reads them
        let i = Int(Self.fingerprint(uuid)) & (buckets.count - 1)
        buckets.withUnsafeBufferPointer { hl_prefetch($0.baseAddress! + i) }
    }

    /// The slot holding `uuid`, if any. `uuidOf` reads a slot's UUID (only for entries
    /// whose fingerprint matches); a bucket naming a slot at or past `slotCount` (only a
    /// damaged or forged mapped snapshot has one) is passed over, never read.
    @inline(__always)
    func find<E: Error>(_ uuid: UUID, slotCount: UInt32, uuidOf: (UInt32) throws(E) -> UUID) throws(E) -> UInt32? {
        let fingerprint = Self.fingerprint(uuid)
        if let compact {
            return try compact.find(fingerprint, uuid, slotCount: slotCount, uuidOf: uuidOf)
        }
        let mask = buckets.count - 1
        var i = Int(fingerprint) & mask
        let wanted = UInt64(fingerprint) << 32
        if buckets.isMapped {
            // Bucket by bucket, so that only the blocks a probe reads are checked; at
            // most every bucket once (a damaged table may have no empty one).
            for _ in 0...mask {
                let e = buckets[i]
                if e == 0 { return nil }
                if e & 0xFFFF_FFFF_0000_0000 == wanted {
                    let slot = UInt32(truncatingIfNeeded: e) &- 1
                    if slot < slotCount, try uuidOf(slot) == uuid { return slot }
                }
                i = (i + 1) & mask
            }
            return nil
        }
        // (The buffer's closure rethrows untyped: an error is carried out of it.)
        var failure: E?
        let found = buckets.withUnsafeBufferPointer { b -> UInt32? in
            while true {
                let e = b[i]
                if e == 0 { return nil }
                if e & 0xFFFF_FFFF_0000_0000 == wanted {
                    let slot = UInt32(truncatingIfNeeded: e) &- 1
                    do throws(E) {
                        if slot < slotCount, try uuidOf(slot) == uuid { return slot }
                    } catch {
                        failure = error
                        return nil
                    }
                }
                i = (i + 1) & mask
            }
        }
        if let failure { throw failure }
        return found
    }

    /// `insert(uuid, slot:uuidOf:)` reading UUIDs from the index's column of folded
    /// UUIDs, lent in place (the fold's path: no buffer of the column taken, retained
    /// and released); slots before `base` (restored) are not read.
    @inline(__always)
    mutating func insert(_ uuid: UUID, slot: UInt32, uuids: Column<uuid_t>, base: Int) {
        // (A slot past the column — only a forged snapshot's entry names one — has no
        // UUID at hand either.)
        insert(uuid, slot: slot) { Int($0) >= base && Int($0) - base < uuids.count ? UUID(uuid: uuids[Int($0) - base]) : nil }
    }

    /// `find` when every slot's UUID is in `uuids` (at its slot): the column lent in place.
    @inline(__always)
    func find(_ uuid: UUID, slotCount: UInt32, uuids: Column<uuid_t>) -> UInt32? {
        find(uuid, slotCount: min(slotCount, UInt32(truncatingIfNeeded: uuids.count))) { UUID(uuid: uuids[Int($0)]) }
    }

    /// Adds `uuid` → `slot`. Precondition: `uuid` is not in the table (the rules refuse
    /// a UUID already saved; the probe checks it against every entry of its
    /// fingerprint whose UUID `uuidOf` has at hand, nil: not in memory, not checked);
    /// `slot` fits an entry (below `UInt32.max`, whose `slot + 1` would not).
    @inline(__always)
    mutating func insert(_ uuid: UUID, slot: UInt32, uuidOf: (UInt32) -> UUID?) {
        precondition(slot < UInt32.max, "a slot fits an entry (slot + 1 is below 2^32)")
        if compact != nil { expand() }
        if (count + 1) * 10 > buckets.count * 8 { grow() }
        place(Self.fingerprint(uuid), slot: slot) { uuidOf($0).map { $0 == uuid } ?? false }
        count += 1
    }

    /// Puts an entry for `slot` (below `UInt32.max`: `insert` made sure) in the first
    /// empty bucket from `fingerprint`'s home. Precondition: no entry passed on the way,
    /// of the same fingerprint, is of a slot `holdsTheUUID` (a UUID maps to exactly one slot).
    @inline(__always)
    private mutating func place(_ fingerprint: UInt32, slot: UInt32, holdsTheUUID: (UInt32) -> Bool = { _ in false }) {
        let wanted = UInt64(fingerprint) << 32
        let mask = buckets.count - 1
        var i = Int(fingerprint) & mask
        buckets.withUnsafeMutableBufferPointer { b in
            while b[i] != 0 {
                precondition(b[i] & 0xFFFF_FFFF_0000_0000 != wanted || !holdsTheUUID(UInt32(truncatingIfNeeded: b[i]) &- 1),
                             "a UUID maps to exactly one slot (SampleIndex.uuidFindsItsSlot)")
                i = (i + 1) & mask
            }
            b[i] = wanted | UInt64(slot) + 1
        }
    }

    /// Doubles the buckets and places every entry again, from its fingerprint alone (its
    /// home bucket is the fingerprint's low bits): no UUID is read. Placed in another
    /// order, entries may sit in other buckets of a run; lookups find them the same. An
    /// entry naming no slot (`slot + 1` = 0: only a forged mapped snapshot's, which a
    /// reader's tail may grow) is dropped, as a probe passes it over.
    private mutating func grow() {
        let old = buckets
        buckets = Column(Self.zeroedBuckets(old.count * 2))
        var dropped = 0
        old.withUnsafeBufferPointer { o in
            for e in o where e != 0 {
                guard UInt32(truncatingIfNeeded: e) != 0 else {
                    dropped += 1
                    continue
                }
                place(UInt32(truncatingIfNeeded: e >> 32), slot: UInt32(truncatingIfNeeded: e) - 1)
            }
        }
        count -= dropped
    }

    /// Turns the compact form into buckets (each entry in the bucket it was in).
    private mutating func expand() {
        guard let c = compact else { return }
        buckets = Column(c.bucketWords())
        compact = nil
    }

    /// The table in compact form (what a snapshot stores): the mapped one as it is, or
    /// the buckets packed.
    var compactForm: CompactUUIDTable {
        if let compact { return compact }
        return buckets.withUnsafeBufferPointer { CompactUUIDTable(packing: $0) }
    }
}

/// The compact form of a `UUIDTable` (DESIGN.md, events/FORMAT.md section 11): for
/// `bucketCount` buckets, `bitmap` has bit `i % 64` of word `i / 64` set when bucket
/// `i` is nonempty; `ranks[j]` is the number of set bits in words `0 ..< 4j` (a run of
/// 256 buckets); `entries` are the nonempty buckets' words in bucket order. Bucket `i`'s
/// entry, when set, is `entries[ranks[i / 256] + the set bits of its run before it]`.
///
/// Invariants (`init` checks the sizes; a mapped table's contents are checked as read,
/// never trusted: a rank past the entries ends a probe): `bitmap.count == bucketCount /
/// 64` (at least 1), `ranks.count == (bitmap.count + 3) / 4`, `entries.count` the
/// bitmap's set bits.
struct CompactUUIDTable: Sendable, Equatable {
    let bucketCount: Int
    let bitmap: Column<UInt64>
    let ranks: Column<UInt32>
    let entries: Column<UInt64>

    static let wordsPerRank = 4

    /// Nil when the sizes do not fit one another (a forged snapshot).
    init?(bucketCount: Int, bitmap: Column<UInt64>, ranks: Column<UInt32>, entries: Column<UInt64>) {
        guard bucketCount >= 16, bucketCount.nonzeroBitCount == 1, bucketCount <= 1 << 32,
              bitmap.count == Self.words(bucketCount), ranks.count == (bitmap.count + Self.wordsPerRank - 1) / Self.wordsPerRank,
              entries.count <= bucketCount else { return nil }
        self.bucketCount = bucketCount
        self.bitmap = bitmap
        self.ranks = ranks
        self.entries = entries
    }

    static func words(_ bucketCount: Int) -> Int { max(1, bucketCount / 64) }

    /// Packs a buckets array.
    init(packing b: UnsafeBufferPointer<UInt64>) {
        bucketCount = b.count
        var bits = [UInt64](repeating: 0, count: Self.words(b.count))
        var ranks: [UInt32] = []
        ranks.reserveCapacity((bits.count + Self.wordsPerRank - 1) / Self.wordsPerRank)
        var entries: [UInt64] = []
        for w in bits.indices {
            if w % Self.wordsPerRank == 0 { ranks.append(UInt32(entries.count)) }
            var word: UInt64 = 0
            for k in 0..<min(64, b.count - w * 64) where b[w * 64 + k] != 0 {
                word |= 1 << UInt64(k)
                entries.append(b[w * 64 + k])
            }
            bits[w] = word
        }
        bitmap = Column(bits)
        self.ranks = Column(ranks)
        self.entries = Column(entries)
    }

    /// The buckets array this table packs (a nonempty bucket whose rank lies past the
    /// entries — a damaged table — is left empty).
    func bucketWords() -> [UInt64] {
        var out = UUIDTable.zeroedBuckets(bucketCount)
        var r = 0
        for w in 0..<bitmap.count {
            var word = bitmap[w]
            while word != 0, r < entries.count {
                let k = word.trailingZeroBitCount
                word &= word - 1
                let i = w * 64 + k
                if i < bucketCount { out[i] = entries[r] }
                r += 1
            }
        }
        return out
    }

    /// The entry index of bucket `i`, or nil when the bucket is empty.
    @inline(__always)
    func rank(_ i: Int) -> Int? {
        let w = i >> 6
        let word = bitmap[w]
        let bit = UInt64(1) << UInt64(i & 63)
        guard word & bit != 0 else { return nil }
        var r = Int(ranks[w / Self.wordsPerRank])
        var v = w - w % Self.wordsPerRank
        while v < w { r += bitmap[v].nonzeroBitCount; v += 1 }
        return r + (word & (bit - 1)).nonzeroBitCount
    }

    /// `UUIDTable.find` on the compact form: from the home bucket, entries are
    /// consecutive while buckets are nonempty. Every bucket at most once.
    func find<E: Error>(_ fingerprint: UInt32, _ uuid: UUID, slotCount: UInt32,
                        uuidOf: (UInt32) throws(E) -> UUID) throws(E) -> UInt32? {
        let mask = bucketCount - 1
        var i = Int(fingerprint) & mask
        guard var r = rank(i) else { return nil }
        let wanted = UInt64(fingerprint) << 32
        for _ in 0...mask {
            guard r < entries.count else { return nil }  // a damaged directory: nothing found
            let e = entries[r]
            if e & 0xFFFF_FFFF_0000_0000 == wanted {
                let slot = UInt32(truncatingIfNeeded: e) &- 1
                if slot < slotCount, try uuidOf(slot) == uuid { return slot }
            }
            i = (i + 1) & mask
            if i == 0 {
                guard let wrapped = rank(0) else { return nil }
                r = wrapped
            } else {
                guard bitmap[i >> 6] & (1 << UInt64(i & 63)) != 0 else { return nil }
                r += 1
            }
        }
        return nil
    }
}

extension UUIDTable {
    /// The table's invariants, named as `checkInvariants(slotCount:)` reports them.
    package enum Invariant: String, CaseIterable, Sendable {
        /// The bucket count is a power of two (the probe masks with `count − 1`).
        case bucketsPowerOfTwo = "UUIDTable.bucketsPowerOfTwo"
        /// At most 80 % of the buckets are used (`insert` grows before; a probe of a
        /// full table would never meet an empty bucket).
        case loadAtMost80Percent = "UUIDTable.loadAtMost80Percent"
        /// `count` is the number of nonempty buckets.
        case countIsNonemptyBuckets = "UUIDTable.countIsNonemptyBuckets"
        /// Every nonempty bucket names a slot: `slot + 1` in `1...slotCount`.
        case entriesNameSlots = "UUIDTable.entriesNameSlots"
        /// A compact table's rank directory counts the bitmap's set bits before each run,
        /// and it has one entry per set bit.
        case compactRanksCountBits = "UUIDTable.compactRanksCountBits"
        /// Every entry sits in its home bucket (its fingerprint's low bits) or after it
        /// with no empty bucket between: where a probe for it looks.
        case entriesReachableFromHome = "UUIDTable.entriesReachableFromHome"
    }

    /// Every invariant the table breaks for an index of `slotCount` slots (empty:
    /// none). Reads every bucket: for a mapped table, every block (tests only).
    func checkInvariants(slotCount: Int) -> [InvariantViolation] {
        var found = InvariantFindings<Invariant>()
        let n = bucketCount
        if n.nonzeroBitCount != 1 { found.note(.bucketsPowerOfTwo, "\(n) buckets") }
        if count * 10 > n * 8 { found.note(.loadAtMost80Percent, "\(count) entries in \(n) buckets") }
        if let c = compact {
            var bits = 0
            for w in 0..<c.bitmap.count {
                if w % CompactUUIDTable.wordsPerRank == 0, Int(c.ranks[w / CompactUUIDTable.wordsPerRank]) != bits {
                    found.note(.compactRanksCountBits, "rank \(w / CompactUUIDTable.wordsPerRank) is \(c.ranks[w / CompactUUIDTable.wordsPerRank]), \(bits) bits before it")
                }
                bits += c.bitmap[w].nonzeroBitCount
            }
            if bits != c.entries.count { found.note(.compactRanksCountBits, "\(bits) bits set, \(c.entries.count) entries") }
        }
        let words = compact?.bucketWords() ?? buckets.array
        var nonempty = 0
        for (i, e) in words.enumerated() where e != 0 {
            nonempty += 1
            let slotPlusOne = UInt32(truncatingIfNeeded: e)
            if slotPlusOne == 0 || Int(slotPlusOne) > slotCount {
                found.note(.entriesNameSlots, "bucket \(i) holds 0x\(String(e, radix: 16)) with \(slotCount) slots")
            }
            guard n.nonzeroBitCount == 1 else { continue }
            var j = Int(truncatingIfNeeded: e >> 32) & (n - 1)
            while j != i, words[j] != 0 { j = (j + 1) & (n - 1) }
            if j != i { found.note(.entriesReachableFromHome, "bucket \(i)'s entry: an empty bucket \(j) lies between it and its home") }
        }
        if nonempty != count { found.note(.countIsNonemptyBuckets, "count \(count), \(nonempty) nonempty buckets") }
        return found.violations
    }
}

/// Transparent huge pages for large, randomly accessed or freshly loaded buffers.
package enum HugePages {
    /// Asks for 2 MiB pages over the aligned middle of `buffer` before it is touched:
    /// fewer page faults to fill it, fewer TLB misses to use it. A hint only.
    package static func advise(_ buffer: UnsafeMutableRawBufferPointer) {
        #if canImport(Glibc)
        guard buffer.count >= 4 << 20, let base = buffer.baseAddress else { return }
        let huge = 2 << 20
        let start = (Int(bitPattern: base) + huge - 1) & ~(huge - 1)
        let end = (Int(bitPattern: base) + buffer.count) & ~(huge - 1)
        if end > start { _ = madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, 14 /* MADV_HUGEPAGE */) }
        #endif
    }
}
