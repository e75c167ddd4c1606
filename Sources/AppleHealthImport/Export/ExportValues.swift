import Foundation
import HealthModel
#if canImport(Glibc)
import Glibc
#endif

/// Attribute values as Apple Health exports write them, parsed straight from bytes.
enum ExportValues {
    /// `2019-06-17 21:07:11 -0400` → seconds since the reference date and the UTC
    /// offset in seconds. Also accepts ISO 8601 with `T` and `Z`/`±hh:mm`. nil when
    /// the text is not a date.
    static func date(_ v: Span<UInt8>) -> (seconds: Double, offset: Int)? {
        v.withUnsafeBufferPointer { date($0) }
    }

    /// `date` of bytes at a pointer (read only during the call).
    static func date(_ v: UnsafeBufferPointer<UInt8>) -> (seconds: Double, offset: Int)? {
        var cache = DayCache()
        return date(v, cache: &cache)
    }

    /// The last calendar day a `date` parsed (its 10 bytes `yyyy-MM-dd` and days since
    /// 1970): the dates of an export's records come day after day, three a record, so
    /// most are on the day of the one before and their day is not parsed again.
    struct DayCache {
        var key: (UInt64, UInt16) = (0, 0)
        var days = 0
        var valid = false
    }

    /// `date`, with the day taken from `cache` when it is the same 10 bytes (then
    /// checked already) and kept there otherwise.
    @inline(__always)
    static func date(_ v: UnsafeBufferPointer<UInt8>, cache: inout DayCache) -> (seconds: Double, offset: Int)? {
        guard let p = v.baseAddress, v.count >= 19 else { return nil }
        @inline(__always) func d(_ i: Int) -> Int? {
            let c = Int(p[i]) - 48
            return c >= 0 && c <= 9 ? c : nil
        }
        @inline(__always) func n2(_ i: Int) -> Int? {
            guard let a = d(i), let b = d(i + 1) else { return nil }
            return a * 10 + b
        }
        let raw = UnsafeRawPointer(p)
        let key = (raw.loadUnaligned(as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt16.self))
        let days: Int
        if cache.valid && cache.key == key {
            days = cache.days
        } else {
            guard let y1 = n2(0), let y2 = n2(2), p[4] == 0x2D, let month = n2(5), p[7] == 0x2D, let day = n2(8) else { return nil }
            let year = y1 * 100 + y2
            guard (1...12).contains(month), day >= 1, day <= CivilDate.daysInMonth(year: year, month: month) else { return nil }
            days = CivilDate.daysSinceEpoch(year: year, month: month, day: day)
            cache = DayCache(key: key, days: days, valid: true)
        }
        guard p[10] == 0x20 || p[10] == 0x54, let hour = n2(11), p[13] == 0x3A, let minute = n2(14), p[16] == 0x3A,
              let second = n2(17) else { return nil }
        guard hour < 24, minute < 60, second < 61 else { return nil }
        var i = 19
        var fraction = 0.0
        if i < v.count && p[i] == 0x2E {  // .fff
            i += 1
            var scale = 0.1
            while i < v.count, let digit = d(i) {
                fraction += Double(digit) * scale
                scale /= 10
                i += 1
            }
        }
        while i < v.count && p[i] == 0x20 { i += 1 }
        var offset = 0
        if i < v.count {
            if p[i] == 0x5A { i += 1 } else {
                guard p[i] == 0x2B || p[i] == 0x2D, i + 3 <= v.count, let hh = n2(i + 1) else { return nil }
                var j = i + 3
                if j < v.count && p[j] == 0x3A { j += 1 }
                guard j + 2 <= v.count, let mm = n2(j), mm < 60, hh <= 18 else { return nil }
                offset = (hh * 3600 + mm * 60) * (p[i] == 0x2D ? -1 : 1)
                i = j + 2
            }
        }
        guard i == v.count else { return nil }
        let unix = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
        return (unix - Date.timeIntervalBetween1970AndReferenceDate, offset)
    }

