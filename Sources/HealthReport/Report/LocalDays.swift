import Foundation

/// Calendar days in a time zone as day numbers (days since 1970-01-01 local), fast
/// enough for a million samples: the zone's offset is cached until its next
/// daylight-saving transition.
struct LocalDays {
    let zone: TimeZone
    private var cachedFrom = Double.infinity
    private var cachedUntil = -Double.infinity
    private var cachedOffset = 0.0

    init(_ zone: TimeZone) { self.zone = zone }

    /// The zone's offset from UTC at `t` (seconds since 1970).
    mutating func offset(at t: Double) -> Double {
        if t >= cachedFrom && t < cachedUntil { return cachedOffset }
        let date = Date(timeIntervalSince1970: t)
        cachedOffset = Double(zone.secondsFromGMT(for: date))
        cachedFrom = t
        cachedUntil = zone.nextDaylightSavingTimeTransition(after: date)?.timeIntervalSince1970 ?? .infinity
        return cachedOffset
    }

    /// The local day number of `t`.
    mutating func day(_ t: Double) -> Int {
        let local = t + offset(at: t)
        return Int((local / 86_400).rounded(.down))
    }

    /// The instant the local day `d` starts.
    mutating func start(ofDay d: Int) -> Double {
        let guess = Double(d) * 86_400
        return guess - offset(at: guess - offset(at: guess))
    }

    /// The Monday-based week of a day number (1970-01-01 was a Thursday).
    static func week(ofDay d: Int) -> Int { Int((Double(d + 3) / 7).rounded(.down)) }
    /// The first day (a Monday) of a week.
    static func firstDay(ofWeek w: Int) -> Int { w * 7 - 3 }

    /// `2026-03-01` for a day number.
    static func text(ofDay d: Int) -> String {
        // Civil-from-days (Howard Hinnant), exact for the proleptic Gregorian calendar.
        let z = d + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ v: Int, _ n: Int) -> String { let s = String(abs(v)); return (v < 0 ? "-" : "") + String(repeating: "0", count: max(0, n - s.count)) + s }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }
}
