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

    fileprivate func noteComment(_ text: String) { prologComments.append(text) }
    fileprivate func noteDoctype(_ text: String) { doctype = text }
    fileprivate var nameLimitReached: Bool { s.pointee.names.count > Self.nameLimit }
}

/// The scanner's state (see `XMLScanner.s`). Invariants: `0 ≤ pos ≤ end ≤ capacity`;
/// attribute value ranges lie inside `buffer[0..<end]` or `decoded[0..<decodedCount]`.
private struct ScannerState {
    var buffer: UnsafeMutablePointer<UInt8>
    var capacity: Int
    var pos = 0
    var end = 0
    var streamEnded = false
    var bufferBase: UInt64 = 0
    var linesBefore = 0
    var lineStartBefore: UInt64 = 0
    var textStart = 0
    var textEnd = 0

    var element: Int32 = -1
    var tagOffset: UInt64 = 0
    var pendingEnd = false
    var rootSeen = false
    var rootClosed = false

    var attributeCount = 0
    let attributeNames: UnsafeMutablePointer<Int32>
    let valueStarts: UnsafeMutablePointer<Int32>
    let valueLengths: UnsafeMutablePointer<Int32>
    let valueDecoded: UnsafeMutablePointer<UInt8>
    var decoded: UnsafeMutablePointer<UInt8>
    var decodedCapacity = 1 << 16
    var decodedCount = 0

    var stack: UnsafeMutablePointer<Int32>
    var stackCount = 0
    var stackCapacity = 64

    var names = NameTable()

    /// A scanner reading ahead counts the lines up to each tag as it goes (`line(at:)`):
    /// everything before `lineCursor` (an index in the buffer) holds `cursorLines`
    /// newlines, the last of them ending at `cursorLineStart` (absolute).
    var tracksLines = false
    var lineCursor = 0
    var cursorLines = 0
    var cursorLineStart: UInt64 = 0
    /// A scanner handing out read-ahead tags: the batch being read (its tags,
    /// attributes and arena), the next tag's index, and the current tag's line.
    var batchArena: UnsafeMutablePointer<UInt8>
    var batchTags = UnsafePointer<XMLTagBatch.Tag>(bitPattern: 8)!
    var batchAttributes = UnsafePointer<XMLTagBatch.Attribute>(bitPattern: 8)!
    var readsAhead = false
    var batchIndex = 0
    var batchCount = 0
    var currentLine = 0
    var currentLineStart: UInt64 = 0

    /// The 1-based line of buffer index `index` (at or after the cursor) and the
    /// absolute offset its line starts at; the cursor moves there.
    mutating func line(at index: Int) -> (Int, UInt64) {
        precondition(index >= lineCursor, "lines are counted forward")
        var i = lineCursor
        while i < index, let nl = memchr(buffer + i, 0x0A, index - i) {
            let at = buffer.distance(to: nl.assumingMemoryBound(to: UInt8.self))
            cursorLines += 1
            cursorLineStart = bufferBase + UInt64(at) + 1
            i = at + 1
        }
        lineCursor = index
        return (cursorLines + 1, cursorLineStart)
    }

    init(capacity: Int) {
        self.capacity = capacity
        buffer = .allocate(capacity: capacity)
        let limit = XMLScanner.attributeLimit
        attributeNames = .allocate(capacity: limit)
        valueStarts = .allocate(capacity: limit)
        valueLengths = .allocate(capacity: limit)
        valueDecoded = .allocate(capacity: limit)
        decoded = .allocate(capacity: decodedCapacity)
        stack = .allocate(capacity: stackCapacity)
        batchArena = buffer
    }

    func release() {
        buffer.deallocate()
        attributeNames.deallocate()
        valueStarts.deallocate()
        valueLengths.deallocate()
        valueDecoded.deallocate()
        decoded.deallocate()
        stack.deallocate()
        names.release()
    }

