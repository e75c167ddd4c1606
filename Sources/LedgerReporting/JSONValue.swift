/// A strict JSON reader (RFC 8259) for `ingest` (one object per line) and the server's
/// request bodies. Byte-level, no
/// Foundation: JSONDecoder is slow on Linux and we only need values.
///
/// Strict means: the grammar exactly (no leading zeros, no `+`, no bare `.5`, no
/// trailing text, no comments), strings of valid UTF-8 without raw control
/// characters and without lone surrogates in `\u` escapes, numbers that fit a
/// Double (`1e309` is out of range, not infinity), no member name twice in an object
/// (RFC 8259 leaves duplicates to the reader; here they are refused, never "first
/// wins"), and nesting bounded by `maxDepth` so that no input can exhaust the stack.
package enum JSONValue: Equatable, Sendable {
    case object([(String, JSONValue)])
    case array([JSONValue])
    case string(String)
    /// A number: its value and its text exactly as written (so `72` and `72.0` differ).
    case number(Double, text: String)
    case bool(Bool)
    case null

    /// The deepest nesting of arrays and objects accepted.
    package static let maxDepth = 64

    package static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.object(let x), .object(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.array(let x), .array(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.number(let x, _), .number(let y, _)): x == y
        case (.bool(let x), .bool(let y)): x == y
        case (.null, .null): true
        default: false
        }
    }

    /// The member `key` of an object (member names are unique: `parse` refuses repeats).
    package subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    /// What kind of value this is, for messages ("a string", "a boolean", …).
    package var kindName: String {
        switch self {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        }
    }

    /// Why a text is not JSON: the 1-based byte column, the member being read (as a
    /// path such as `"metadata"."k"`, empty at the top level) and one fixed reason
    /// per kind of error.
    package struct ParseError: Error, Equatable, CustomStringConvertible {
        package let column: Int
        package let path: String
        package let reason: String

        package var description: String { "column \(column)\(path.isEmpty ? "" : " (in \(path))"): \(reason)" }
    }

    /// Parses one JSON text; the error gives a 1-based column.
    package static func parse(_ bytes: ArraySlice<UInt8>) throws(ParseError) -> JSONValue {
        var p = Parser(bytes: bytes)
        p.skipSpace()
        let value = try p.value(depth: 0)
        p.skipSpace()
        guard p.i == p.bytes.endIndex else { throw p.fail("unexpected text after the value") }
        return value
    }

    /// Parses one JSON text given as a string.
    package static func parse(_ text: String) throws(ParseError) -> JSONValue { try parse(ArraySlice(text.utf8)) }

    private struct Parser {
        let bytes: ArraySlice<UInt8>
        var i: Int
        var path: [String] = []

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            i = bytes.startIndex
        }

        func fail(_ reason: String, at position: Int? = nil) -> ParseError {
            ParseError(column: (position ?? i) - bytes.startIndex + 1,
                       path: path.map { "\"" + $0 + "\"" }.joined(separator: "."), reason: reason)
        }

        var atEnd: Bool { i >= bytes.endIndex }

        mutating func skipSpace() {
            while i < bytes.endIndex {
                switch bytes[i] {
                case 0x20, 0x09, 0x0A, 0x0D: i += 1
                default: return
                }
            }
        }

        mutating func literal(_ word: String, _ value: JSONValue) throws(ParseError) -> JSONValue {
            let start = i
            for b in word.utf8 {
                guard i < bytes.endIndex else { throw fail("unexpected end of line") }
                guard bytes[i] == b else { throw fail("invalid literal (true, false or null)", at: start) }
                i += 1
            }
            return value
        }

        mutating func value(depth: Int) throws(ParseError) -> JSONValue {
            guard !atEnd else { throw fail("unexpected end of line") }
            switch bytes[i] {
            case 0x7B, 0x5B:
                guard depth < JSONValue.maxDepth else { throw fail("nested deeper than \(JSONValue.maxDepth) levels") }
                return bytes[i] == 0x7B ? try object(depth: depth + 1) : try array(depth: depth + 1)
            case 0x22: return .string(try string())
            case 0x74: return try literal("true", .bool(true))
            case 0x66: return try literal("false", .bool(false))
            case 0x6E: return try literal("null", .null)
            case 0x2D, 0x30...0x39: return try number()
            case 0x2B: throw fail("a number may not start with '+'")
            case 0x2E: throw fail("a number must start with a digit")
            default: throw fail("expected a value")
            }
        }

        mutating func array(depth: Int) throws(ParseError) -> JSONValue {
            i += 1
            var items: [JSONValue] = []
            skipSpace()
            if !atEnd, bytes[i] == 0x5D { i += 1; return .array([]) }
            while true {
                skipSpace()
                items.append(try value(depth: depth))
                skipSpace()
                guard !atEnd else { throw fail("unexpected end of line") }
                if bytes[i] == 0x2C { i += 1; continue }
                if bytes[i] == 0x5D { i += 1; return .array(items) }
                throw fail("expected , or ]")
            }
        }

        mutating func object(depth: Int) throws(ParseError) -> JSONValue {
            i += 1
            var members: [(String, JSONValue)] = []
            // Duplicate names: compared with each earlier one in a small object (a sample's
            // line has a handful), hashed past `linearNames` members.
            var names = Set<String>()
            let linearNames = 16
            skipSpace()
            if !atEnd, bytes[i] == 0x7D { i += 1; return .object([]) }
            while true {
                skipSpace()
                guard !atEnd else { throw fail("unexpected end of line") }
                guard bytes[i] == 0x22 else { throw fail("expected a member name in double quotes") }
                let nameAt = i
                let key = try string()
                let duplicate: Bool
                if members.count < linearNames {
                    duplicate = members.contains { $0.0 == key }
                } else {
                    if names.isEmpty { names = Set(members.map(\.0)) }
                    duplicate = !names.insert(key).inserted
                }
                guard !duplicate else { throw fail("duplicate member \"\(key)\"", at: nameAt) }
                skipSpace()
                guard !atEnd else { throw fail("unexpected end of line") }
                guard bytes[i] == 0x3A else { throw fail("expected : after a member name") }
                i += 1
                skipSpace()
                path.append(key)
                let member = try value(depth: depth)
                path.removeLast()
                members.append((key, member))
                skipSpace()
                guard !atEnd else { throw fail("unexpected end of line") }
                if bytes[i] == 0x2C { i += 1; continue }
                if bytes[i] == 0x7D { i += 1; return .object(members) }
                throw fail("expected , or }")
            }
        }

        mutating func string() throws(ParseError) -> String {
            let opening = i
            i += 1
            // A string without escapes or control characters (most): its bytes as they are.
            var end = i
            var high: UInt8 = 0
            while end < bytes.endIndex, bytes[end] != 0x22, bytes[end] != 0x5C, bytes[end] >= 0x20 {
                high |= bytes[end]
                end += 1
            }
            if end < bytes.endIndex, bytes[end] == 0x22 {
                // ASCII is valid UTF-8 as it is: decoding it repairs nothing.
                let s = high < 0x80 ? String(decoding: bytes[i..<end], as: UTF8.self)
                                    : String(validating: bytes[i..<end], as: UTF8.self)
                guard let s else { throw fail("invalid UTF-8 in a string", at: opening) }
                i = end + 1
                return s
            }
            var out: [UInt8] = []
            while true {
                guard !atEnd else { throw fail("unterminated string") }
                let b = bytes[i]
                if b == 0x22 { i += 1; break }
                if b < 0x20 { throw fail("control character in a string (escape it)") }
                if b != 0x5C { out.append(b); i += 1; continue }
                let escape = i
                i += 1
                guard !atEnd else { throw fail("unterminated string") }
                let e = bytes[i]
                i += 1
                switch e {
                case 0x22: out.append(0x22)
                case 0x5C: out.append(0x5C)
                case 0x2F: out.append(0x2F)
                case 0x62: out.append(0x08)
                case 0x66: out.append(0x0C)
                case 0x6E: out.append(0x0A)
                case 0x72: out.append(0x0D)
                case 0x74: out.append(0x09)
                case 0x75:
                    var code = try hex4(escape)
                    if (0xDC00..<0xE000).contains(code) { throw fail("lone surrogate in a \\u escape", at: escape) }
                    if (0xD800..<0xDC00).contains(code) {
                        let low = i
                        guard i + 1 < bytes.endIndex, bytes[i] == 0x5C, bytes[i + 1] == 0x75 else {
                            throw fail("lone surrogate in a \\u escape", at: escape)
                        }
                        i += 2
                        let second = try hex4(low)
                        guard (0xDC00..<0xE000).contains(second) else { throw fail("lone surrogate in a \\u escape", at: escape) }
                        code = 0x10000 + ((code - 0xD800) << 10) + (second - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fail("lone surrogate in a \\u escape", at: escape) }
                    out.append(contentsOf: String(Character(scalar)).utf8)
                default: throw fail("invalid escape (\\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX)", at: escape)
                }
            }
            guard let s = String(validating: out, as: UTF8.self) else { throw fail("invalid UTF-8 in a string", at: opening) }
            return s
        }

        mutating func hex4(_ escape: Int) throws(ParseError) -> UInt32 {
            var v: UInt32 = 0
            for _ in 0..<4 {
                guard !atEnd else { throw fail("unterminated string") }
                let c = bytes[i]
                switch c {
                case 0x30...0x39: v = v << 4 | UInt32(c - 0x30)
                case 0x61...0x66: v = v << 4 | UInt32(c - 0x61 + 10)
                case 0x41...0x46: v = v << 4 | UInt32(c - 0x41 + 10)
                default: throw fail("invalid \\u escape (four hex digits)", at: escape)
                }
                i += 1
            }
            return v
        }

        func isDigit(_ at: Int) -> Bool { at < bytes.endIndex && (0x30...0x39).contains(bytes[at]) }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, finite as a Double.
        mutating func number() throws(ParseError) -> JSONValue {
            let start = i
            if bytes[i] == 0x2D { i += 1 }
            guard isDigit(i) else { throw atEnd ? fail("unexpected end of line") : fail("expected a digit") }
            if bytes[i] == 0x30 {
                i += 1
                if isDigit(i) { throw fail("leading zero in a number", at: start) }
            } else {
                while isDigit(i) { i += 1 }
            }
            if i < bytes.endIndex, bytes[i] == 0x2E {
                i += 1
                guard isDigit(i) else { throw atEnd ? fail("unexpected end of line") : fail("expected a digit after '.'") }
                while isDigit(i) { i += 1 }
            }
            if i < bytes.endIndex, bytes[i] == 0x65 || bytes[i] == 0x45 {
                i += 1
                if i < bytes.endIndex, bytes[i] == 0x2B || bytes[i] == 0x2D { i += 1 }
                guard isDigit(i) else { throw atEnd ? fail("unexpected end of line") : fail("expected a digit in the exponent") }
                while isDigit(i) { i += 1 }
            }
            let text = String(decoding: bytes[start..<i], as: UTF8.self)
            guard let v = Double(text), v.isFinite else { throw fail("number out of range (beyond ±1.8e308)", at: start) }
            return .number(v, text: text)
        }
    }
}
