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
struct RecordIdentity {
    /// What kind of element a digest is of (the first byte hashed).
    enum Domain: UInt8 {
        case record = 0x52       // "R": a top-level Record
        case member = 0x4D       // "M": a Record inside a Correlation
        case correlation = 0x43  // "C"
        case workout = 0x57      // "W"
    }

    /// The canonical form of the current top-level element, tag by tag.
    private(set) var form: [UInt8] = []
    /// Where the last tag written into `form` starts (a member's subtree starts there).
    private(set) var lastTagStart = 0
    /// Digests seen once (their first 8 bytes); digests seen more, with the number of
    /// times: the occurrence number of the next repeat.
    private var seen: FingerprintSet

    /// `expectedRecords`: about how many elements the export holds (sizes the table).
    init(expectedRecords: Int = 800) {
        seen = FingerprintSet(capacity: expectedRecords)
    }
    private var repeats: [UInt64: UInt32] = [:]
    /// Whether the last `uuid(_:from:)` was of content seen before in this
    /// export (an exact repeat: the importer counts them).
    private(set) var lastWasRepeat = false
    /// Attribute and element names' bytes by interned id (ids are small and dense).
    private var nameBytes: [[UInt8]?] = []
    /// The attributes' interned names of the last tag, and the order (by name bytes,
    /// ties in document order) they sort into: most tags of an export repeat the
    /// names of the one before, and then the sort is not done again.
    private var lastNames: [Int] = []
    private var lastOrder: [Int] = []
    private var names: [Int] = []

    /// Starts the canonical form of a new top-level element at the scanner's current tag.
    mutating func begin(_ scanner: XMLScanner) {
        form.removeAll(keepingCapacity: true)
        add(scanner, relativeDepth: 0)
    }

    /// Appends the scanner's current start tag: depth below the top-level element
    /// (1 byte), name (u16 BE length + bytes), attribute count (u16 BE), then each
    /// attribute sorted by name bytes (ties in document order): name (u16 BE length
    /// + bytes), value (u32 BE length + entity-decoded bytes).
    mutating func add(_ scanner: XMLScanner, relativeDepth: Int) {
        lastTagStart = form.count
        form.append(UInt8(truncatingIfNeeded: relativeDepth))
        appendName(scanner.element, scanner)
        let n = scanner.attributeCount
        form.append(UInt8(truncatingIfNeeded: n >> 8))
        form.append(UInt8(truncatingIfNeeded: n))
        names.removeAll(keepingCapacity: true)
        for i in 0..<n { names.append(scanner.attributeName(i)) }
        if names != lastNames {
            for name in names { _ = bytes(of: name, scanner) }
            let table = nameBytes
            var order = Array(0..<n)
            if n > 1 {
                order.sort { a, b in
                    let x = table[names[a]]!, y = table[names[b]]!
                    return x.lexicographicallyPrecedes(y) || (x == y && a < b)
                }
            }
            lastNames = names
            lastOrder = order
        }
        for index in lastOrder {
            appendName(names[index], scanner)
            scanner.withValue(index) { value in
                let count = UInt32(truncatingIfNeeded: value.count)
                form.append(UInt8(truncatingIfNeeded: count >> 24))
                form.append(UInt8(truncatingIfNeeded: count >> 16))
                form.append(UInt8(truncatingIfNeeded: count >> 8))
                form.append(UInt8(truncatingIfNeeded: count))
                value.withUnsafeBufferPointer { form.append(contentsOf: $0) }
            }
        }
    }

    private mutating func bytes(of name: Int, _ scanner: XMLScanner) -> [UInt8] {
        if name < nameBytes.count, let b = nameBytes[name] { return b }
        let b = Array(scanner.name(name).utf8)
        if name >= nameBytes.count { nameBytes += [[UInt8]?](repeating: nil, count: name - nameBytes.count + 1) }
        nameBytes[name] = b
        return b
    }

    private mutating func appendName(_ name: Int, _ scanner: XMLScanner) {
        if name >= nameBytes.count || nameBytes[name] == nil { _ = bytes(of: name, scanner) }
        let count = nameBytes[name]!.count
        form.append(UInt8(truncatingIfNeeded: count >> 8))
        form.append(UInt8(truncatingIfNeeded: count))
        form.append(contentsOf: nameBytes[name]!)
    }

    /// The UUID of the canonical form from byte `start` to the end, in `domain`:
    /// D = SHA-256(domain ‖ form[start...]); the first occurrence in this export is
    /// D's first 16 bytes, the k-th repeat (k ≥ 1) the first 16 bytes of
    /// SHA-256(D ‖ k as u32 BE); then version 8 and the RFC 9562 variant are set.
    mutating func uuid(_ domain: Domain, from start: Int = 0) -> UUID {
        var sha = SHA256()
        var d = domain.rawValue
        withUnsafeBytes(of: &d) { sha.update($0) }
        form.withUnsafeBytes { sha.update(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        var digest = sha.finalize().array
        let key = digest.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        lastWasRepeat = !seen.insert(key)
        if lastWasRepeat {
            let k = repeats[key, default: 1]
            repeats[key] = k + 1
            digest += [UInt8(truncatingIfNeeded: k >> 24), UInt8(truncatingIfNeeded: k >> 16),
                       UInt8(truncatingIfNeeded: k >> 8), UInt8(truncatingIfNeeded: k)]
            digest = SHA256.hash(digest).array
        }
        return Self.uuid(fromDigest: digest)
    }

    /// A digest's first 16 bytes as a version 8 UUID (RFC 9562 variant).
    static func uuid(fromDigest digest: [UInt8]) -> UUID {
        var b = Array(digest.prefix(16))
        b[6] = (b[6] & 0x0F) | 0x80
        b[8] = (b[8] & 0x3F) | 0x80
        return b.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
    }
}
