import Foundation
import LedgerLog
import LedgerChecksums

/// A sample's UUID derived from its content (events/FORMAT.md, "Record identity"),
/// so that the same record in two exports of the same person has the same UUID,
/// whichever export it came in and wherever it stands in the file.
///
/// The content of a top-level element (a `Record`, `Correlation` or `Workout`) is its
/// **canonical form**: every start tag of the element and of everything inside it,
/// in document order, each as its depth below the element, its name and its
/// attributes sorted by name, values entity-decoded and otherwise as written. A
/// correlation's member is identified by its own subtree (with the depths it has
/// inside the correlation). The digest is SHA-256 over a domain byte and the form;
/// exact repeats inside one export are told apart by their occurrence number.
///
/// Shipped: the layout below must never change (a change would make every earlier
/// record look absent from the next export).
///
/// Runs once per start tag of every identified element (a million times in a large
/// export), so the form lives in one growing byte buffer written through a pointer,
/// each name's encoding is made once, and no array is made per tag or per digest.
/// Used by one mapper on one thread.
final class RecordIdentity {
    /// What kind of element a digest is of (the first byte hashed).
    enum Domain: UInt8 {
        case record = 0x52       // "R": a top-level Record
        case member = 0x4D       // "M": a Record inside a Correlation
        case correlation = 0x43  // "C"
        case workout = 0x57      // "W"
    }

    /// Everything that changes, behind a constant pointer (as the scanner's state is):
    /// the per-tag work then pays no dynamic exclusivity check on a class property.
    private struct State {
        /// The canonical form of the current top-level element, tag by tag: `count` bytes at `form`.
        var form: UnsafeMutablePointer<UInt8>
        var capacity: Int
        var count = 0
        /// Where the last tag written into the form starts (a member's subtree starts there).
        var lastTagStart = 0
        /// Digests seen once (their first 8 bytes); digests seen more, with the number of
        /// times: the occurrence number of the next repeat.
        var seen: FingerprintSet
        var repeats: [UInt64: UInt32] = [:]
        var lastWasRepeat = false
        /// Each interned name's encoding in the form (u16 BE length · bytes), made once:
        /// all of them in `nameBytes`, name id `i`'s at `nameStarts[i]` (−1: not yet made),
        /// `nameLengths[i]` bytes long (ids are small and dense).
        var nameBytes: [UInt8] = []
        var nameStarts: [Int] = []
        var nameLengths: [Int] = []
        /// The attributes' interned names of the last tag, and the order (by name bytes,
        /// ties in document order) they sort into: most tags of an export repeat the
        /// names of the one before, and then the sort is not done again.
        var lastNames: [Int] = []
        var lastOrder: [Int] = []

        /// Room for `n` more bytes of form.
        @inline(__always)
        mutating func reserve(_ n: Int) {
            guard count + n > capacity else { return }
            var bigger = capacity * 2
            while bigger < count + n { bigger *= 2 }
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: bigger)
            grown.update(from: form, count: count)
            form.deallocate()
            form = grown
            capacity = bigger
        }

        /// Appends `bytes` (room reserved). Names and most values are a few bytes: those
        /// are copied by two overlapping words, not a call to memcpy.
        @inline(__always)
        mutating func put(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, bytes.count > 0 else { return }
            let to = UnsafeMutableRawPointer(form + count), n = bytes.count
            if n >= 8 && n <= 16 {
                let head = base.loadUnaligned(as: UInt64.self), tail = base.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
                to.storeBytes(of: head, as: UInt64.self)
                to.storeBytes(of: tail, toByteOffset: n - 8, as: UInt64.self)
            } else if n < 8 {
                for i in 0..<n { to.storeBytes(of: base.load(fromByteOffset: i, as: UInt8.self), toByteOffset: i, as: UInt8.self) }
            } else {
                to.copyMemory(from: base, byteCount: n)
            }
            count += n
        }

        @inline(__always)
        mutating func put(_ byte: UInt8) {
            form[count] = byte
            count += 1
        }

        /// Makes the encoding of interned name `id` in the form, the first time it is met.
        mutating func makeNameForm(_ id: Int, _ scanner: XMLScanner) {
            if id < nameStarts.count, nameStarts[id] >= 0 { return }
            let bytes = Array(scanner.name(id).utf8)
            if id >= nameStarts.count {
                nameStarts += [Int](repeating: -1, count: id - nameStarts.count + 1)
                nameLengths += [Int](repeating: 0, count: id - nameLengths.count + 1)
            }
            nameStarts[id] = nameBytes.count
            nameLengths[id] = 2 + bytes.count
            nameBytes += [UInt8(truncatingIfNeeded: bytes.count >> 8), UInt8(truncatingIfNeeded: bytes.count)] + bytes
        }

