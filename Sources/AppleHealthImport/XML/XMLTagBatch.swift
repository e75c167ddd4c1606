import Foundation  // Thread
import LedgerLog  // BoundedHandOff, Locked

/// Tags read ahead by an `XMLScanner` on a thread of its own, recorded for the
/// scanner that hands them out (`XMLScanner(readingAhead:)`): each tag's element,
/// depth, byte offset and line, and its attributes, the values (entity-decoded)
/// copied into one byte arena. So the tokenizing runs beside the mapping of the
/// tags before, on the other core, instead of before it on the same one.
///
/// Invariants: `attributes[0..<attributeCount]` holds every tag's attributes, in order;
/// a tag's are `firstAttribute..<firstAttribute + attributeCount`; every value lies in
/// `arena[0..<arenaCount]`; `newNames` are the names the reading scanner interned while
/// reading these tags, in id order.
final class XMLTagBatch: @unchecked Sendable {
    // @unchecked: filled by the reading thread, then handed over (through a
    // BoundedHandOff's lock) and only read by the consuming scanner, then handed back.

    struct Tag {
        var isStart: Bool
        var element: Int32
        /// The scanner's depth after the tag (a start tag counts itself).
        var depth: Int32
        var firstAttribute: Int32
        var attributeCount: Int32
        /// Absolute byte offset of the tag's '<'.
        var offset: UInt64
        /// 1-based line of the tag's '<', and the absolute offset that line starts at.
        var line: Int
        var lineStart: UInt64
    }

    /// How the reading ended after these tags.
    enum End {
        /// More batches follow.
        case more
        /// The document ended (after the root element closed; the stream was read to its end).
        case document
        /// The document is not well-formed there, or reading it failed.
        case failure(XMLError)
    }

    /// The tags, and every tag's attributes (name, value start and length in the
    /// arena, one `Attribute` each), in raw storage: the consuming scanner reads them
    /// through pointers, with no reference counting per tag.
    struct Attribute {
        var name: Int32
        var start: Int32
        var length: Int32
    }
    private(set) var tags: UnsafeMutablePointer<Tag>
    private var tagCapacity: Int
    private(set) var tagCount = 0
    private(set) var attributes: UnsafeMutablePointer<Attribute>
    private var attributeCapacity: Int
    private(set) var attributeCount = 0
    private(set) var arena: UnsafeMutablePointer<UInt8>
    private var arenaCapacity: Int
    private(set) var arenaCount = 0
    /// Names interned while these tags were read (their bytes), in id order.
    var newNames: [[UInt8]] = []
    /// Comments before the root read since the last batch, and the document type
    /// declaration when it was read in this one.
    var prologComments: [String] = []
    var doctype: String?
    /// Bytes of the document consumed when the batch was handed over.
    var bytesConsumed: UInt64 = 0
    var end = End.more

    init(tags: Int = 4096, arenaCapacity: Int = 1 << 20) {
        tagCapacity = max(tags, 16)
        self.tags = .allocate(capacity: tagCapacity)
        attributeCapacity = tagCapacity * 8
        attributes = .allocate(capacity: attributeCapacity)
        self.arenaCapacity = max(arenaCapacity, 1024)
        arena = .allocate(capacity: self.arenaCapacity)
    }

    deinit {
        tags.deallocate()
        attributes.deallocate()
        arena.deallocate()
    }

    /// Empty again, for another turn (the allocations are kept).
    func reset() {
        tagCount = 0
        attributeCount = 0
        arenaCount = 0
        newNames.removeAll()
        prologComments.removeAll()
        doctype = nil
        bytesConsumed = 0
        end = .more
    }

    /// Whether the arena is past `limit` bytes (the reader hands the batch over then).
    func arenaFull(_ limit: Int) -> Bool { arenaCount >= limit }