    mutating func grow() {
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2)
        bigger.update(from: buffer, count: end)
        buffer.deallocate()
        buffer = bigger
        capacity *= 2
    }

    mutating func push(_ id: Int32) {
        if stackCount == stackCapacity {
            let bigger = UnsafeMutablePointer<Int32>.allocate(capacity: stackCapacity * 2)
            bigger.update(from: stack, count: stackCount)
            stack.deallocate()
            stack = bigger
            stackCapacity *= 2
        }
        stack[stackCount] = id
        stackCount += 1
    }

    mutating func pop() -> Int32 {
        stackCount -= 1
        return stack[stackCount]
    }

    mutating func countLines(upTo limit: Int) {
        var i = 0
        while let nl = memchr(buffer + i, 0x0A, limit - i) {
            let at = buffer.distance(to: nl.assumingMemoryBound(to: UInt8.self))
            linesBefore += 1
            lineStartBefore = bufferBase + UInt64(at) + 1
            i = at + 1
        }
    }

    func error(at index: Int, _ reason: String) -> XMLError {
        var line = linesBefore + 1
        var lineStart = lineStartBefore
        var i = 0
        while i < index, let nl = memchr(buffer + i, 0x0A, index - i) {
            let at = buffer.distance(to: nl.assumingMemoryBound(to: UInt8.self))
            line += 1
            lineStart = bufferBase + UInt64(at) + 1
            i = at + 1
        }
        let offset = bufferBase + UInt64(index)
        return XMLError(offset: offset, line: line, column: Int(offset - lineStart) + 1, reason: reason)
    }

    // MARK: Tags

    enum Step { case token(XMLScanner.Token), skipped, needMore }

    @inline(__always) static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }

    @inline(__always) static func isNameByte(_ c: UInt8) -> Bool {
        switch c {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x5F, 0x3A, 0x2D, 0x2E, 0x80...0xFF: true
        default: false
        }
    }

    @inline(__always) static func isNameStart(_ c: UInt8) -> Bool {
        switch c {
        case 0x41...0x5A, 0x61...0x7A, 0x5F, 0x3A, 0x80...0xFF: true
        default: false
        }
    }

    /// The index of the first byte at or after `from` that cannot be in a name.
    @inline(never)
    static func scanName(_ buf: UnsafeMutablePointer<UInt8>, _ from: Int, _ end: Int) -> Int {
        let table = nameBytes
        var p = from
        while p < end && table[Int(buf[p])] != 0 { p += 1 }
        return p
    }

    /// 1 for the bytes `isNameByte` accepts.
    nonisolated(unsafe) static let nameBytes: UnsafeMutablePointer<UInt8> = {  // written once, then only read
        let t = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        for i in 0..<256 { t[i] = isNameByte(UInt8(i)) ? 1 : 0 }
        return t
    }()

    /// The index of the closing `quote` at or after `from` (or `end`), whether the
    /// value holds a byte that needs decoding or checking ('&', '<', a control byte),
    /// and whether it holds a byte ≥ 0x80 (its UTF-8 must then be validated).
    @inline(never)
    static func scanValue(_ buf: UnsafeMutablePointer<UInt8>, _ from: Int, _ end: Int, _ quote: UInt8) -> (Int, Bool, Bool) {
        var p = from
        var special = false
        var high = false
        // 16 bytes at a time; the comparison masks are read as two 64-bit words (one
        // byte per lane), so the quote's lane is a trailing-zero count.
        let quotes = SIMD16<UInt8>(repeating: quote), amps = SIMD16<UInt8>(repeating: 0x26)
        let lts = SIMD16<UInt8>(repeating: 0x3C), controls = SIMD16<UInt8>(repeating: 0x20)
        let highs = SIMD16<UInt8>(repeating: 0x80)
        while p + 16 <= end {
            let v = UnsafeRawPointer(buf + p).loadUnaligned(as: SIMD16<UInt8>.self)
            let q = unsafeBitCast(v .== quotes, to: SIMD2<UInt64>.self)
            let m = unsafeBitCast((v .== amps) .| (v .== lts) .| (v .< controls), to: SIMD2<UInt64>.self)
            let h = unsafeBitCast(v .>= highs, to: SIMD2<UInt64>.self)
            if q[0] | q[1] != 0 {
                let lane = (q[0] != 0 ? q[0].trailingZeroBitCount : 64 + q[1].trailingZeroBitCount) >> 3
                let lowMask: UInt64 = lane >= 8 ? ~0 : (1 << UInt64(lane * 8)) &- 1
                let highMask: UInt64 = lane <= 8 ? 0 : (1 << UInt64((lane - 8) * 8)) &- 1
                return (p + lane, special || (m[0] & lowMask) | (m[1] & highMask) != 0,
                        high || (h[0] & lowMask) | (h[1] & highMask) != 0)
            }
            if m[0] | m[1] != 0 { special = true }
            if h[0] | h[1] != 0 { high = true }
            p += 16
        }
        while p < end {
            let v = buf[p]
            if v == quote { break }
            special = special || v == 0x26 || v < 0x20 || v == 0x3C
            high = high || v >= 0x80
            p += 1
        }
        return (p, special, high)
    }

    /// The index of the first byte of `buf[from..<to]` that is not part of well-formed
    /// UTF-8 (an overlong form, a surrogate, beyond U+10FFFF, a stray or missing
    /// continuation byte, a sequence cut by `to`), or nil when it is all valid.
    static func invalidUTF8(_ buf: UnsafePointer<UInt8>, _ from: Int, _ to: Int) -> Int? {
        var p = from
        while p < to {
            let c = buf[p]
            if c < 0x80 { p += 1; continue }
            var n = 0
            var lo: UInt8 = 0x80, hi: UInt8 = 0xBF
            switch c {
            case 0xC2...0xDF: n = 1
            case 0xE0: n = 2; lo = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: n = 2
            case 0xED: n = 2; hi = 0x9F
            case 0xF0: n = 3; lo = 0x90
            case 0xF1...0xF3: n = 3
            case 0xF4: n = 3; hi = 0x8F
            default: return p
            }
            guard p + n < to, (lo...hi).contains(buf[p + 1]) else { return p }
            var k = 2
            while k <= n {
                guard (0x80...0xBF).contains(buf[p + k]) else { return p }
                k += 1
            }
            p += n + 1
        }
        return nil
    }

    static func find(_ byte: UInt8, _ buf: UnsafeMutablePointer<UInt8>, _ from: Int, _ to: Int) -> Int? {
        var p = from
        while p < to {
            if buf[p] == byte { return p }
            p += 1
        }
        return nil
    }

    /// Parses the tag at `pos` (a '<'); `.needMore` when the buffer ends inside it
    /// (nothing has changed then, so it can be parsed again after reading more).
    mutating func parseTag(_ scanner: XMLScanner) throws(XMLError) -> Step {
        let start = pos
        let buf = buffer, end = self.end
        guard start + 1 < end else { return .needMore }
        let c = buf[start + 1]
        if c == 0x2F { return try parseEndTag(start) }                                         // </
        if c == 0x3F { return try skip(start, until: "?>", what: "processing instruction") }   // <?
        if c == 0x21 { return try parseMarkup(start, scanner) }                                // <!
        guard Self.isNameStart(c) else { throw error(at: start + 1, "expected a name after '<'") }

        var p = Self.scanName(buf, start + 1, end)
        guard p < end else { return .needMore }
        if rootClosed { throw error(at: start, "a second root element") }
        let nameId = names.id(buf + start + 1, p - start - 1)
        if names.hasInvalidName { throw invalidName(start + 1, p) }
        var count = 0
        var seen: UInt64 = 0  // attribute ids < 64 seen in this tag
        var decodedUsed = 0
        var selfClosing = false
        while true {
            let beforeSpace = p
            while p < end && Self.isSpace(buf[p]) { p += 1 }
            guard p < end else { return .needMore }
            let b = buf[p]
            if b == 0x3E { p += 1; break }                               // >
            if b == 0x2F {                                               // />
                guard p + 1 < end else { return .needMore }
                guard buf[p + 1] == 0x3E else { throw error(at: p, "expected '>' after '/'") }
                p += 2
                selfClosing = true
                break
            }
            guard p > beforeSpace else { throw error(at: p, "expected whitespace before an attribute") }
            guard Self.isNameStart(b) else { throw error(at: p, "expected an attribute name") }
            let nameStart = p
            p = Self.scanName(buf, p, end)
            let nameEnd = p
            while p < end && Self.isSpace(buf[p]) { p += 1 }
            guard p < end else { return .needMore }
            guard buf[p] == 0x3D else {
                throw error(at: p, "expected '=' after attribute name '\(String(decoding: UnsafeBufferPointer(start: buf + nameStart, count: nameEnd - nameStart), as: UTF8.self))'")
            }
            p += 1
            while p < end && Self.isSpace(buf[p]) { p += 1 }
            guard p < end else { return .needMore }
            let quote = buf[p]
            guard quote == 0x22 || quote == 0x27 else { throw error(at: p, "expected a quoted attribute value") }
            p += 1
            let valueStart = p
            let (valueEnd, special, high) = Self.scanValue(buf, p, end, quote)
            p = valueEnd
            guard p < end else { return .needMore }
            if special, let lt = Self.find(0x3C, buf, valueStart, p) { throw error(at: lt, "'<' in an attribute value") }
            if high, let bad = Self.invalidUTF8(buf, valueStart, p) {
                throw error(at: bad, "invalid UTF-8 in an attribute value (byte 0x\(String(buf[bad], radix: 16, uppercase: true)))")
            }
            guard count < XMLScanner.attributeLimit else {
                throw error(at: start, "more than \(XMLScanner.attributeLimit) attributes")
            }
            let attrId = Int32(names.id(buf + nameStart, nameEnd - nameStart))
            if names.hasInvalidName { throw invalidName(nameStart, nameEnd) }
            if attrId < 64 {
                let bit: UInt64 = 1 << UInt64(attrId)
                if seen & bit != 0 { throw error(at: nameStart, "attribute '\(names.name(Int(attrId)))' appears twice") }
                seen |= bit
            } else {
                for i in 0..<count where attributeNames[i] == attrId {
                    throw error(at: nameStart, "attribute '\(names.name(Int(attrId)))' appears twice")
                }
            }
            attributeNames[count] = attrId
            if special {
                let (at, n) = try decodeValue(valueStart, p, at: decodedUsed)
                decodedUsed = at + n
                valueStarts[count] = Int32(at)
                valueLengths[count] = Int32(n)
                valueDecoded[count] = 1
            } else {
                valueStarts[count] = Int32(valueStart)
                valueLengths[count] = Int32(p - valueStart)
                valueDecoded[count] = 0
            }
            count += 1
            p += 1  // the closing quote
        }
        if scanner.nameLimitReached { throw error(at: start, "more than 100,000 distinct names") }
        attributeCount = count
        decodedCount = decodedUsed
        if stackCount == 0 { rootSeen = true }
        push(Int32(nameId))
        element = Int32(nameId)
        tagOffset = bufferBase + UInt64(start)
        pendingEnd = selfClosing
        pos = p
        return .token(.startElement)
    }

    /// The error for a name of `buffer[from..<to]` that is not UTF-8 (names are
    /// checked once, when first interned: `NameTable.hasInvalidName`).
    func invalidName(_ from: Int, _ to: Int) -> XMLError {
        let bad = Self.invalidUTF8(buffer, from, to) ?? from
        return error(at: bad, "invalid UTF-8 in a name (byte 0x\(String(buffer[bad], radix: 16, uppercase: true)))")
    }

    mutating func parseEndTag(_ start: Int) throws(XMLError) -> Step {
        var p = start + 2
        while p < end && Self.isNameByte(buffer[p]) { p += 1 }
        let nameEnd = p
        while p < end && Self.isSpace(buffer[p]) { p += 1 }
        guard p < end else { return .needMore }
        guard buffer[p] == 0x3E else { throw error(at: p, "expected '>' to end the end tag") }
        let id = Int32(names.id(buffer + start + 2, nameEnd - start - 2))
        if names.hasInvalidName { throw invalidName(start + 2, nameEnd) }
        guard stackCount > 0 else { throw error(at: start, "end tag </\(names.name(Int(id)))> with no open element") }
        let open = stack[stackCount - 1]
        guard open == id else {
            throw error(at: start, "end tag </\(names.name(Int(id)))> does not match <\(names.name(Int(open)))>")
        }
        stackCount -= 1
        if stackCount == 0 { rootClosed = true }
        element = id
        tagOffset = bufferBase + UInt64(start)
        pos = p + 1
        return .token(.endElement)
    }

    /// `<!--`, `<![CDATA[` or `<!DOCTYPE`.
    mutating func parseMarkup(_ start: Int, _ scanner: XMLScanner) throws(XMLError) -> Step {
        if start + 4 <= end && buffer[start + 2] == 0x2D && buffer[start + 3] == 0x2D {
            let step = try skip(start, until: "-->", what: "comment")
            if case .skipped = step, !rootSeen {
                scanner.noteComment(String(decoding: UnsafeBufferPointer(start: buffer + start + 4, count: pos - start - 7), as: UTF8.self))
            }
            return step
        }
        guard start + 9 <= end else {
            if streamEnded { throw error(at: start, "unknown markup declaration") }
            return .needMore
        }
        if matches(start + 2, "[CDATA[") { return try skip(start, until: "]]>", what: "CDATA section") }
        if matches(start + 2, "DOCTYPE") {
            guard !rootSeen else { throw error(at: start, "a document type declaration inside the document") }
            let step = try skipDoctype(start)
            if case .skipped = step {
                scanner.noteDoctype(String(decoding: UnsafeBufferPointer(start: buffer + start, count: min(pos - start, 1 << 20)),
                                           as: UTF8.self))
            }
            return step
        }
        throw error(at: start, "unknown markup declaration")
    }

    func matches(_ at: Int, _ text: StaticString) -> Bool {
        let n = text.utf8CodeUnitCount
        guard at + n <= end else { return false }
        return memcmp(buffer + at, text.utf8Start, n) == 0
    }

    mutating func skip(_ start: Int, until terminator: StaticString, what: String) throws(XMLError) -> Step {
        let n = terminator.utf8CodeUnitCount
        var p = start + 2
        while p + n <= end {
            guard let hit = memchr(buffer + p, Int32(terminator.utf8Start[0]), end - p - n + 1) else { break }
            let at = buffer.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            if memcmp(buffer + at, terminator.utf8Start, n) == 0 {
                pos = at + n
                return .skipped
            }
            p = at + 1
        }
        if streamEnded { throw error(at: start, "the document ends inside a \(what)") }
        return .needMore
    }

    /// Skips `<!DOCTYPE name [ ... ]>` without reading the declarations inside: the
    /// internal subset ends at the first ']' followed by optional spaces and '>', so
    /// a declaration missing its own '>' (the iOS 16 bug) does not matter.
    mutating func skipDoctype(_ start: Int) throws(XMLError) -> Step {
        var p = start + 9
        var quote: UInt8 = 0
        while p < end {
            let c = buffer[p]
            if quote != 0 {
                if c == quote { quote = 0 }
            } else if c == 0x22 || c == 0x27 {
                quote = c
            } else if c == 0x3E {
                pos = p + 1
                return .skipped
            } else if c == 0x5B {  // '[': the internal subset
                var q = p + 1
                while q < end {
                    if buffer[q] == 0x5D {
                        var r = q + 1
                        while r < end && Self.isSpace(buffer[r]) { r += 1 }
                        if r < end && buffer[r] == 0x3E {
                            pos = r + 1
                            return .skipped
                        }
                    }
                    q += 1
                }
                break
            }
            p += 1
        }
        if streamEnded { throw error(at: start, "the document ends inside the document type declaration") }
        return .needMore
    }

    // MARK: Values

    /// Decodes entities and normalizes whitespace of `buffer[from..<to]` into
    /// `decoded` at `at`; returns where it went.
    mutating func decodeValue(_ from: Int, _ to: Int, at: Int) throws(XMLError) -> (Int, Int) {
        if at + (to - from) > decodedCapacity {
            var newCapacity = decodedCapacity * 2
            while at + (to - from) > newCapacity { newCapacity *= 2 }
            let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
            bigger.update(from: decoded, count: at)
            decoded.deallocate()
            decoded = bigger
            decodedCapacity = newCapacity
        }
        var o = at
        var p = from
        while p < to {
            let c = buffer[p]
            if c == 0x26 {
                let (scalar, next) = try entity(p, to)
                let v = scalar.value
                if v < 0x80 {
                    decoded[o] = UInt8(v); o += 1
                } else if v < 0x800 {
                    decoded[o] = UInt8(0xC0 | v >> 6); decoded[o + 1] = UInt8(0x80 | v & 0x3F); o += 2
                } else if v < 0x10000 {
                    decoded[o] = UInt8(0xE0 | v >> 12); decoded[o + 1] = UInt8(0x80 | (v >> 6) & 0x3F)
                    decoded[o + 2] = UInt8(0x80 | v & 0x3F); o += 3
                } else {
                    decoded[o] = UInt8(0xF0 | v >> 18); decoded[o + 1] = UInt8(0x80 | (v >> 12) & 0x3F)
                    decoded[o + 2] = UInt8(0x80 | (v >> 6) & 0x3F); decoded[o + 3] = UInt8(0x80 | v & 0x3F); o += 4
                }
                p = next
            } else if c < 0x20 {
                guard c == 0x09 || c == 0x0A || c == 0x0D else {
                    throw error(at: p, "control character \(c) in an attribute value")
                }
                // XML normalizes literal tab, newline and CR (CR LF as one) to a space.
                decoded[o] = 0x20
                o += 1
                p += (c == 0x0D && p + 1 < to && buffer[p + 1] == 0x0A) ? 2 : 1
            } else {
                decoded[o] = c
                o += 1
                p += 1
            }
        }
        return (at, o - at)
    }

    /// The entity or character reference at `buffer[at]` ('&'), and where it ends.
    func entity(_ at: Int, _ limit: Int) throws(XMLError) -> (Unicode.Scalar, Int) {
        // The five predefined entities without making a string.
        if at + 3 < limit && buffer[at + 3] == 0x3B && buffer[at + 2] == 0x74 {  // &lt; &gt;
            if buffer[at + 1] == 0x6C { return ("<", at + 4) }
            if buffer[at + 1] == 0x67 { return (">", at + 4) }
        }
        var semi = at + 1
        while semi < limit && buffer[semi] != 0x3B && semi - at < 12 { semi += 1 }
        guard semi < limit && buffer[semi] == 0x3B else { throw error(at: at, "'&' that does not start an entity") }
        let body = String(decoding: UnsafeBufferPointer(start: buffer + at + 1, count: semi - at - 1), as: UTF8.self)
        let scalar: Unicode.Scalar?
        switch body {
        case "lt": scalar = "<"
        case "gt": scalar = ">"
        case "amp": scalar = "&"
        case "apos": scalar = "'"
        case "quot": scalar = "\""
        default:
            if body.hasPrefix("#x") || body.hasPrefix("#X") {
                scalar = UInt32(body.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
            } else if body.hasPrefix("#") {
                scalar = UInt32(body.dropFirst(), radix: 10).flatMap(Unicode.Scalar.init)
            } else {
                throw error(at: at, "unknown entity '&\(body);'")
            }
            if let s = scalar, s.value < 0x20 && s.value != 0x09 && s.value != 0x0A && s.value != 0x0D {
                throw error(at: at, "character reference '&\(body);' to a control character")
            }
        }
        guard let scalar else { throw error(at: at, "invalid character reference '&\(body);'") }
        return (scalar, semi + 1)
    }
}