    /// A date as exports write it: `2019-06-17 21:07:11 -0400`.
    static func format(_ date: Date, offset: Int) -> String {
        let local = Int((date.timeIntervalSince1970).rounded(.down)) + offset
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let second = local - days * 86_400
        let civil = CivilDate.fromDaysSinceEpoch(days)
        func pad(_ v: Int, _ n: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, n - s.count)) + s
        }
        let sign = offset < 0 ? "-" : "+"
        let o = abs(offset)
        return "\(pad(civil.year, 4))-\(pad(civil.month, 2))-\(pad(civil.day, 2)) \(pad(second / 3600, 2)):\(pad(second / 60 % 60, 2)):\(pad(second % 60, 2)) \(sign)\(pad(o / 3600, 2))\(pad(o / 60 % 60, 2))"
    }

    private static let powersOfTen: [Double] = (0...22).map { pow(10, Double($0)) }

    /// A decimal number (`72`, `-0.5`, `3.40897998046875`, `1e-05`), correctly
    /// rounded; nil when the text is not a finite number.
    static func number(_ v: Span<UInt8>) -> Double? {
        v.withUnsafeBufferPointer { number($0) }
    }

    /// `number` of bytes at a pointer (read only during the call).
    static func number(_ v: UnsafeBufferPointer<UInt8>) -> Double? {
        guard let p = v.baseAddress, !v.isEmpty, v.count < 64 else { return nil }
        // Fast path (Clinger): at most 15 significant digits and a short fraction:
        // mantissa and power of ten are exact doubles, so one division rounds correctly.
        var i = 0
        let negative = p[0] == 0x2D
        if negative || p[0] == 0x2B { i = 1 }
        var mantissa: UInt64 = 0
        var digits = 0, fractionDigits = 0
        var seenDot = false, sawDigit = false, simple = true
        while i < v.count {
            let c = p[i]
            if c >= 0x30 && c <= 0x39 {
                sawDigit = true
                if mantissa != 0 || c != 0x30 { digits += 1 }
                mantissa = mantissa &* 10 &+ UInt64(c - 0x30)
                if seenDot { fractionDigits += 1 }
            } else if c == 0x2E && !seenDot {
                seenDot = true
            } else {
                simple = false
                break
            }
            i += 1
        }
        if simple {
            guard sawDigit else { return nil }
            if digits <= 15 && fractionDigits <= 22 {
                let value = Double(mantissa) / powersOfTen[fractionDigits]
                return negative ? -value : value
            }
        }
        // Anything else through strtod, on a NUL-terminated copy; the whole text must be used.
        var text = [CChar](repeating: 0, count: v.count + 1)
        for k in 0..<v.count {
            let c = p[k]
            guard (c >= 0x30 && c <= 0x39) || c == 0x2E || c == 0x2D || c == 0x2B || c == 0x65 || c == 0x45 else { return nil }
            text[k] = CChar(bitPattern: c)
        }
        return text.withUnsafeBufferPointer { b -> Double? in
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(b.baseAddress!, &end)
            guard let end, end - UnsafeMutablePointer(mutating: b.baseAddress!) == v.count, value.isFinite else { return nil }
            return value
        }
    }

    /// `<<HKDevice: 0x283f5c6e0>, name:Apple Watch, manufacturer:Apple Inc., model:Watch,
    /// hardware:Watch3,2, software:5.2.1>` into its fields. A string in any other
    /// shape becomes a device with that string as its name.
    static func device(_ text: String) -> Device {
        guard text.hasPrefix("<<HKDevice:"), text.hasSuffix(">"), let close = text.range(of: ">, ") else {
            return Device(name: text)
        }
        let body = text[close.upperBound..<text.index(before: text.endIndex)]
        let keys = ["name", "manufacturer", "model", "hardware", "firmware", "software", "localIdentifier", "UDIDeviceIdentifier"]
        // Fields are ", key:value"; a value may itself hold ", " (never followed by a key and ':').
        var marks: [(key: String, at: String.Index, valueAt: String.Index)] = []
        var index = body.startIndex
        while index < body.endIndex {
            if index == body.startIndex || body[..<index].hasSuffix(", "),
               let key = keys.first(where: { body[index...].hasPrefix($0 + ":") }) {
                marks.append((key, index, body.index(index, offsetBy: key.count + 1)))
            }
            index = body.index(after: index)
        }
        var fields: [String: String] = [:]
        for (i, m) in marks.enumerated() {
            let end = i + 1 < marks.count ? body.index(marks[i + 1].at, offsetBy: -2) : body.endIndex
            fields[m.key] = String(body[m.valueAt..<end])
        }
        if fields.isEmpty { return Device(name: text) }
        return Device(name: fields["name"], manufacturer: fields["manufacturer"], model: fields["model"],
                      hardwareVersion: fields["hardware"], firmwareVersion: fields["firmware"],
                      softwareVersion: fields["software"], localIdentifier: fields["localIdentifier"],
                      udiDeviceIdentifier: fields["UDIDeviceIdentifier"])
    }

    /// A metadata value: `56 degF` or `96 %` as a quantity when the number and unit
    /// parse and the quantity prints back to exactly the same text; otherwise the
    /// string verbatim (numbers stay strings: exports do not say their type).
    static func metadataValue(_ text: String) -> MetadataValue {
        guard let space = text.firstIndex(of: " "), space != text.startIndex,
              text[text.index(after: space)...].first.map({ !$0.isNumber && $0 != " " }) == true else {
            return .string(text)
        }
        let numberText = Array(text[..<space].utf8)
        guard let value = numberText.withUnsafeBufferPointer({ number($0) }),
              let unit = try? HealthUnit(String(text[text.index(after: space)...])),
              let quantity = try? Quantity(value, unit), quantity.description == text else {
            return .string(text)
        }
        return .quantity(quantity)
    }
}