    /// Records the reading scanner's current tag (`isStart`: a start tag, whose
    /// attributes are copied; else an end tag).
    func record(_ scanner: XMLScanner, isStart: Bool) {
        let (line, lineStart) = scanner.lineOfCurrentTag()
        let n = isStart ? scanner.attributeCount : 0
        if tagCount == tagCapacity {
            tags = Self.grown(tags, count: tagCount, to: tagCapacity * 2)
            tagCapacity *= 2
        }
        if attributeCount + n > attributeCapacity {
            var bigger = attributeCapacity * 2
            while bigger < attributeCount + n { bigger *= 2 }
            attributes = Self.grown(attributes, count: attributeCount, to: bigger)
            attributeCapacity = bigger
        }
        tags[tagCount] = Tag(isStart: isStart, element: Int32(scanner.element), depth: Int32(scanner.depth),
                             firstAttribute: Int32(attributeCount), attributeCount: Int32(n), offset: scanner.tagOffset,
                             line: line, lineStart: lineStart)
        tagCount += 1
        for i in 0..<n {
            let name = Int32(scanner.attributeName(i))
            scanner.withValue(i) { value in
                value.withUnsafeBufferPointer { bytes in
                    if arenaCount + bytes.count > arenaCapacity { grow(arenaCount + bytes.count) }
                    if let base = bytes.baseAddress, bytes.count > 0 { (arena + arenaCount).update(from: base, count: bytes.count) }
                    attributes[attributeCount] = Attribute(name: name, start: Int32(arenaCount), length: Int32(bytes.count))
                    attributeCount += 1
                    arenaCount += bytes.count
                }
            }
        }
    }

    private static func grown<T>(_ old: UnsafeMutablePointer<T>, count: Int, to capacity: Int) -> UnsafeMutablePointer<T> {
        let new = UnsafeMutablePointer<T>.allocate(capacity: capacity)
        new.moveInitialize(from: old, count: count)
        old.deallocate()
        return new
    }

    private func grow(_ needed: Int) {
        var bigger = arenaCapacity * 2
        while bigger < needed { bigger *= 2 }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: bigger)
        grown.update(from: arena, count: arenaCount)
        arena.deallocate()
        arena = grown
        arenaCapacity = bigger
    }
}

/// The reading thread of `XMLScanner(readingAhead:)` and what it shares with the
/// consuming scanner: the hand-off of filled batches and the batches handed back.
final class XMLReadAhead: @unchecked Sendable {
    // @unchecked: `reader` is used only by the reading thread; `filled` and `spare`
    // are locked; `current` and `index` only by the consuming scanner.
    let filled: BoundedHandOff<XMLTagBatch>
    let spare = Locked<[XMLTagBatch]>([])
    /// The batch the consuming scanner reads (its position is in the scanner's state).
    var current: XMLTagBatch?

    init(depth: Int) {
        filled = BoundedHandOff(capacity: depth)
    }

    /// Starts the reading thread: `reader` is used by it alone from here on.
    func start(_ reader: XMLScanner, tagsPerBatch: Int, arenaBytes: Int) {
        struct Handed: @unchecked Sendable { let reader: XMLScanner }  // handed over whole, never shared
        let handed = Handed(reader: reader)
        let thread = Thread { [self] in read(handed.reader, tagsPerBatch: tagsPerBatch, arenaBytes: arenaBytes) }
        thread.name = "healthledger.xml.read"
        thread.stackSize = 4 << 20
        thread.start()
    }

    /// Reads `reader`'s document to its end (or first error) on the calling thread,
    /// `tagsPerBatch` tags (or about `arenaBytes` bytes of values) a batch.
    func read(_ reader: XMLScanner, tagsPerBatch: Int, arenaBytes: Int) {
        var namesSent = reader.nameCount
        var commentsSent = 0
        var doctypeSent = false
        while true {
            let batch = spare.withLock { $0.popLast() } ?? XMLTagBatch(tags: tagsPerBatch, arenaCapacity: arenaBytes + (arenaBytes >> 2))
            batch.reset()
            do {
                fill: while batch.tagCount < tagsPerBatch && !batch.arenaFull(arenaBytes) {
                    let token = try reader.next()
                    while namesSent < reader.nameCount {
                        batch.newNames.append(reader.nameBytes(namesSent))
                        namesSent += 1
                    }
                    switch token {
                    case .startElement: batch.record(reader, isStart: true)
                    case .endElement: batch.record(reader, isStart: false)
                    case .endOfDocument:
                        batch.end = .document
                        break fill
                    }
                }
            } catch {
                while namesSent < reader.nameCount {
                    batch.newNames.append(reader.nameBytes(namesSent))
                    namesSent += 1
                }
                batch.end = .failure(error)
            }
            if commentsSent < reader.prologComments.count {
                batch.prologComments = Array(reader.prologComments[commentsSent...])
                commentsSent = reader.prologComments.count
            }
            if !doctypeSent, let doctype = reader.doctype {
                batch.doctype = doctype
                doctypeSent = true
            }
            batch.bytesConsumed = reader.bytesConsumed
            guard filled.put(batch) else { return }  // the consumer went away
            if case .more = batch.end { continue }
            filled.finish()
            return
        }
    }
}