/// Interned names in unsafe storage (see `XMLScanner`): an open-addressing table of
/// indexes into a byte pool.
struct NameTable {
    private var slots: UnsafeMutablePointer<Int32>
    private var mask: Int
    private var offsets: [Int] = []
    private var lengths: [Int] = []
    private var hashes: [UInt64] = []
    private var pool: UnsafeMutablePointer<UInt8>
    private var poolCapacity = 1 << 16
    private var poolCount = 0
    private(set) var count = 0
    /// Set when a name that is not well-formed UTF-8 was added (the scanner then
    /// refuses the tag that holds it; checked once per new name, not per tag).
    private(set) var hasInvalidName = false

    init() {
        mask = 1023
        slots = .allocate(capacity: 1024)
        slots.initialize(repeating: -1, count: 1024)
        pool = .allocate(capacity: poolCapacity)
    }

    func release() {
        slots.deallocate()
        pool.deallocate()
    }

    func name(_ id: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: pool + offsets[id], count: lengths[id]), as: UTF8.self)
    }

    @inline(__always)
    static func hash(_ p: UnsafePointer<UInt8>, _ n: Int) -> UInt64 {
        var h = UInt64(n) &* 0x9E37_79B9_7F4A_7C15
        if n >= 8 {
            h ^= UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)
            h = (h ^ (h >> 29)) &* 0xBF58_476D_1CE4_E5B9
            h ^= UnsafeRawPointer(p + n - 8).loadUnaligned(as: UInt64.self)
        } else {
            for i in 0..<n { h = (h ^ UInt64(p[i])) &* 0x100_0000_01B3 }
        }
        h = (h ^ (h >> 32)) &* 0x94D0_49BB_1331_11EB
        return h ^ (h >> 29)
    }

    /// The id of the `n` bytes at `p`, adding the name when new.
    @inline(__always)
    mutating func id(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int {
        id(p, n, hash: Self.hash(p, n))
    }

    /// The id of the `n` bytes at `p` whose hash the caller computed (any good
    /// 64-bit hash, used consistently for the table).
    @inline(__always)
    mutating func id(_ p: UnsafePointer<UInt8>, _ n: Int, hash h: UInt64) -> Int {
        var i = Int(truncatingIfNeeded: h) & mask
        while true {
            let k = Int(slots[i])
            if k < 0 { break }
            if hashes[k] == h && lengths[k] == n && Self.equal(pool + offsets[k], p, n) { return k }
            i = (i + 1) & mask
        }
        return add(p, n, h, slot: i)
    }

    @inline(__always)
    static func equal(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        if n >= 8 && n <= 16 {
            let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b)
            return ra.loadUnaligned(as: UInt64.self) == rb.loadUnaligned(as: UInt64.self)
                && (ra + n - 8).loadUnaligned(as: UInt64.self) == (rb + n - 8).loadUnaligned(as: UInt64.self)
        }
        return memcmp(a, b, n) == 0
    }

    private mutating func add(_ p: UnsafePointer<UInt8>, _ n: Int, _ h: UInt64, slot: Int) -> Int {
        if poolCount + n > poolCapacity {
            var newCapacity = poolCapacity * 2
            while poolCount + n > newCapacity { newCapacity *= 2 }
            let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
            bigger.update(from: pool, count: poolCount)
            pool.deallocate()
            pool = bigger
            poolCapacity = newCapacity
        }
        (pool + poolCount).update(from: p, count: n)
        if ScannerState.invalidUTF8(p, 0, n) != nil { hasInvalidName = true }
        let k = count
        offsets.append(poolCount)
        lengths.append(n)
        hashes.append(h)
        poolCount += n
        slots[slot] = Int32(k)
        count += 1
        if count * 2 > mask + 1 { rehash() }
        return k
    }

    private mutating func rehash() {
        let size = (mask + 1) * 2
        slots.deallocate()
        slots = .allocate(capacity: size)
        slots.initialize(repeating: -1, count: size)
        mask = size - 1
        for k in 0..<count {
            var i = Int(truncatingIfNeeded: hashes[k]) & mask
            while slots[i] >= 0 { i = (i + 1) & mask }
            slots[i] = Int32(k)
        }
    }
}

extension String {
    /// The text of UTF-8 bytes lent as a span (ill-formed bytes, which the scanner
    /// refuses before lending a value, would become U+FFFD).
    init(utf8 bytes: Span<UInt8>) {
        self = bytes.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
    }
}
