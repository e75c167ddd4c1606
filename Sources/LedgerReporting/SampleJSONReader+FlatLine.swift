import Foundation
import HealthModel

/// `ingest`'s common line read straight from its bytes: an object of `type`,
/// `value`, `unit`, `start`, `end` and `uuid` whose values are plain strings (ASCII,
/// no escape) or numbers — what `jq -c`, `json.dumps` and our own `query --json`
/// write — without building a `JSONValue` tree, a `String` per key, or a member list.
///
/// It answers only when the answer is certain: any other line (metadata, a device,
/// an escape, non-ASCII text, a literal, a duplicate or unknown field, a field of
/// another JSON type, a value the rules refuse) is nil, and the caller reads it
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
    /// type, value, unit, start, end, uuid — the order of `names`.
    static let names: [[UInt8]] = ["type", "value", "unit", "start", "end", "uuid"].map { Array($0.utf8) }
    // Inline storage: a line allocates nothing here.
    var ranges = InlineArray<6, Range<Int>?>(repeating: nil)
    var isNumber = InlineArray<6, Bool>(repeating: false)

    /// Which of the six fields `name` is, or nil.
    static func field(_ name: ArraySlice<UInt8>) -> Int? {
        let candidate: Int
        switch (name.count, name.first) {
        case (4, UInt8(ascii: "t")?): candidate = 0
        case (5, UInt8(ascii: "v")?): candidate = 1
        case (4, UInt8(ascii: "u")?): candidate = name[name.startIndex + 1] == UInt8(ascii: "n") ? 2 : 5
        case (5, UInt8(ascii: "s")?): candidate = 3
        case (3, UInt8(ascii: "e")?): candidate = 4
        default: return nil
        }
        return names[candidate].elementsEqual(name) ? candidate : nil
    }

    /// Reads `{ "name" : value , … }` with JSON's whitespace; false for anything else.
    /// Ranges are offsets from the line's start.
    mutating func scan(_ b: ArraySlice<UInt8>) -> Bool {
        var i = b.startIndex
        let n = b.endIndex
        func skipSpace() { while i < n, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0D || b[i] == 0x0A { i += 1 } }
        skipSpace()
        guard i < n, b[i] == 0x7B else { return false }  // {
        i += 1
        skipSpace()
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
            skipSpace()
            guard i < n, b[i] == 0x3A else { return false }  // :
            i += 1
            skipSpace()
            guard i < n else { return false }
            if b[i] == 0x22 {
                i += 1
                let start = i
                while i < n, b[i] != 0x22 {
                    guard b[i] >= 0x20 && b[i] < 0x7F && b[i] != 0x5C else { return false }  // no escape, no control, ASCII
                    i += 1
                }
                guard i < n else { return false }
                ranges[field] = start - b.startIndex..<i - b.startIndex
                i += 1
            } else {
                let start = i
                guard Self.number(b, &i) else { return false }
                ranges[field] = start - b.startIndex..<i - b.startIndex
                isNumber[field] = true
            }
            skipSpace()
            guard i < n else { return false }
            if b[i] == 0x2C {  // ,
                i += 1
                skipSpace()
                continue
            }
            guard b[i] == 0x7D else { return false }  // }
            i += 1
            skipSpace()
            return i == n
        }
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

    func text(_ field: Int, in line: ArraySlice<UInt8>) -> String? {
        ranges[field].map { r in String(decoding: line[line.startIndex + r.lowerBound..<line.startIndex + r.upperBound], as: UTF8.self) }
    }

    /// The sample, checked as `SampleJSONReader.sample(_:zone:)` checks it; nil where
    /// that refuses (the caller then gets its error from there).
    func sample(in line: ArraySlice<UInt8>, zone: TimeZone?) -> Sample? {
        let (type, value, unit, start, end, uuid) = (0, 1, 2, 3, 4, 5)
        // Every field but value is a string when given.
        for field in [type, unit, start, end, uuid] where isNumber[field] { return nil }
        guard let typeText = text(type, in: line), let objectType = try? ObjectType(identifier: typeText),
              let startText = text(start, in: line),
              let startDate = try? SampleJSONReader.date(startText, "start", zone: zone) else { return nil }
        var endDate = startDate
        if let endText = text(end, in: line) {
            guard let d = try? SampleJSONReader.date(endText, "end", zone: zone) else { return nil }
            endDate = d
        }
        let id: UUID
        if let uuidText = text(uuid, in: line) {
            guard let parsed = UUIDText.parse(uuidText) else { return nil }
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
        return try? SampleJSONReader.sample(type: objectType, value: valueText, unit: unitText, start: startDate, end: endDate,
                                            uuid: id, metadata: Metadata(), device: nil)
    }
}
