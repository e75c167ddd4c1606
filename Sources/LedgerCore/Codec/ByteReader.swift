import Foundation
import LedgerLog
import HealthModel

/// Why an event's bytes could not be decoded.
public enum EventDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A kind this version does not know (written by a later release).
    case unknownKind(kind: UInt16, version: UInt16)
    /// A version of a known kind this version does not know.
    case unknownVersion(kind: UInt16, version: UInt16)
    /// The payload ended before the field it needs (byte offset in the payload).
    case truncated(offset: Int)
    /// A field holds a value the encoding does not allow. `rule` is the FORMAT.md
    /// rule it breaks: K3 (the field encodings) unless a narrower one says why (D1
    /// a date's range, D2 a UTC offset, V1 a type code of another kind, V2 a
    /// correlation member, V3 a unit's syntax, E6 an event only the owner writes).
    case malformed(offset: Int, reason: String, rule: String = "K3")
    /// Bytes left over after the event.
    case trailingBytes(offset: Int)
    /// A sealed record (issue 32) whose payload this reader could not open: `reason`
    /// says why (no key-encryption key given, the key destroyed, unknown, or the tag
    /// broken).
    case sealedRecordUnopened(RecordSealFailure)

    /// The FORMAT.md rule the bytes break (K1 an unknown kind or version, K2 a
    /// payload that is not exactly one event, K3 and the narrower rules `malformed` names).
    public var ruleID: String {
        switch self {
        case .unknownKind, .unknownVersion: "K1"
        case .truncated, .trailingBytes: "K2"
        case .malformed(_, _, let rule): rule
        case .sealedRecordUnopened: "R8"
        }
    }

    /// One line naming the problem, ending with its rule ID (`… [K2]`).
    public var description: String {
        let text = switch self {
        case .unknownKind(let k, let v): "unknownKind: event kind \(k) (version \(v)) is not known to this version"
        case .unknownVersion(let k, let v): "unknownVersion: event kind \(k) has no version \(v) in this version"
        case .truncated(let o): "truncated: payload ends at byte \(o)"
        case .malformed(let o, let r, _): "malformed: byte \(o): \(r)"
        case .trailingBytes(let o): "trailingBytes: unexpected bytes from byte \(o)"
        case .sealedRecordUnopened(let failure): "sealedRecordUnopened: \(failure)"
        }
        return "\(text) [\(ruleID)]"
    }
}

