import Foundation

/// A small, exact ISO 8601 reader and writer for the dates people type and read.
///
/// Foundation's `ISO8601DateFormatter` is slow on Linux and lossy below a
/// millisecond; this one is neither. Accepted forms:
/// `YYYY-MM-DD` (midnight UTC), `YYYY-MM-DDTHH:MM[:SS[.fraction]](Z|±HH:MM|±HHMM)`
/// (a space may stand for `T`). A time must carry its UTC offset: `2026-03-01T12:00`
/// alone names no instant and is refused. Offsets run over ISO 8601's range, ±23:59.
///
/// Every date the ledger stores lies in `validRange` (years 0001…9999), which is
/// exactly what `string(_:)` prints in calendar form; parsing refuses anything else.
public enum ISO8601 {
    /// 0001-01-01T00:00:00Z, in seconds since 1970.
    public static let earliestSeconds: Double = -62_135_596_800
    /// 10000-01-01T00:00:00Z, in seconds since 1970: the first instant past the range.
    public static let endSeconds: Double = 253_402_300_800
    /// The instants the ledger accepts and prints: 0001-01-01T00:00:00Z up to (not
    /// including) 10000-01-01T00:00:00Z.
    public static let validRange = Date(timeIntervalSince1970: earliestSeconds)..<Date(timeIntervalSince1970: endSeconds)
    /// `validRange` as error messages name it.
    public static let validRangeText = "0001-01-01T00:00:00Z…9999-12-31T23:59:59.999999Z"
    /// The largest UTC offset accepted, in seconds (23:59, ISO 8601's limit).
    public static let maxOffsetSeconds = 23 * 3600 + 59 * 60

    /// Whether `date` lies in `validRange` (NaN and infinities do not).
    public static func isInRange(_ date: Date) -> Bool {
        let t = date.timeIntervalSince1970
        return t >= earliestSeconds && t < endSeconds
    }

    /// Throws `dateOutOfRange` naming `field` unless `date` is in `validRange`.
    /// `field` is evaluated only then: callers name fields by interpolation
    /// (`"\(field) startDate"`), which built a string for every sample decoded.
    public static func checkRange(_ date: Date, field: @autoclosure () -> String) throws(HealthModelError) {
        guard isInRange(date) else {
            throw .dateOutOfRange(field: field(), date: string(date), range: validRangeText)
        }
    }

    /// Parses an ISO 8601 date; `nil` when `parse` refuses it.
    public static func date(from text: String) -> Date? {
        try? parse(text)
    }

    /// Parses like `parse(_:)`, except that a date alone (`YYYY-MM-DD`) is the start of
    /// that day in `zone` (the owner's day, not UTC's). Throws as `parse(_:)` does, and
    /// `invalidDate` when that start falls outside `validRange`.
    public static func parse(_ text: String, dayStartIn zone: TimeZone) throws(HealthModelError) -> Date {
        let date = try parse(text)
        guard text.utf8.count == 10 else { return date }
        let start = CivilDate.startOfDay(utcMidnight: date, in: zone)
        guard isInRange(start) else { throw .invalidDate(text: text, reason: "starts outside \(validRangeText) in \(zone.identifier)") }
        return start
    }

    /// Parses an ISO 8601 date or date-time (see the type's forms). Throws
    /// `invalidDate` with the reason (not a form, no UTC offset, offset beyond ±23:59,
    /// or outside `validRange`).
    public static func parse(_ text: String) throws(HealthModelError) -> Date {
        guard text.utf8.count <= 128 else { throw invalidDate(text, form) }
        return try parse(utf8: Array(text.utf8)[...], text: text)
    }

    /// `parse(_:dayStartIn:)` (with a zone) or `parse(_:)` (without) of a text given as
    /// its UTF-8 bytes, nil where those throw: the same reading, without a `String` or
    /// a copy of the bytes (ingest's flat lines give their dates in place).
    package static func date(utf8 bytes: ArraySlice<UInt8>, dayStartIn zone: TimeZone?) -> Date? {
        guard bytes.count <= 128, let date = try? parse(utf8: bytes, text: nil) else { return nil }
        guard let zone, bytes.count == 10 else { return date }
        let start = CivilDate.startOfDay(utcMidnight: date, in: zone)
        return isInRange(start) ? start : nil
    }

