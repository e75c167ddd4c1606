#if canImport(Glibc)
import Glibc
#endif
import Foundation  // Thread (the reading-ahead thread)

/// A streaming pull parser for the XML that Apple Health exports are written in,
/// written here for speed and tolerance:
///
/// - The document type declaration (the DTD) is skipped, not parsed: iOS 16.0–16.3
///   wrote a malformed one that every validating or DTD-reading parser rejects.
/// - Elements, attributes in any order (single or double quotes), the five
///   predefined entities and character references (`&#183;`, `&#xB7;`) are decoded;
///   comments, processing instructions and CDATA are skipped; attribute whitespace is
///   normalized as XML requires.
/// - Everything else that is not well-formed is an `XMLError` with byte offset, line
///   and column: mismatched or unclosed tags, a second root, '<' in a value, an
///   unknown entity, a control character, the file ending inside the document.
///
/// Memory is bounded by the buffer (1 MiB, doubled only for a single tag that does
/// not fit, up to 64 MiB) whatever the document's size. Attribute values are views
/// into the buffer, valid until the next call to `next()`.
public final class XMLScanner {
    /// What `next()` found.
    public enum Token: Equatable, Sendable {
        /// A start tag (or an empty-element tag, which is followed by its end).
        case startElement
        /// An end tag (or the end of an empty-element tag).
        case endElement
        /// The end of the document, after the root element closed.
        case endOfDocument
    }

    /// Most attributes one tag may have.
    public static let attributeLimit = 512
    private static let maximumCapacity = 64 << 20
    private static let nameLimit = 100_000

    private let stream: ByteStream
    /// All mutable scanning state, in one allocation reached through a constant
    /// pointer: the hot loops then read and write it without the dynamic exclusivity
    /// checks Swift puts on a class's stored `var`s.
    private let s: UnsafeMutablePointer<ScannerState>
    /// A scanner made with `init(readingAhead:)`: the tags come from the reading
    /// thread's batches, not from `stream` (nil: this scanner reads `stream` itself).
    let ahead: XMLReadAhead?

    /// Comments before the root element (the export writes its version in one).
    public private(set) var prologComments: [String] = []
    /// True when a document type declaration was found and skipped.
    public var skippedDoctype: Bool { doctype != nil }
    /// The document type declaration's text (not parsed; the export writes its
    /// version in a comment inside it), at most 1 MiB.
    public private(set) var doctype: String?

    /// A scanner over `stream`; `predefinedNames` get ids 0, 1, … in order.
    public init(stream: ByteStream, predefinedNames: [String] = [], bufferSize: Int = 1 << 20) {
        self.stream = stream
        ahead = nil
        s = .allocate(capacity: 1)
        s.initialize(to: ScannerState(capacity: max(bufferSize, 64)))
        for name in predefinedNames { addName(Array(name.utf8)) }
    }

    /// A scanner over `stream` that tokenizes it on a thread of its own, up to `depth`
    /// batches of `tagsPerBatch` tags ahead, while its caller maps the tags before
    /// (the import's pass: the tokenizing then runs on the other core). It hands out
    /// the same tokens, names, values and errors as `init(stream:)` would, in the same
    /// order; a malformed document's error comes after the tags before it. Memory: the
    /// reading scanner's buffer plus at most `depth + 2` batches. Dropping the scanner
    /// stops the thread. `textBeforeTag` is not kept (nil).
    public init(readingAhead stream: ByteStream, predefinedNames: [String] = [], tagsPerBatch: Int = 1024, depth: Int = 2,
                bufferSize: Int = 1 << 20) {
        self.stream = stream
        let ahead = XMLReadAhead(depth: depth)
        self.ahead = ahead
        s = .allocate(capacity: 1)
        s.initialize(to: ScannerState(capacity: 64))
        s.pointee.readsAhead = true
        for name in predefinedNames { addName(Array(name.utf8)) }
        let reader = XMLScanner(stream: stream, predefinedNames: predefinedNames, bufferSize: bufferSize)
        reader.s.pointee.tracksLines = true
        ahead.start(reader, tagsPerBatch: tagsPerBatch, arenaBytes: max(tagsPerBatch * 64, 1 << 16))
    }

