import Foundation
import HealthModel
import LedgerCore

/// The JSON line of a sample read in place (`PlainQuantityBytes`), written into one
/// stack buffer through a raw cursor and appended to the output once: the bytes
/// `SampleJSONWriter.append(_: PlainQuantityBytes, to:)` writes field by field.
///
/// Written so, a 1M-sample `query --json` spent its writing thread (the query's
/// critical path, `perf`) on a dozen `Array.append` calls per line — each a
/// uniqueness check, a capacity check and a `memmove` of a few bytes — and on the
/// retains and releases of the payload and the source strings that came with them.
///
/// Only the common line is written here (its metadata, when it has any, through
/// `SampleJSONWriter.metadata`); `write` answers false (and writes nothing) for the
/// rest, which the field-by-field writer takes: a value that is not a whole number
/// below 10^15, a date outside whole seconds of years 1…9999, a source whose bundle
/// identifier needs escaping, or a line longer than `capacity`.
enum PlainSampleLine {
    /// The stack buffer's size: a line of the common shape is about 230 bytes.
    static let capacity = 512

    /// Each type's identifier as `SampleJSONWriter` quotes it, by type code (the type
    /// field's 11 bits); empty where no type has that code.
    private static let quotedIdentifiers: [[UInt8]] = (0..<2048).map { code in
        guard let type = ObjectType(code: UInt16(code)) else { return [] }
        return Array(JSONObject.quote(type.identifier).utf8)
    }

    /// Appends `s`'s line (without its newline) to `out` and returns true, or returns
    /// false with `out` untouched.
    static func write(_ s: borrowing PlainQuantityBytes, to out: inout [UInt8]) -> Bool {
        guard Int(s.typeCode) < quotedIdentifiers.count else { return false }
        let identifier = quotedIdentifiers[Int(s.typeCode)]
        guard !identifier.isEmpty, let value = SampleJSONWriter.wholeNumber(s.value),
              let start = SampleJSONWriter.wholeSeconds(Date(timeIntervalSinceReferenceDate: s.start)),
              let end = SampleJSONWriter.wholeSeconds(Date(timeIntervalSinceReferenceDate: s.end)) else { return false }
        var creation: Int64?
        if let c = s.creation {
            guard let seconds = SampleJSONWriter.wholeSeconds(Date(timeIntervalSinceReferenceDate: c)) else { return false }
            creation = seconds
        }
        // The payload and the bundle identifier's bytes are lent to `line` (one call,
        // with or without an identifier).
        let unit = s.unit, metadataCount = s.metadataCount, uuid = s.uuid, version = s.sourceVersion
        func written(bundle: UnsafeBufferPointer<UInt8>?) -> Bool {
            unsafe line(uuid: uuid, identifier: identifier, value: value, unit: unit, start: start, end: end, creation: creation,
                        bundle: bundle, version: bundle == nil ? nil : version, metadataCount: metadataCount, payload: s.payload,
                        to: &out)
        }
        // A native string's bytes are contiguous; any other is left to the field-by-field writer.
        let done = s.bundleIdentifier == nil ? written(bundle: nil)
            : unsafe s.bundleIdentifier?.utf8.withContiguousStorageIfAvailable { unsafe written(bundle: $0) } ?? false
        guard done else { return false }
        if metadataCount > 0 {
            SampleJSONWriter.metadata(s, &out)
            out.append(UInt8(ascii: "}"))
        }
        return true
    }

    /// The line's bytes up to its metadata (the bundle identifier's bytes and the
    /// payload lent in place), appended to `out`; false, with `out` untouched, when the
    /// identifier needs escaping or the line would not fit the stack buffer.
    private static func line(uuid: UUID, identifier: [UInt8], value: Int64, unit: Range<Int>, start: Int64, end: Int64,
                             creation: Int64?, bundle: UnsafeBufferPointer<UInt8>?, version: Range<Int>?, metadataCount: Int,
                             payload: [UInt8], to out: inout [UInt8]) -> Bool {
        if let bundle = unsafe bundle {
            // unsafe: the string's bytes, lent for the call.
            guard unsafe !bundle.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else { return false }
        }
        // Every byte but the strings' (an upper bound: a few bytes generous): the literals
        // with their quotes and separators — `{"uuid":"` 9, `","type":` 9,
        // `,"kind":"quantity","value":` 27, `,"unit":"` 9, `","start":` 10, `,"end":` 7,
        // `,"source":` 10, `","sourceVersion":"` and `"` 19, `,"creationDate":` 16,
        // `,"metadata":` 12, `}` 1, the bundle's quotes or `null` 4 — 133; the UUID 36, the
        // number at most 16 (a sign and 15 digits), three dates 66: 251, rounded to 253.
        let bound = unsafe 253 + identifier.count + unit.count + (bundle?.count ?? 0) + (version?.count ?? 0)
        guard bound <= capacity else { return false }
        // unsafe: the cursor writes at most `bound` bytes (counted above) into a buffer of
        // `capacity`, and the strings copied are ranges of `payload` (PlainQuantityBytes'
        // invariant) or the bundle identifier's bytes, read during the call.
        unsafe withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            var c = unsafe ByteCursor(buffer.baseAddress!)
            unsafe c.put(#"{"uuid":""#)
            unsafe c.uuid(uuid)
            unsafe c.put(#"","type":"#)
            unsafe c.put(identifier)
            unsafe c.put(#","kind":"quantity","value":"#)
            unsafe c.integer(value)
            unsafe c.put(#","unit":""#)
            unsafe payload.withUnsafeBufferPointer { p in
                unsafe c.put(UnsafeBufferPointer(rebasing: p[unit]))
                unsafe c.put(#"","start":"#)
                unsafe c.date(start)
                unsafe c.put(#","end":"#)
                unsafe c.date(end)
                unsafe c.put(#","source":"#)
                if let bundle = unsafe bundle {
                    unsafe c.byte(UInt8(ascii: "\""))
                    unsafe c.put(bundle)
                    unsafe c.byte(UInt8(ascii: "\""))
                    if let version {
                        unsafe c.put(#","sourceVersion":""#)
                        unsafe c.put(UnsafeBufferPointer(rebasing: p[version]))
                        unsafe c.byte(UInt8(ascii: "\""))
                    }
                } else {
                    unsafe c.put("null")
                }
            }
            if let creation {
                unsafe c.put(#","creationDate":"#)
                unsafe c.date(creation)
            }
            if metadataCount > 0 {
                unsafe c.put(#","metadata":"#)
            } else {
                unsafe c.byte(UInt8(ascii: "}"))
            }
            let written = unsafe c.at - buffer.baseAddress!
            assert(written <= bound, "the bound counts every byte")
            unsafe out.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress!, count: written))
        }
        return true
    }
}
