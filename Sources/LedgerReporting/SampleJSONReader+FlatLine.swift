import Foundation
import HealthModel

/// `ingest`'s common line read straight from its bytes: an object of `type`,
/// `value`, `unit`, `start`, `end` and `uuid` whose values are plain strings (ASCII,
/// no escape) or numbers, and optionally `metadata`, an object of at most
/// `FlatFields.maxMetadata` members whose names are plain strings and whose values
/// are plain strings, numbers, `true` or `false` — what `jq -c`, `json.dumps` and
/// our own `query --json` write — without building a `JSONValue` tree, a `String`
/// per key, or a member list.
///
/// It answers only when the answer is certain: any other line (a device, an
/// escape, non-ASCII text, a literal outside metadata, a duplicate or unknown
/// field or metadata name, the sync identity's keys — whose checks are the tree
/// reader's —, a field of another JSON type, a value the rules refuse) is nil, and the caller reads it
/// through `JSONValue.parse` and `sample(_:zone:)`, which give the same sample or
/// the one error they always gave. So the fast path changes no answer:
/// `FlatSampleLineTests` holds it to the tree reader's sample on every line it reads.
extension SampleJSONReader {
    /// The sample of `line`, or nil when the line is not in the flat form or is refused.
    package static func flatSample(_ line: ArraySlice<UInt8>, zone: TimeZone? = nil) -> Sample? {
        var fields = FlatFields()
        guard fields.scan(line) else { return nil }
        return fields.sample(in: line, zone: zone)
    }
}

/// The six fields' places in the line: a string's bytes (without quotes) or a number's.
private struct FlatFields {
    /// The fields, by index: type, value, unit, start, end, uuid (`field(_:)`);
    /// metadata (index 6) is kept in the `metadata…` members below.
    // Inline storage: a line allocates nothing here.
    var ranges = InlineArray<6, Range<Int>?>(repeating: nil)
    var isNumber = InlineArray<6, Bool>(repeating: false)

    /// The most metadata members a flat line has (more: the tree reader).
    static let maxMetadata = 4
    /// What a metadata member's value is.
    enum MetadataKind: UInt8 { case string, number, yes, no }
    /// Metadata members read, in order: `metadataNames[k]` and `metadataValues[k]`
    /// (offsets from the line's start, a string's without quotes) and
    /// `metadataKinds[k]`, for k below `metadataCount`. Invariant: no two names equal.
    var metadataCount = 0
    var metadataNames = InlineArray<4, Range<Int>>(repeating: 0..<0)
    var metadataValues = InlineArray<4, Range<Int>>(repeating: 0..<0)
    var metadataKinds = InlineArray<4, MetadataKind>(repeating: .string)

    /// Which of the seven fields `name` is, or nil. A name of at most eight bytes,
    /// packed little-endian into an integer, compared with the seven names packed the
    /// same way (the scan lets only a–z through, so no zero byte: packing is one to
    /// one): no array, no byte-by-byte comparison per member.
    @inline(__always)
    static func field(_ name: ArraySlice<UInt8>) -> Int? {
        guard name.count <= 8 else { return nil }
        var packed: UInt64 = 0
        for byte in name.reversed() { packed = packed << 8 | UInt64(byte) }
        switch packed {
        case 0x6570_7974: return 0  // "type"
        case 0x65_756C_6176: return 1  // "value"
        case 0x7469_6E75: return 2  // "unit"
        case 0x74_7261_7473: return 3  // "start"
        case 0x64_6E65: return 4  // "end"
        case 0x6469_7575: return 5  // "uuid"
        case 0x6174_6164_6174_656D: return 6  // "metadata"
        default: return nil
        }
    }

