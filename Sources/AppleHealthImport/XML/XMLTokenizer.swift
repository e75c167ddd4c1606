import Glibc
import Foundation  // Thread (the reading-ahead thread)

/// The scanner's state (see `XMLScanner.s`). Invariants: `0 ≤ pos ≤ end ≤ capacity`;
/// attribute value ranges lie inside `buffer[0..<end]` or `decoded[0..<decodedCount]`.
struct ScannerState {
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
