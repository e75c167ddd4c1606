/// A small JSON reader for `ingest` (one object per line). Byte-level, no
/// Foundation: JSONDecoder is slow on Linux and we only need values.
enum JSONValue: Equatable {
    case object([(String, JSONValue)])
    case array([JSONValue])
    case string(String)
    case number(Double, text: String)
    case bool(Bool)
    case null

    static func == (a: JSONValue, b: JSONValue) -> Bool {
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

    /// The member `key` of an object (the first, if repeated).
    subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    struct ParseError: Error {
        let column: Int
        let reason: String
    }

    /// Parses one JSON text; the error gives a 1-based column.
    static func parse(_ bytes: ArraySlice<UInt8>) throws(ParseError) -> JSONValue {
        var p = Parser(bytes: bytes)
        p.skipSpace()
        let value = try p.value(depth: 0)
        p.skipSpace()
        guard p.i == p.bytes.endIndex else { throw p.fail("unexpected text after the value") }
        return value
    }

    private struct Parser {
        let bytes: ArraySlice<UInt8>
        var i: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            i = bytes.startIndex
        }

        func fail(_ reason: String) -> ParseError { ParseError(column: i - bytes.startIndex + 1, reason: reason) }

        mutating func skipSpace() {
            while i < bytes.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
        }

        mutating func expect(_ literal: String) throws(ParseError) {
            for b in literal.utf8 {
                guard i < bytes.endIndex, bytes[i] == b else { throw fail("expected \(literal)") }
                i += 1
            }
        }

        mutating func value(depth: Int) throws(ParseError) -> JSONValue {
            guard depth < 64 else { throw fail("nested too deep") }
            guard i < bytes.endIndex else { throw fail("unexpected end of line") }
            switch bytes[i] {
            case 0x7B: return try object(depth: depth)
            case 0x5B:
                i += 1
                var items: [JSONValue] = []
                skipSpace()
                if i < bytes.endIndex, bytes[i] == 0x5D { i += 1; return .array([]) }
                while true {
                    skipSpace()
                    items.append(try value(depth: depth + 1))
                    skipSpace()
                    guard i < bytes.endIndex else { throw fail("unterminated array") }
                    if bytes[i] == 0x2C { i += 1; continue }
                    if bytes[i] == 0x5D { i += 1; return .array(items) }
                    throw fail("expected , or ]")
                }
            case 0x22: return .string(try string())
            case 0x74: try expect("true"); return .bool(true)
            case 0x66: try expect("false"); return .bool(false)
            case 0x6E: try expect("null"); return .null
            default: return try number()
            }
        }

        mutating func object(depth: Int) throws(ParseError) -> JSONValue {
            i += 1
            var members: [(String, JSONValue)] = []
            skipSpace()
            if i < bytes.endIndex, bytes[i] == 0x7D { i += 1; return .object([]) }
            while true {
                skipSpace()
                guard i < bytes.endIndex, bytes[i] == 0x22 else { throw fail("expected a member name") }
                let key = try string()
                skipSpace()
                try expect(":")
                skipSpace()
                members.append((key, try value(depth: depth + 1)))
                skipSpace()
                guard i < bytes.endIndex else { throw fail("unterminated object") }
                if bytes[i] == 0x2C { i += 1; continue }
                if bytes[i] == 0x7D { i += 1; return .object(members) }
                throw fail("expected , or }")
            }
        }

        mutating func string() throws(ParseError) -> String {
            i += 1
            var out: [UInt8] = []
            while true {
                guard i < bytes.endIndex else { throw fail("unterminated string") }
                let b = bytes[i]
                i += 1
                if b == 0x22 { break }
                if b < 0x20 { throw fail("control character in a string") }
                if b != 0x5C { out.append(b); continue }
                guard i < bytes.endIndex else { throw fail("unterminated escape") }
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
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        try expect("\\u")
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("bad surrogate pair") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fail("bad \\u escape") }
                    out.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: throw fail("bad escape")
                }
            }
            guard let s = String(validating: out, as: UTF8.self) else { throw fail("string is not UTF-8") }
            return s
        }

        mutating func hex4() throws(ParseError) -> UInt32 {
            var v: UInt32 = 0
            for _ in 0..<4 {
                guard i < bytes.endIndex else { throw fail("short \\u escape") }
                let c = bytes[i]
                i += 1
                switch c {
                case 0x30...0x39: v = v << 4 | UInt32(c - 0x30)
                case 0x61...0x66: v = v << 4 | UInt32(c - 0x61 + 10)
                case 0x41...0x46: v = v << 4 | UInt32(c - 0x41 + 10)
                default: throw fail("bad \\u escape")
                }
            }
            return v
        }

        mutating func number() throws(ParseError) -> JSONValue {
            let start = i
            if i < bytes.endIndex, bytes[i] == 0x2D { i += 1 }
            while i < bytes.endIndex, (0x30...0x39).contains(bytes[i]) || [0x2E, 0x65, 0x45, 0x2B, 0x2D].contains(bytes[i]) { i += 1 }
            let text = String(decoding: bytes[start..<i], as: UTF8.self)
            guard !text.isEmpty, let v = Double(text), v.isFinite else { throw ParseError(column: start - bytes.startIndex + 1, reason: "expected a value") }
            return .number(v, text: text)
        }
    }
}
