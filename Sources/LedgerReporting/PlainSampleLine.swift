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
        guard !identifier.isEmpty, let value = wholeNumber(s.value),
              let start = wholeSeconds(s.start), let end = wholeSeconds(s.end) else { return false }
        var creation: Int64?
        if let c = s.creation {
            guard let seconds = wholeSeconds(c) else { return false }
            creation = seconds
        }
        var bundle = s.bundleIdentifier
        let bundleCount = bundle?.utf8.count ?? 0
        if bundle != nil {
            // unsafe: the string's bytes, read during the call.
            let plain = bundle!.withUTF8 { b in unsafe !b.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C } }
            guard plain else { return false }
        }
        let version = bundle != nil ? s.sourceVersion : nil
        // Every byte but the strings' (an upper bound: a few bytes generous): the literals
        // with their quotes and separators — `{"uuid":"` 9, `","type":` 9,
        // `,"kind":"quantity","value":` 27, `,"unit":"` 9, `","start":` 10, `,"end":` 7,
        // `,"source":` 10, `","sourceVersion":"` and `"` 19, `,"creationDate":` 16,
        // `,"metadata":` 12, `}` 1, the bundle's quotes or `null` 4 — 133; the UUID 36, the
        // number at most 16 (a sign and 15 digits), three dates 66: 251, rounded to 253.
        let bound = 253 + identifier.count + s.unit.count + bundleCount + (version?.count ?? 0)
        guard bound <= capacity else { return false }
        // unsafe: the cursor writes at most `bound` bytes (counted above) into a buffer of
        // `capacity`, and the strings copied are ranges of `payload` (PlainQuantityBytes'
        // invariant) read during the call.
        unsafe withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            var c = unsafe Cursor(buffer.baseAddress!)
            unsafe c.put(#"{"uuid":""#)
            unsafe c.uuid(s.uuid)
            unsafe c.put(#"","type":"#)
            unsafe c.put(identifier)
            unsafe c.put(#","kind":"quantity","value":"#)
            unsafe c.integer(value)
            unsafe c.put(#","unit":""#)
            unsafe s.payload.withUnsafeBufferPointer { p in
                unsafe c.put(UnsafeBufferPointer(rebasing: p[s.unit]))
                unsafe c.put(#"","start":"#)
                unsafe c.date(start)
                unsafe c.put(#","end":"#)
                unsafe c.date(end)
                unsafe c.put(#","source":"#)
                if bundle != nil {
                    unsafe c.byte(UInt8(ascii: "\""))
                    bundle!.withUTF8 { unsafe c.put($0) }
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
            if s.metadataCount > 0 {
                unsafe c.put(#","metadata":"#)
            } else {
                unsafe c.byte(UInt8(ascii: "}"))
            }
            let written = unsafe c.at - buffer.baseAddress!
            assert(written <= bound, "the bound counts every byte")
            unsafe out.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress!, count: written))
        }
        if s.metadataCount > 0 {
            SampleJSONWriter.metadata(s, &out)
            out.append(UInt8(ascii: "}"))
        }
        return true
    }

    /// `v` when `SampleJSONWriter.number` writes it as a whole number (`String(Int64(v))`).
    @inline(__always)
    private static func wholeNumber(_ v: Double) -> Int64? {
        v.isFinite && v == v.rounded() && abs(v) < 1e15 ? Int64(v) : nil
    }

    /// Seconds since 1970 of a date `SampleJSONWriter.date` writes without `ISO8601`
    /// (whole seconds in years 1…9999), from seconds since the reference date.
    @inline(__always)
    private static func wholeSeconds(_ sinceReference: Double) -> Int64? {
        let t = Date(timeIntervalSinceReferenceDate: sinceReference).timeIntervalSince1970
        guard t.isFinite, t == t.rounded(.down), t > -62_135_596_800, t < 253_402_300_800 else { return nil }
        return Int64(t)
    }

    /// Writes forward from a pointer; its owner sizes the buffer.
    @unsafe private struct Cursor {
        var at: UnsafeMutablePointer<UInt8>

        init(_ at: UnsafeMutablePointer<UInt8>) { unsafe self.at = at }

        @inline(__always)
        mutating func byte(_ b: UInt8) {
            unsafe at.pointee = b
            unsafe at += 1
        }

        /// Copies `bytes`: up to 32 of them with two (overlapping) loads and stores of
        /// the widest size that fits, not a call to `memmove` — a line is a dozen copies
        /// of 4 to 30 bytes, and the calls were a sixth of the writing thread.
        @inline(__always)
        mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let base = bytes.baseAddress else { return }
            let n = bytes.count
            let from = unsafe UnsafeRawPointer(base), to = unsafe UnsafeMutableRawPointer(at)
            if n >= 16 && n <= 32 {
                unsafe to.storeBytes(of: from.loadUnaligned(as: SIMD16<UInt8>.self), as: SIMD16<UInt8>.self)
                unsafe (to + (n - 16)).storeBytes(of: (from + (n - 16)).loadUnaligned(as: SIMD16<UInt8>.self),
                                                  as: SIMD16<UInt8>.self)
            } else if n >= 8 && n < 16 {
                unsafe to.storeBytes(of: from.loadUnaligned(as: UInt64.self), as: UInt64.self)
                unsafe (to + (n - 8)).storeBytes(of: (from + (n - 8)).loadUnaligned(as: UInt64.self), as: UInt64.self)
            } else if n >= 4 && n < 8 {
                unsafe to.storeBytes(of: from.loadUnaligned(as: UInt32.self), as: UInt32.self)
                unsafe (to + (n - 4)).storeBytes(of: (from + (n - 4)).loadUnaligned(as: UInt32.self), as: UInt32.self)
            } else if n < 4 {
                for i in 0..<n { unsafe at[i] = base[i] }
            } else {
                unsafe at.update(from: base, count: n)
            }
            unsafe at += n
        }

        @inline(__always)
        mutating func put(_ text: StaticString) {
            text.withUTF8Buffer { unsafe put($0) }
        }

        @inline(__always)
        mutating func put(_ bytes: [UInt8]) {
            unsafe bytes.withUnsafeBufferPointer { unsafe put($0) }
        }

        /// `String(v)`'s digits.
        mutating func integer(_ v: Int64) {
            if v < 0 { unsafe byte(UInt8(ascii: "-")) }
            var m = v.magnitude
            var digits = 1
            var scale: UInt64 = 10
            while digits < 20, m >= scale {
                digits += 1
                scale = scale &* 10
            }
            var i = digits - 1
            while i >= 0 {
                unsafe at[i] = UInt8(ascii: "0") + UInt8(m % 10)
                m /= 10
                i -= 1
            }
            unsafe at += digits
        }

        /// The UUID's 36 upper-case characters, as `UUID.uuidString`.
        mutating func uuid(_ u: UUID) {
            unsafe withUnsafeBytes(of: u.uuid) { b in
                for i in 0..<16 {
                    if i == 4 || i == 6 || i == 8 || i == 10 { unsafe byte(UInt8(ascii: "-")) }
                    let v = unsafe b[i]
                    unsafe byte(Self.hex(v >> 4))
                    unsafe byte(Self.hex(v & 15))
                }
            }
        }

        @inline(__always)
        private static func hex(_ v: UInt8) -> UInt8 {
            v < 10 ? UInt8(ascii: "0") + v : UInt8(ascii: "A") - 10 + v
        }

        /// `"YYYY-MM-DDTHH:MM:SSZ"` with its quotes, for whole seconds since 1970 in
        /// years 1…9999.
        mutating func date(_ total: Int64) {
            let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
            let second = Int(total - days * 86_400)
            let civil = CivilDate.fromDaysSinceEpoch(Int(days))
            unsafe byte(UInt8(ascii: "\""))
            unsafe digits(civil.year, 4)
            unsafe byte(UInt8(ascii: "-"))
            unsafe digits(civil.month, 2)
            unsafe byte(UInt8(ascii: "-"))
            unsafe digits(civil.day, 2)
            unsafe byte(UInt8(ascii: "T"))
            unsafe digits(second / 3600, 2)
            unsafe byte(UInt8(ascii: ":"))
            unsafe digits(second / 60 % 60, 2)
            unsafe byte(UInt8(ascii: ":"))
            unsafe digits(second % 60, 2)
            unsafe byte(UInt8(ascii: "Z"))
            unsafe byte(UInt8(ascii: "\""))
        }

        /// `value` (0 ≤ value < 10^width) as `width` decimal digits.
        @inline(__always)
        private mutating func digits(_ value: Int, _ width: Int) {
            var v = value
            var i = width - 1
            while i >= 0 {
                unsafe at[i] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                i -= 1
            }
            unsafe at += width
        }
    }
}
