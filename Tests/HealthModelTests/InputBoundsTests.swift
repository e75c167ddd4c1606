import Foundation
import Testing
import HealthModel

/// Hostile or careless input is refused with a typed error, never a trap: unit
/// strings are bounded in length, nesting and powers; dates
/// are bounded to the range that prints as ISO 8601 and must name their UTC offset.
struct InputBoundsTests {
    // MARK: Units

    @Test func deeplyNestedUnitIsRefusedNotRecursed() {
        // 2,100 levels crashed `verify` later; 20,000 overflowed the stack at once.
        for depth in [17, 2_100, 20_000] {
            let text = String(repeating: "(", count: depth) + "kg" + String(repeating: ")", count: depth)
            #expect(throws: HealthModelError.self) { try HealthUnit(text, cached: false) }
        }
        let seventeen = String(repeating: "(", count: 17) + "kg" + String(repeating: ")", count: 17)
        #expect(seventeen.utf8.count <= 256)
        #expect(throws: HealthModelError.unitSyntax(unit: seventeen, offset: 16, reason: "parentheses nested deeper than 16")) {
            try HealthUnit(seventeen)
        }
        let sixteen = String(repeating: "(", count: 16) + "kg" + String(repeating: ")", count: 16)
        #expect((try? HealthUnit(sixteen))?.canonicalString == "kg")
    }

    @Test func overlongUnitIsRefused() {
        let text = Array(repeating: "kg", count: 200).joined(separator: ".")  // 599 bytes
        #expect(throws: HealthModelError.unitSyntax(unit: "kg.kg.kg.kg.kg.kg.kg.kg.kg.kg.kg…", offset: 256,
                                                    reason: "unit string longer than 256 bytes (599)")) {
            try HealthUnit(text)
        }
    }

    @Test func powersThatMultiplyThroughParenthesesAreBounded() throws {
        // Each power is ≤ 99, but nested they would overflow Int (a trap) or wrap the
        // Int8 dimension (m^256 would have been dimensionless).
        #expect(throws: HealthModelError.unitSyntax(unit: "(m^99)^99", offset: 9, reason: "power beyond ±99")) {
            try HealthUnit("(m^99)^99")
        }
        #expect(throws: HealthModelError.unitSyntax(unit: "L^34", offset: 0, reason: "a dimension's power is beyond ±99")) {
            try HealthUnit("L^34")  // length^102
        }
        #expect(try HealthUnit("L^33").dimension.description == "length^99")
        #expect(throws: HealthModelError.self) { try HealthUnit("m^99.m^99") }
        var deep = "count"
        for _ in 0..<16 { deep = "(" + deep + "^99)" }
        #expect(throws: HealthModelError.self) { try HealthUnit(deep) }
    }

    // MARK: Dates

    @Test(arguments: [
        ("1600-01-01T00:00:00Z", -11_676_096_000.0), ("2300-01-01T00:00:00Z", 10_413_792_000.0),
        ("0001-01-01T00:00:00Z", -62_135_596_800.0), ("9999-12-31T23:59:59Z", 253_402_300_799.0),
        ("2026-03-01T12:00:00-23:59", 1_772_452_740.0), ("2026-03-01T12:00:00+23:59", 1_772_280_060.0),
        ("2026-03-01T12:00:00+2359", 1_772_280_060.0),
    ])
    func acceptedDatesRoundTrip(text: String, seconds: Double) throws {
        let date = try ISO8601.parse(text)
        #expect(date.timeIntervalSince1970 == seconds)
        let printed = ISO8601.string(date)
        #expect(printed.hasSuffix("Z") && !printed.contains("since"))
        #expect(try ISO8601.parse(printed) == date)
    }

    @Test(arguments: [
        ("0000-01-01T00:00:00Z", "is outside 0001-01-01T00:00:00Z…9999-12-31T23:59:59.999999Z"),
        ("0000-12-31", "is outside 0001-01-01T00:00:00Z…9999-12-31T23:59:59.999999Z"),
        ("9999-12-31T23:59:60Z", "is outside 0001-01-01T00:00:00Z…9999-12-31T23:59:59.999999Z"),
        ("9999-12-31T23:00:00-01:00", "is outside 0001-01-01T00:00:00Z…9999-12-31T23:59:59.999999Z"),
        ("0001-01-01T00:00:00+00:01", "is outside 0001-01-01T00:00:00Z…9999-12-31T23:59:59.999999Z"),
        ("2026-03-01T12:00", "has no UTC offset: add Z or ±HH:MM"),
        ("2026-03-01T12:00:00.5", "has no UTC offset: add Z or ±HH:MM"),
        ("2026-03-01T12:00:00+24:00", "has a UTC offset beyond ±23:59"),
        ("2026-03-01T12:00:00-23:60", "has a UTC offset beyond ±23:59"),
        ("2026-02-30", "is not a Gregorian date"),
    ])
    func refusedDatesAreNamed(text: String, reason: String) {
        #expect(throws: HealthModelError.invalidDate(text: text, reason: reason)) { try ISO8601.parse(text) }
        #expect(ISO8601.date(from: text) == nil)
    }

    @Test func modelConstructorsRefuseDatesOutsideTheRange() throws {
        let early = Date(timeIntervalSince1970: -62_135_596_801)
        let late = Date(timeIntervalSince1970: 253_402_300_800)
        let fine = try ISO8601.parse("2026-01-01T00:00:00Z")
        #expect(throws: HealthModelError.dateOutOfRange(field: "sample startDate", date: "0000-12-31T23:59:59Z",
                                                        range: ISO8601.validRangeText)) {
            try SampleCommon(startDate: early, endDate: fine)
        }
        #expect(throws: HealthModelError.dateOutOfRange(field: "sample endDate", date: "253402300800.0s since 1970-01-01T00:00:00Z",
                                                        range: ISO8601.validRangeText)) {
            try SampleCommon(startDate: fine, endDate: late)
        }
        #expect(throws: HealthModelError.self) { try SampleCommon(startDate: fine, endDate: fine, creationDate: late) }
        var metadata = Metadata()
        metadata.append("When", .date(late))
        #expect(throws: HealthModelError.self) { try SampleCommon(startDate: fine, endDate: fine, metadata: metadata) }
        #expect(throws: HealthModelError.self) { try WorkoutEvent(kind: .lap, date: early) }
    }

    @Test func utcOffsetsOfTheModelAreTheISORange() throws {
        let fine = try ISO8601.parse("2026-01-01T00:00:00Z")
        let limit = 23 * 3600 + 59 * 60
        _ = try SampleCommon(startDate: fine, endDate: fine, writtenOffsets: WrittenOffsets(start: -limit, end: limit, creation: nil))
        #expect(throws: HealthModelError.valueOutOfRange(field: "sample UTC offset", value: 86_400, range: "±86340 s (±23:59)")) {
            try SampleCommon(startDate: fine, endDate: fine, writtenOffsets: WrittenOffsets(start: 0, end: 86_400, creation: nil))
        }
    }
}