    private func addName(_ bytes: [UInt8]) {
        var bytes = bytes
        _ = bytes.withUnsafeMutableBufferPointer { s.pointee.names.id($0.baseAddress!, $0.count) }
    }

    deinit {
        ahead?.filled.cancel()
        s.pointee.release()
        s.deinitialize(count: 1)
        s.deallocate()
    }

    // MARK: What the current token is

    /// The current element's interned name (a start or end tag).
    public var element: Int { Int(s.pointee.element) }
    /// Absolute byte offset of the current tag's '<'.
    public var tagOffset: UInt64 { s.pointee.tagOffset }
    /// Bytes of the document consumed so far (read ahead: as of the batch being read).
    public var bytesConsumed: UInt64 {
        if let ahead { return ahead.current?.bytesConsumed ?? 0 }  // progress only: not per tag
        return s.pointee.bufferBase + UInt64(s.pointee.pos)
    }
    /// Open elements.
    public var depth: Int { s.pointee.stackCount }
    /// The interned name of the open element at `depth` (1 is the root; `depth`
    /// itself is the current element).
    public func openElement(atDepth depth: Int) -> Int {
        precondition(depth >= 1 && depth <= s.pointee.stackCount, "no open element at depth \(depth)")
        return Int(s.pointee.stack[depth - 1])
    }
    /// The name of an interned id.
    public func name(_ id: Int) -> String { s.pointee.names.name(id) }

    public var attributeCount: Int { s.pointee.attributeCount }

    /// The interned name of attribute `i`.
    @inline(__always)
    public func attributeName(_ i: Int) -> Int { Int(s.pointee.attributeNames[i]) }

    /// Lends the decoded value of attribute `i` to `body`. The bytes live in the
    /// scanner's buffer and change at the next `next()`, so they are lent as a
    /// `Span`, which cannot escape `body`.
    @inline(__always)
    public func withValue<Result, E: Error>(_ i: Int, _ body: (Span<UInt8>) throws(E) -> Result) throws(E) -> Result {
        // Field by field through the pointer: `let st = s.pointee` would copy the whole
        // state (its name table's arrays retained and released) per attribute read.
        // A value is in the buffer (0), decoded apart (1) or in a read-ahead batch (2).
        let where_ = s.pointee.valueDecoded[i]
        let base = where_ == 0 ? s.pointee.buffer : where_ == 1 ? s.pointee.decoded : s.pointee.batchArena
        let value = UnsafeBufferPointer(start: base + Int(s.pointee.valueStarts[i]), count: Int(s.pointee.valueLengths[i]))
        return try body(unsafe value.span)
    }

    /// The decoded value of attribute `i` as a string (a copy).
    public func valueString(_ i: Int) -> String {
        withValue(i) { String(utf8: $0) }
    }

    /// The index of the attribute named `id`, if present.
    @inline(__always)
    public func attributeIndex(_ id: Int) -> Int? {
        let names = s.pointee.attributeNames
        for i in 0..<s.pointee.attributeCount where names[i] == Int32(id) { return i }
        return nil
    }

    /// The value of attribute `id` as a string.
    public func string(_ id: Int) -> String? {
        attributeIndex(id).map { valueString($0) }
    }

    /// Every attribute as (name, value) strings, in document order.
    public func allAttributes() -> [(String, String)] {
        (0..<attributeCount).map { (name(attributeName($0)), valueString($0)) }
    }

    // MARK: Scanning