    private static let form = "is not an ISO 8601 date (YYYY-MM-DD) or date-time (YYYY-MM-DDTHH:MM[:SS[.f]]Z or ±HH:MM)"

    /// A refusal of `text` (its first 64 characters) for `reason`.
    private static func invalidDate(_ text: String, _ reason: String) -> HealthModelError {
        .invalidDate(text: text.count > 64 ? String(text.prefix(64)) + "…" : text, reason: reason)
    }

    /// The one reading of a date's bytes (at most 128); `text` is the same bytes as a
    /// string, for a refusal to name (nil: the caller only asks whether it reads).
    private static func parse(utf8 bytes: ArraySlice<UInt8>, text: String?) throws(HealthModelError) -> Date {
        func invalid(_ reason: String) -> HealthModelError {
            invalidDate(text ?? String(decoding: bytes, as: UTF8.self), reason)
        }
        assert(bytes.count <= 128, "callers refuse a longer text before reading it")
        // A cursor value, not closures over a captured variable: no box, no dynamic
        // exclusivity check per byte (this parses every date `ingest` reads).
        var c = DateCursor(bytes: bytes)
        guard let year = c.number(4), c.expect(0x2D), let month = c.number(2), c.expect(0x2D), let day = c.number(2) else {
            throw invalid(form)
        }
        guard CivilDate.isValid(year: year, month: month, day: day) else { throw invalid("is not a Gregorian date") }
        guard year >= 1 else { throw invalid("is outside \(validRangeText)") }
        var seconds = Double(CivilDate.daysSinceEpoch(year: year, month: month, day: day)) * 86_400
        if c.bytes.isEmpty { return Date(timeIntervalSince1970: seconds) }
        guard c.expect(0x54) || c.expect(0x20) || c.expect(0x74),
              let hour = c.number(2), hour < 24, c.expect(0x3A), let minute = c.number(2), minute < 60 else { throw invalid(form) }
        var second = 0
        var fraction = 0.0
        if c.expect(0x3A) {
            guard let s = c.number(2), s < 61 else { throw invalid(form) }
            second = s
            if c.expect(0x2E) || c.expect(0x2C) {
                var scale = 0.1
                var digits = 0
                while let b = c.bytes.first, b >= 0x30, b <= 0x39 {
                    c.bytes.removeFirst()
                    fraction += Double(b - 0x30) * scale
                    scale /= 10
                    digits += 1
                }
                guard digits > 0 else { throw invalid(form) }
            }
        }
        seconds += Double(hour * 3600 + minute * 60 + second)
        if c.bytes.isEmpty {
            throw invalid("has no UTC offset: add Z or ±HH:MM")
        } else if c.expect(0x5A) || c.expect(0x7A) {
            // UTC
        } else if let sign = c.bytes.first, sign == 0x2B || sign == 0x2D {
            c.bytes.removeFirst()
            guard let oh = c.number(2) else { throw invalid(form) }
            _ = c.expect(0x3A)
            guard let om = c.number(2) else { throw invalid(form) }
            guard oh <= 23, om < 60 else { throw invalid("has a UTC offset beyond ±23:59") }
            let offset = Double(oh * 3600 + om * 60)
            seconds += sign == 0x2B ? -offset : offset
        } else {
            throw invalid(form)
        }
        guard c.bytes.isEmpty else { throw invalid(form) }
        let date = Date(timeIntervalSince1970: seconds + fraction)
        // An offset or a leap second can carry a date in the range out of it.
        guard isInRange(date) else { throw invalid("is outside \(validRangeText)") }
        return date
    }