    /// JSON's whitespace.
    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }

    /// Reads `{ "name" : value , … }` with JSON's whitespace; false for anything else.
    /// Ranges are offsets from the line's start.
    mutating func scan(_ b: ArraySlice<UInt8>) -> Bool {
        var i = b.startIndex
        let n = b.endIndex
        while i < n, Self.isSpace(b[i]) { i += 1 }
        guard i < n, b[i] == 0x7B else { return false }  // {
        i += 1
        while i < n, Self.isSpace(b[i]) { i += 1 }
        var seen = 0
        while true {
            // The name: one of the six, as plain bytes.
            guard i < n, b[i] == 0x22 else { return false }
            i += 1
            let nameStart = i
            while i < n, b[i] != 0x22 {
                guard b[i] >= 0x61 && b[i] <= 0x7A else { return false }  // a–z only: every field name
                i += 1
            }
            guard i < n else { return false }
            let name = b[nameStart..<i]
            guard let field = Self.field(name), seen & (1 << field) == 0 else { return false }
            seen |= 1 << field
            i += 1
            while i < n, Self.isSpace(b[i]) { i += 1 }
            guard i < n, b[i] == 0x3A else { return false }  // :
            i += 1
            while i < n, Self.isSpace(b[i]) { i += 1 }
            guard i < n else { return false }
            if field == 6 {
                guard scanMetadata(b, &i) else { return false }
            } else if b[i] == 0x22 {
                guard let string = Self.plainString(b, &i) else { return false }
                ranges[field] = string
            } else {
                let start = i
                guard Self.number(b, &i) else { return false }
                ranges[field] = start - b.startIndex..<i - b.startIndex
                isNumber[field] = true
            }
            while i < n, Self.isSpace(b[i]) { i += 1 }
            guard i < n else { return false }
            if b[i] == 0x2C {  // ,
                i += 1
                while i < n, Self.isSpace(b[i]) { i += 1 }
                continue
            }
            guard b[i] == 0x7D else { return false }  // }
            i += 1
            while i < n, Self.isSpace(b[i]) { i += 1 }
            return i == n
        }
    }

    /// A string of printable ASCII without an escape, `i` at its opening quote: its
    /// bytes' offsets from the line's start (without the quotes), `i` past its closing
    /// quote; nil for any other string.
    @inline(__always)
    static func plainString(_ b: ArraySlice<UInt8>, _ i: inout Int) -> Range<Int>? {
        let n = b.endIndex
        i += 1
        let start = i
        while i < n, b[i] != 0x22 {
            guard b[i] >= 0x20 && b[i] < 0x7F && b[i] != 0x5C else { return nil }  // no escape, no control, ASCII
            i += 1
        }
        guard i < n else { return nil }
        i += 1
        return start - b.startIndex..<i - 1 - b.startIndex
    }

    /// The sync identity's keys, whose checks (both or neither, a string and a whole
    /// number) are left to the tree reader.
    static let syncKeys = [Array(Metadata.WellKnownKey.syncIdentifier.utf8), Array(Metadata.WellKnownKey.syncVersion.utf8)]

    /// Reads the metadata object at `i`: `{}` or `{ "name" : value , … }`, at most
    /// `maxMetadata` members, each name a plain string no other member has and not a
    /// sync key, each value a plain string, a number, `true` or `false`. False for
    /// anything else (the tree reader then reads the line).
    mutating func scanMetadata(_ b: ArraySlice<UInt8>, _ i: inout Int) -> Bool {
        let n = b.endIndex
        func offsets(_ r: Range<Int>) -> Range<Int> { b.startIndex + r.lowerBound..<b.startIndex + r.upperBound }
        guard b[i] == 0x7B else { return false }  // {
        i += 1
        while i < n, Self.isSpace(b[i]) { i += 1 }
        if i < n, b[i] == 0x7D {  // }: no member
            i += 1
            return true
        }
        while true {
            guard metadataCount < Self.maxMetadata, i < n, b[i] == 0x22, let name = Self.plainString(b, &i) else { return false }
            let nameBytes = b[offsets(name)]
            if nameBytes.first == UInt8(ascii: "H"), Self.syncKeys.contains(where: { $0.elementsEqual(nameBytes) }) { return false }
            for k in 0..<metadataCount where b[offsets(metadataNames[k])].elementsEqual(nameBytes) { return false }
            while i < n, Self.isSpace(b[i]) { i += 1 }
            guard i < n, b[i] == 0x3A else { return false }  // :
            i += 1
            while i < n, Self.isSpace(b[i]) { i += 1 }
            guard i < n else { return false }
            let kind: MetadataKind
            let value: Range<Int>
            if b[i] == 0x22 {
                guard let string = Self.plainString(b, &i) else { return false }
                (kind, value) = (.string, string)
            } else if b[i] == UInt8(ascii: "t") || b[i] == UInt8(ascii: "f") {
                let yes = b[i] == UInt8(ascii: "t")
                let literal = yes ? Self.trueBytes : Self.falseBytes
                guard n - i >= literal.count, b[i..<i + literal.count].elementsEqual(literal) else { return false }
                (kind, value) = (yes ? .yes : .no, i - b.startIndex..<i + literal.count - b.startIndex)
                i += literal.count
            } else {
                let start = i
                guard Self.number(b, &i) else { return false }
                (kind, value) = (.number, start - b.startIndex..<i - b.startIndex)
            }
            metadataNames[metadataCount] = name
            metadataValues[metadataCount] = value
            metadataKinds[metadataCount] = kind
            metadataCount += 1
            while i < n, Self.isSpace(b[i]) { i += 1 }
            guard i < n else { return false }
            if b[i] == 0x2C {  // ,
                i += 1
                while i < n, Self.isSpace(b[i]) { i += 1 }
                continue
            }
            guard b[i] == 0x7D else { return false }  // }
            i += 1
            return true
        }
    }

    static let trueBytes: [UInt8] = Array("true".utf8)
    static let falseBytes: [UInt8] = Array("false".utf8)

    /// The metadata read, as the tree reader makes it (`SampleJSONReader.metadata`):
    /// members in order, a whole number that fits Int64 as an integer; nil for a
    /// number beyond a Double's range (which JSON reading refuses).
    func metadata(in line: ArraySlice<UInt8>) -> Metadata? {
        var metadata = Metadata()
        for k in 0..<metadataCount {
            let r = metadataValues[k]
            let name = String(decoding: line[line.startIndex + metadataNames[k].lowerBound..<line.startIndex + metadataNames[k].upperBound],
                              as: UTF8.self)
            let text = String(decoding: line[line.startIndex + r.lowerBound..<line.startIndex + r.upperBound], as: UTF8.self)
            switch metadataKinds[k] {
            case .string: metadata.append(name, .string(text))
            case .yes: metadata.append(name, .bool(true))
            case .no: metadata.append(name, .bool(false))
            case .number:
                guard let d = Double(text), d.isFinite else { return nil }
                metadata.append(name, Int64(text).map(MetadataValue.integer) ?? .number(d))
            }
        }
        return metadata
    }

    /// JSON's number, `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, as
    /// `JSONValue` reads it.
    static func number(_ b: ArraySlice<UInt8>, _ i: inout Int) -> Bool {
        let n = b.endIndex
        func digit(_ at: Int) -> Bool { at < n && b[at] >= 0x30 && b[at] <= 0x39 }
        if i < n, b[i] == 0x2D { i += 1 }
        guard digit(i) else { return false }
        if b[i] == 0x30 {
            i += 1
            if digit(i) { return false }
        } else {
            while digit(i) { i += 1 }
        }
        if i < n, b[i] == 0x2E {
            i += 1
            guard digit(i) else { return false }
            while digit(i) { i += 1 }
        }
        if i < n, b[i] == 0x65 || b[i] == 0x45 {
            i += 1
            if i < n, b[i] == 0x2B || b[i] == 0x2D { i += 1 }
            guard digit(i) else { return false }
            while digit(i) { i += 1 }
        }
        return true
    }

    /// A field's bytes (a string's without its quotes), nil when absent.
    func bytes(_ field: Int, in line: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        ranges[field].map { r in line[line.startIndex + r.lowerBound..<line.startIndex + r.upperBound] }
    }

    /// A field's text, nil when absent.
    func text(_ field: Int, in line: ArraySlice<UInt8>) -> String? {
        bytes(field, in: line).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The sample, checked as `SampleJSONReader.sample(_:zone:)` checks it; nil where
    /// that refuses (the caller then gets its error from there).
    func sample(in line: ArraySlice<UInt8>, zone: TimeZone?) -> Sample? {
        let (type, value, unit, start, end, uuid) = (0, 1, 2, 3, 4, 5)
        // Every field but value is a string when given.
        for field in [type, unit, start, end, uuid] where isNumber[field] { return nil }
        guard let typeText = text(type, in: line), let objectType = try? ObjectType(identifier: typeText),
              // Dates and the UUID read in place (no String each): the same readers
              // `SampleJSONReader.date` and `UUIDText.parse(_:)` use on the text.
              let startBytes = bytes(start, in: line),
              let startDate = ISO8601.date(utf8: startBytes, dayStartIn: zone) else { return nil }
        var endDate = startDate
        if let endBytes = bytes(end, in: line) {
            guard let d = ISO8601.date(utf8: endBytes, dayStartIn: zone) else { return nil }
            endDate = d
        }
        let id: UUID
        if let uuidBytes = bytes(uuid, in: line) {
            guard let parsed = UUIDText.parse(utf8: uuidBytes) else { return nil }
            id = parsed
        } else {
            id = UUID()
        }
        guard let valueText = text(value, in: line) else { return nil }
        let unitText = text(unit, in: line)
        switch objectType {
        case .quantity:
            guard isNumber[value], unitText != nil else { return nil }
        case .category:
            guard unitText == nil else { return nil }
            if isNumber[value] {
                guard !valueText.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) else { return nil }
            } else {
                guard Int(valueText) == nil, Double(valueText)?.isFinite != true else { return nil }
            }
        default:
            return nil
        }
        if isNumber[value] {
            // As JSONValue: a number beyond a Double's range is refused there.
            guard let v = Double(valueText), v.isFinite else { return nil }
        }
        guard let metadata = metadata(in: line) else { return nil }
        return try? SampleJSONReader.sample(type: objectType, value: valueText, unit: unitText, start: startDate, end: endDate,
                                            uuid: id, metadata: metadata, device: nil)
    }
}