    /// The next start tag, end tag or the end of the document.
    public func next() throws(XMLError) -> Token {
        if s.pointee.readsAhead {
            // Within a batch: the state's pointers only (no reference is taken per tag).
            if s.pointee.batchIndex < s.pointee.batchCount { return loadNextTag() }
            return try nextReadAhead(ahead.unsafelyUnwrapped)
        }
        if s.pointee.pendingEnd {
            s.pointee.pendingEnd = false
            s.pointee.element = s.pointee.pop()
            if s.pointee.stackCount == 0 { s.pointee.rootClosed = true }
            return .endElement
        }
        while true {
            let textStart = s.pointee.pos
            let buffer = s.pointee.buffer, end = s.pointee.end
            if let lt = memchr(buffer + textStart, 0x3C, end - textStart) {
                let at = buffer.distance(to: lt.assumingMemoryBound(to: UInt8.self))
                if s.pointee.stackCount == 0 { try checkWhitespace(textStart, at) }
                s.pointee.pos = at
                s.pointee.textStart = textStart
                s.pointee.textEnd = at
            } else {
                if s.pointee.stackCount == 0 { try checkWhitespace(textStart, end) }
                s.pointee.pos = end
                s.pointee.textStart = 0
                s.pointee.textEnd = 0
                if try !more() {
                    if s.pointee.rootClosed { return .endOfDocument }
                    throw error(at: s.pointee.end, s.pointee.rootSeen
                                ? "the document ends inside <\(name(Int(s.pointee.stack[s.pointee.stackCount - 1])))>"
                                : "no root element")
                }
                continue
            }
            while true {
                switch try s.pointee.parseTag(self) {
                case .token(let t): return t
                case .skipped: break
                case .needMore:
                    if try !more() { throw error(at: s.pointee.pos, "the document ends inside a tag") }
                    continue
                }
                break
            }
        }
    }

    private func checkWhitespace(_ from: Int, _ to: Int) throws(XMLError) {
        let buffer = s.pointee.buffer
        var i = from
        if s.pointee.bufferBase == 0 && from == 0 && to >= 3 && buffer[0] == 0xEF && buffer[1] == 0xBB && buffer[2] == 0xBF {
            i = 3  // a UTF-8 byte order mark
        }
        while i < to {
            let c = buffer[i]
            if c != 0x20 && c != 0x0A && c != 0x0D && c != 0x09 {
                throw error(at: i, s.pointee.rootClosed ? "content after the root element" : "text before the root element")
            }
            i += 1
        }
    }

    /// Reads more of the stream, keeping `buffer[pos...]`; false at the end of the stream.
    private func more() throws(XMLError) -> Bool {
        if s.pointee.pos > 0 {
            if s.pointee.tracksLines {
                _ = s.pointee.line(at: s.pointee.pos)
                s.pointee.lineCursor -= s.pointee.pos
            }
            s.pointee.countLines(upTo: s.pointee.pos)
            let keep = s.pointee.end - s.pointee.pos
            if keep > 0 { s.pointee.buffer.update(from: s.pointee.buffer + s.pointee.pos, count: keep) }
            s.pointee.bufferBase += UInt64(s.pointee.pos)
            s.pointee.end = keep
            s.pointee.pos = 0
        }
        if s.pointee.end == s.pointee.capacity {
            guard s.pointee.capacity < Self.maximumCapacity else {
                throw error(at: 0, "a single tag longer than \(Self.maximumCapacity >> 20) MiB")
            }
            s.pointee.grow()
        }
        if s.pointee.streamEnded { return false }
        do {
            let n = try stream.read(into: UnsafeMutableRawBufferPointer(start: s.pointee.buffer + s.pointee.end,
                                                                        count: s.pointee.capacity - s.pointee.end))
            if n == 0 {
                s.pointee.streamEnded = true
                return false
            }
            s.pointee.end += n
            return true
        } catch {
            throw XMLError(offset: s.pointee.bufferBase + UInt64(s.pointee.end), line: 0, column: 0,
                           reason: "reading the document failed: \(error)")
        }
    }

    /// An error at buffer index `index`, with its line and column.
    func error(at index: Int, _ reason: String) -> XMLError {
        s.pointee.error(at: index, reason)
    }

    /// An error located at the current tag's '<' (for content the caller rejects).
    public func errorAtCurrentTag(_ reason: String) -> XMLError {
        if ahead != nil {
            let offset = s.pointee.tagOffset
            return XMLError(offset: offset, line: s.pointee.currentLine, column: Int(offset &- s.pointee.currentLineStart) + 1,
                            reason: reason)
        }
        let index = Int(s.pointee.tagOffset &- s.pointee.bufferBase)
        return s.pointee.error(at: max(0, min(index, s.pointee.end)), reason)
    }