        /// Appends name `id`'s encoding (made already).
        @inline(__always)
        mutating func putName(_ id: Int) {
            let start = nameStarts[id], length = nameLengths[id]
            reserve(length)
            nameBytes.withUnsafeBytes { put(UnsafeRawBufferPointer(rebasing: $0[start ..< start + length])) }
        }
    }

    private let s: UnsafeMutablePointer<State>

    /// Where the last tag written into the form starts (a member's subtree starts there).
    var lastTagStart: Int { s.pointee.lastTagStart }
    /// Whether the last `uuid(_:from:)` was of content seen before in this
    /// export (an exact repeat: the importer counts them).
    var lastWasRepeat: Bool { s.pointee.lastWasRepeat }

    /// `expectedRecords`: about how many elements the export holds (sizes the table).
    init(expectedRecords: Int = 800) {
        s = .allocate(capacity: 1)
        s.initialize(to: State(form: .allocate(capacity: 4096), capacity: 4096, seen: FingerprintSet(capacity: expectedRecords)))
    }

    deinit {
        s.pointee.form.deallocate()
        s.deinitialize(count: 1)
        s.deallocate()
    }

    /// Starts the canonical form of a new top-level element at the scanner's current tag.
    func begin(_ scanner: XMLScanner) {
        s.pointee.count = 0
        add(scanner, relativeDepth: 0)
    }

    /// Appends the scanner's current start tag: depth below the top-level element
    /// (1 byte), name (u16 BE length + bytes), attribute count (u16 BE), then each
    /// attribute sorted by name bytes (ties in document order): name (u16 BE length
    /// + bytes), value (u32 BE length + entity-decoded bytes).
    func add(_ scanner: XMLScanner, relativeDepth: Int) {
        let n = scanner.attributeCount
        var sameNames = n == s.pointee.lastNames.count
        if sameNames {
            for i in 0..<n where scanner.attributeName(i) != s.pointee.lastNames[i] {
                sameNames = false
                break
            }
        }
        if !sameNames { sortNames(scanner) }
        s.pointee.makeNameForm(scanner.element, scanner)
        s.pointee.lastTagStart = s.pointee.count
        s.pointee.reserve(1)
        s.pointee.put(UInt8(truncatingIfNeeded: relativeDepth))
        s.pointee.putName(scanner.element)
        s.pointee.reserve(2)
        s.pointee.put(UInt8(truncatingIfNeeded: n >> 8))
        s.pointee.put(UInt8(truncatingIfNeeded: n))
        for k in 0..<n {
            let index = s.pointee.lastOrder[k]
            s.pointee.putName(s.pointee.lastNames[index])
            scanner.withValue(index) { value in
                let length = value.count
                s.pointee.reserve(4 + length)
                withUnsafeBytes(of: UInt32(truncatingIfNeeded: length).bigEndian) { s.pointee.put($0) }
                value.withUnsafeBufferPointer { s.pointee.put(UnsafeRawBufferPointer($0)) }
            }
        }
    }

    /// The current tag's attribute names and the order they sort into (by name bytes,
    /// ties in document order), kept as the last tag's.
    private func sortNames(_ scanner: XMLScanner) {
        let n = scanner.attributeCount
        let names = (0..<n).map { scanner.attributeName($0) }
        for name in names { s.pointee.makeNameForm(name, scanner) }
        var order = Array(0..<n)
        if n > 1 {
            // By name bytes (the form's bytes after the 2-byte length), ties in document order.
            let bytes = s.pointee.nameBytes, starts = s.pointee.nameStarts, lengths = s.pointee.nameLengths
            func key(_ i: Int) -> ArraySlice<UInt8> {
                bytes[starts[names[i]] + 2 ..< starts[names[i]] + lengths[names[i]]]
            }
            order.sort { a, b in
                let x = key(a), y = key(b)
                return x.lexicographicallyPrecedes(y) || (x.elementsEqual(y) && a < b)
            }
        }
        s.pointee.lastNames = names
        s.pointee.lastOrder = order
    }

    /// The UUID of the canonical form from byte `start` to the end, in `domain`:
    /// D = SHA-256(domain ‖ form[start...]); the first occurrence in this export is
    /// D's first 16 bytes, the k-th repeat (k ≥ 1) the first 16 bytes of
    /// SHA-256(D ‖ k as u32 BE); then version 8 and the RFC 9562 variant are set.
    func uuid(_ domain: Domain, from start: Int = 0) -> UUID {
        occurrence(of: digest(domain, from: start))
    }

    /// D, for `occurrence(of:)` a little later (the occurrence table's slot is fetched
    /// meanwhile). Between the two, no other element's occurrence may be taken (they
    /// are counted in document order), and `uuid(fromDigest: D)` is the UUID unless
    /// the element turns out to be a repeat.
    func digest(_ domain: Domain, from start: Int = 0) -> SHA256Digest {
        let count = s.pointee.count
        precondition(start >= 0 && start <= count, "a subtree of the current form")
        var sha = SHA256()
        var d = domain.rawValue
        withUnsafeBytes(of: &d) { sha.update($0) }
        sha.update(UnsafeRawBufferPointer(start: s.pointee.form + start, count: count - start))
        let digest = sha.finalize()
        s.pointee.seen.prefetch(digest.bytes.0)
        return digest
    }

    /// The UUID of the element whose digest is `digest`: counts it (document order),
    /// and derives the UUID of its occurrence.
    func occurrence(of digest: SHA256Digest) -> UUID {
        let key = digest.bytes.0  // the digest's first 8 bytes, as they lie in memory
        let repeated = !s.pointee.seen.insert(key)
        s.pointee.lastWasRepeat = repeated
        guard repeated else { return Self.uuid(fromDigest: digest) }
        let k = s.pointee.repeats[key, default: 1]
        s.pointee.repeats[key] = k + 1
        var again = SHA256()
        again.update(digest)
        withUnsafeBytes(of: k.bigEndian) { again.update($0) }
        return Self.uuid(fromDigest: again.finalize())
    }

    /// A digest's first 16 bytes as a version 8 UUID (RFC 9562 variant).
    static func uuid(fromDigest digest: SHA256Digest) -> UUID {
        var b = (digest.bytes.0, digest.bytes.1)
        withUnsafeMutableBytes(of: &b) { raw in
            raw[6] = (raw[6] & 0x0F) | 0x80
            raw[8] = (raw[8] & 0x3F) | 0x80
        }
        return withUnsafeBytes(of: b) { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
    }
}