    /// Writes `date` in UTC as `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`; the fraction appears
    /// only when the date is not a whole second, with trailing zeros removed.
    public static func string(_ date: Date) -> String {
        let t = date.timeIntervalSince1970
        guard t.isFinite else { return t.isNaN ? "nan" : (t > 0 ? "+inf" : "-inf") }
        // Years 0000…9999 in calendar form (the model's dates are 0001…9999); anything
        // else, which no model value holds, as seconds since the epoch.
        guard t >= -62_167_219_200, t < endSeconds else { return "\(t)s since 1970-01-01T00:00:00Z" }
        var whole = t.rounded(.down)
        var micros = Int(((t - whole) * 1_000_000).rounded())
        if micros >= 1_000_000 {
            // Rounding up must not leave year 9999.
            if whole + 1 >= endSeconds { micros = 999_999 } else { whole += 1; micros -= 1_000_000 }
        }
        let totalSeconds = Int64(whole)
        let days = totalSeconds >= 0 ? totalSeconds / 86_400 : (totalSeconds - 86_399) / 86_400
        let secondOfDay = Int(totalSeconds - days * 86_400)
        let civil = CivilDate.fromDaysSinceEpoch(Int(days))
        var text = pad(civil.year, 4) + "-" + pad(civil.month, 2) + "-" + pad(civil.day, 2) + "T"
        text += pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if micros != 0 {
            var fraction = pad(micros, 6)
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "Z"
    }

    /// `value` in decimal, zero-padded to `width` digits (a minus sign before them).
    public static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(abs(value))
        let body = digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        return value < 0 ? "-" + body : body
    }
}

/// Proleptic Gregorian calendar arithmetic on (year, month, day), without Foundation's
/// `Calendar` (whose behaviour depends on the machine's settings).
public enum CivilDate {
    /// Whether year-month-day names a real Gregorian date.
    public static func isValid(year: Int, month: Int, day: Int) -> Bool {
        guard (1...12).contains(month), day >= 1 else { return false }
        return day <= daysInMonth(year: year, month: month)
    }

    /// Whether `year` is a Gregorian leap year.
    public static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    /// The number of days in a month of a year.
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to year-month-day (negative before 1970).
    public static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The calendar day of `date` in `timeZone`.
    public static func day(of date: Date, in timeZone: TimeZone) -> (year: Int, month: Int, day: Int) {
        let seconds = date.timeIntervalSince1970 + Double(timeZone.secondsFromGMT(for: date))
        guard seconds.isFinite, abs(seconds) < 2.5e11 else { return fromDaysSinceEpoch(0) }
        return fromDaysSinceEpoch(Int((seconds / 86_400).rounded(.down)))
    }

    /// The first instant of a civil day in `zone`, given that day's midnight in UTC:
    /// midnight minus the zone's offset at local midnight (checked twice, so a
    /// daylight-saving change on that day is honoured).
    public static func startOfDay(utcMidnight: Date, in zone: TimeZone) -> Date {
        let t = utcMidnight.timeIntervalSince1970
        let guess = t - Double(zone.secondsFromGMT(for: utcMidnight))
        return Date(timeIntervalSince1970: t - Double(zone.secondsFromGMT(for: Date(timeIntervalSince1970: guess))))
    }

    /// The civil date `days` days after 1970-01-01.
    public static func fromDaysSinceEpoch(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// The bytes of a date still to read, for `ISO8601.parse`.
private struct DateCursor {
    var bytes: ArraySlice<UInt8>

    /// `count` decimal digits as a number, consumed; nil (some consumed) when fewer are there.
    @inline(__always)
    mutating func number(_ count: Int) -> Int? {
        guard bytes.count >= count else { return nil }
        var value = 0
        for _ in 0..<count {
            let b = bytes.removeFirst()
            guard b >= 0x30, b <= 0x39 else { return nil }
            value = value * 10 + Int(b - 0x30)
        }
        return value
    }

    /// Consumes `c` when it comes next.
    @inline(__always)
    mutating func expect(_ c: UInt8) -> Bool {
        guard bytes.first == c else { return false }
        bytes.removeFirst()
        return true
    }
}