    /// Text capture for small documents read whole (GPX): the text between the
    /// previous tag and the current one, when it lies in the buffer.
    public var textBeforeTag: String? {
        guard ahead == nil else { return nil }
        let start = s.pointee.textStart, end = s.pointee.textEnd
        guard end > start else { return nil }
        return String(decoding: UnsafeBufferPointer(start: s.pointee.buffer + start, count: end - start), as: UTF8.self)
    }

    // MARK: Reading ahead

    /// The next token from the read-ahead batches (`init(readingAhead:)`): the current
    /// tag is loaded into the scanner's state, so every accessor reads it as it reads a
    /// tag this scanner parsed itself. Within a batch, all through the state's pointers.
    private func nextReadAhead(_ ahead: XMLReadAhead) throws(XMLError) -> Token {
        while true {
            if let batch = ahead.current {
                switch batch.end {
                case .more: break
                case .document: return .endOfDocument
                case .failure(let error): throw error
                }
                ahead.spare.withLock { $0.append(batch) }
                ahead.current = nil
                s.pointee.batchCount = 0
            }
            let next: XMLTagBatch?
            do { next = try ahead.filled.next() } catch {
                throw XMLError(offset: s.pointee.tagOffset, line: 0, column: 0, reason: "reading the document failed: \(error)")
            }
            guard let next else {
                throw XMLError(offset: s.pointee.tagOffset, line: 0, column: 0, reason: "the reading thread stopped early")
            }
            for name in next.newNames {
                let expected = s.pointee.names.count
                var bytes = name
                let id = bytes.withUnsafeMutableBufferPointer { s.pointee.names.id($0.baseAddress!, $0.count) }
                precondition(id == expected, "names are interned in the reading scanner's order")
            }
            prologComments += next.prologComments
            if let doctype = next.doctype { self.doctype = doctype }
            ahead.current = next
            s.pointee.batchTags = UnsafePointer(next.tags)
            s.pointee.batchAttributes = UnsafePointer(next.attributes)
            s.pointee.batchArena = next.arena
            s.pointee.batchIndex = 0
            s.pointee.batchCount = next.tagCount
            if next.tagCount > 0 { return loadNextTag() }
        }
    }

    /// Makes the batch's next tag the current one.
    @inline(__always)
    private func loadNextTag() -> Token {
        let tag = s.pointee.batchTags[s.pointee.batchIndex]
        s.pointee.batchIndex += 1
        s.pointee.element = tag.element
        s.pointee.tagOffset = tag.offset
        s.pointee.currentLine = tag.line
        s.pointee.currentLineStart = tag.lineStart
        guard tag.isStart else {
            s.pointee.stackCount = Int(tag.depth)
            s.pointee.attributeCount = 0
            return .endElement
        }
        s.pointee.stackCount = Int(tag.depth) - 1
        s.pointee.push(tag.element)
        let attributes = s.pointee.batchAttributes + Int(tag.firstAttribute)
        let n = Int(tag.attributeCount)
        for k in 0..<n {
            let a = attributes[k]
            s.pointee.attributeNames[k] = a.name
            s.pointee.valueStarts[k] = a.start
            s.pointee.valueLengths[k] = a.length
            s.pointee.valueDecoded[k] = 2
        }
        s.pointee.attributeCount = n
        return .startElement
    }

    /// Names interned so far (the reading thread sends the new ones with each batch).
    var nameCount: Int { s.pointee.names.count }

    /// The bytes of interned name `id`.
    func nameBytes(_ id: Int) -> [UInt8] { Array(name(id).utf8) }

    /// The line of the current tag's '<' and the offset that line starts at (a scanner
    /// reading ahead: `tracksLines`).
    func lineOfCurrentTag() -> (line: Int, lineStart: UInt64) {
        s.pointee.line(at: Int(s.pointee.tagOffset &- s.pointee.bufferBase))
    }

    func noteComment(_ text: String) { prologComments.append(text) }
    func noteDoctype(_ text: String) { doctype = text }
    var nameLimitReached: Bool { s.pointee.names.count > Self.nameLimit }
}