/// Reads the primitives `ByteWriter` writes, with bounds checks: malformed bytes
/// give `EventDecodingError`, never a trap.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    private(set) var position = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { position == bytes.count }
    var remaining: Int { bytes.count - position }

    @inline(__always)
    private mutating func need(_ n: Int) throws(EventDecodingError) {
        guard n <= bytes.count - position else { throw .truncated(offset: base + bytes.count) }
    }

    mutating func u8() throws(EventDecodingError) -> UInt8 {
        try need(1)
        defer { position += 1 }
        return bytes[position]
    }

    mutating func u16() throws(EventDecodingError) -> UInt16 {
        try need(2)
        defer { position += 2 }
        return UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt16.self))
    }

    mutating func varint() throws(EventDecodingError) -> UInt64 {
        // One byte (most counts, lengths and small numbers): what the loop reads then.
        if position < bytes.count, bytes[position] < 0x80 {
            defer { position += 1 }
            return UInt64(bytes[position])
        }
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let start = position
            let b = try u8()
            if shift == 63 && b > 1 { throw .malformed(offset: start, reason: "varint overflows 64 bits") }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw .malformed(offset: start, reason: "varint longer than 10 bytes") }
        }
    }

    /// A varint that must fit `limit` (counts, lengths, ordinals).
    mutating func count(limit: Int = 1 << 28) throws(EventDecodingError) -> Int {
        let start = position
        let v = try varint()
        guard v <= UInt64(limit) else { throw .malformed(offset: start, reason: "count \(v) above \(limit)") }
        return Int(v)
    }

    mutating func zigzag() throws(EventDecodingError) -> Int64 {
        let v = try varint()
        return Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)
    }

    mutating func f64() throws(EventDecodingError) -> Double {
        try need(8)
        defer { position += 8 }
        return Double(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self)))
    }

    /// A finite double (NaN and infinities are malformed in every field that uses this).
    mutating func finite() throws(EventDecodingError) -> Double {
        let start = position
        let v = try f64()
        guard v.isFinite else { throw .malformed(offset: start, reason: "number is not finite") }
        return v
    }

    /// A date in `ISO8601.validRange` (years 0001…9999); anything else is malformed.
    mutating func date() throws(EventDecodingError) -> Date {
        let start = absolutePosition
        let date = Date(timeIntervalSinceReferenceDate: try finite())
        guard ISO8601.isInRange(date) else {
            throw .malformed(offset: start, reason: "date outside \(ISO8601.validRangeText)", rule: "D1")
        }
        return date
    }

    /// An optional date (presence byte 0 or 1, then a date as `date()` reads it).
    mutating func optionalDate() throws(EventDecodingError) -> Date? {
        switch try u8() {
        case 0: return nil
        case 1: return try date()
        default: throw malformed("bad presence byte")
        }
    }

    mutating func string() throws(EventDecodingError) -> String {
        let (raw, at) = try stringBytes()
        guard let s = Self.utf8String(raw) else { throw .malformed(offset: at, reason: "string is not UTF-8") }
        return s
    }

    /// A string field's bytes, not yet checked to be UTF-8, and where they start (in
    /// this reader: the offset `string()` names when they are not UTF-8).
    mutating func stringBytes() throws(EventDecodingError) -> (bytes: UnsafeRawBufferPointer, at: Int) {
        let length = try count(limit: bytes.count)
        try need(length)
        defer { position += length }
        return (UnsafeRawBufferPointer(rebasing: bytes[position..<position + length]), position)
    }

    /// `bytes` as a string when they are valid UTF-8, else nil: exactly what
    /// `String(validating: bytes, as: UTF8.self)` returns, without its generic path
    /// (a metadata lookup per call: an eighth of a full decode went there).
    /// `String(decoding:as:)` (specialized here) replaces each invalid sequence with
    /// U+FFFD, so its result is the input byte for byte exactly when the input is
    /// valid; ASCII needs no comparison.
    static func utf8String(_ bytes: UnsafeRawBufferPointer) -> String? {
        let utf8 = bytes.assumingMemoryBound(to: UInt8.self)
        var s = String(decoding: utf8, as: UTF8.self)
        if isASCII(bytes) { return s }
        let same = s.withUTF8 { decoded in
            decoded.count == utf8.count && (decoded.count == 0 || memcmp(decoded.baseAddress!, utf8.baseAddress!, decoded.count) == 0)
        }
        return same ? s : nil
    }

    /// Whether every byte is below 0x80 (eight at a time).
    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        var high: UInt64 = 0
        while i + 8 <= bytes.count {
            high |= bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < bytes.count {
            high |= UInt64(bytes[i])
            i += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// Reads a string and tells whether it is `expected` (without making a String).
    mutating func stringEquals(_ expected: String) throws(EventDecodingError) -> Bool {
        let length = try count(limit: bytes.count)
        try need(length)
        defer { position += length }
        var utf8 = expected.utf8.makeIterator()
        for i in position..<position + length {
            guard let b = utf8.next(), b == bytes[i] else { return false }
        }
        return utf8.next() == nil
    }

    mutating func skipString() throws(EventDecodingError) {
        let length = try count(limit: bytes.count)
        try need(length)
        position += length
    }

    mutating func uuid() throws(EventDecodingError) -> UUID {
        try need(16)
        defer { position += 16 }
        return UUID(uuid: bytes.loadUnaligned(fromByteOffset: position, as: uuid_t.self))
    }

    /// A length-prefixed sub-reader; the parent moves past it.
    mutating func lengthPrefixed() throws(EventDecodingError) -> ByteReader {
        let length = try count(limit: bytes.count)
        try need(length)
        defer { position += length }
        var sub = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[position..<position + length]))
        sub.base = base + position
        return sub
    }

    /// Offset of this reader's first byte in the whole payload (for error positions).
    var base = 0
    var absolutePosition: Int { base + position }

    func malformed(_ reason: String, rule: String = "K3") -> EventDecodingError {
        .malformed(offset: absolutePosition, reason: reason, rule: rule)
    }

    func finish() throws(EventDecodingError) {
        guard isAtEnd else { throw .trailingBytes(offset: absolutePosition) }
    }
}
