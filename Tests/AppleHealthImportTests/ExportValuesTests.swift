import Foundation
import HealthModel
import Testing
@testable import AppleHealthImport

/// Attribute values as exports write them, parsed from bytes.
struct ExportValuesTests {
    static func date(_ text: String) -> (seconds: Double, offset: Int)? {
        Array(text.utf8).withUnsafeBufferPointer { ExportValues.date($0) }
    }

    static func number(_ text: String) -> Double? {
        Array(text.utf8).withUnsafeBufferPointer { ExportValues.number($0) }
    }

    @Test func datesWithTheirOffsets() throws {
        // 2019-06-17 21:07:11 -0400 is 2019-06-18T01:07:11Z = 1560820031 s after 1970.
        let d = try #require(Self.date("2019-06-17 21:07:11 -0400"))
        #expect(d.seconds == 1_560_820_031 - Date.timeIntervalBetween1970AndReferenceDate)
        #expect(d.offset == -14_400)
        #expect(ExportValues.format(Date(timeIntervalSinceReferenceDate: d.seconds), offset: d.offset) == "2019-06-17 21:07:11 -0400")
        #expect(Self.date("2017-10-25 09:03:00 +0530")?.offset == 19_800)
        #expect(Self.date("2020-02-29 00:00:00 +0000")?.seconds == 1_582_934_400 - Date.timeIntervalBetween1970AndReferenceDate)
        #expect(Self.date("2019-06-18T01:07:11Z")?.seconds == d.seconds)
        #expect(Self.date("2019-06-17T21:07:11-04:00")?.seconds == d.seconds)
        #expect(Self.date("2019-06-18 01:07:11.250 +0000")?.seconds == d.seconds + 0.25)
        // Before 1970 and across a day boundary, printed back as written.
        let old = try #require(Self.date("1969-12-31 23:30:00 +0100"))
        #expect(old.seconds == -5400 - Date.timeIntervalBetween1970AndReferenceDate)
        #expect(ExportValues.format(Date(timeIntervalSinceReferenceDate: old.seconds), offset: old.offset) == "1969-12-31 23:30:00 +0100")
    }

    @Test(arguments: ["", "2019-06-17", "2019-13-01 00:00:00 +0000", "2019-02-29 00:00:00 +0000", "2019-06-17 24:00:00 +0000",
                      "2019-06-17 21:07:11 -04", "2019-06-17 21:07:11 +2500", "2019-06-17 21:07:11 -0400x", "٢٠١٩-06-17 21:07:11 +0000"])
    func notDates(_ text: String) {
        #expect(Self.date(text) == nil)
    }

    @Test func numbersAreCorrectlyRounded() {
        #expect(Self.number("72") == 72)
        #expect(Self.number("-0.5") == -0.5)
        #expect(Self.number("+3") == 3)
        #expect(Self.number("3.40897998046875") == 3.40897998046875)
        #expect(Self.number("0.1") == 0.1)
        #expect(Self.number("1e-05") == 1e-05)
        #expect(Self.number("1.7976931348623157e308") == 1.7976931348623157e308)
        // 17 significant digits take the slow path and still round correctly.
        #expect(Self.number("0.30000000000000004") == 0.30000000000000004)
        #expect(Self.number("123456789012345678") == 123456789012345680)  // the nearest double
        for bad in ["", "-", ".", "nan", "inf", "1e999", "1,5", "12 ", "0x10", "1..2"] {
            #expect(Self.number(bad) == nil, "\(bad)")
        }
    }

    @Test func devicesIntoTheirFields() {
        let watch = ExportValues.device("<<HKDevice: 0x283f5c6e0>, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch3,2, software:5.2.1>")
        #expect(watch.name == "Apple Watch")
        #expect(watch.manufacturer == "Apple Inc.")
        #expect(watch.model == "Watch")
        #expect(watch.hardwareVersion == "Watch3,2")
        #expect(watch.softwareVersion == "5.2.1")
        #expect(watch.firmwareVersion == nil)
        let scale = ExportValues.device("<<HKDevice: 0x1c0a7e180>, name:Withings, manufacturer:Withings, model:WBS02, localIdentifier:00:24:e4:aa:bb:cc, firmware:9.12>")
        #expect(scale.localIdentifier == "00:24:e4:aa:bb:cc")
        #expect(scale.firmwareVersion == "9.12")
        #expect(ExportValues.device("My scale").name == "My scale")
    }

    @Test func metadataValuesWithUnitsBecomeQuantities() throws {
        #expect(ExportValues.metadataValue("56 degF") == .quantity(try Quantity(56, unit: "degF")))
        #expect(ExportValues.metadataValue("96 %") == .quantity(try Quantity(96, unit: "%")))
        #expect(ExportValues.metadataValue("1") == .string("1"))
        #expect(ExportValues.metadataValue("Garmin Forerunner") == .string("Garmin Forerunner"))
        // Kept as text when the quantity would not print back exactly.
        #expect(ExportValues.metadataValue("56.0 degF") == .string("56.0 degF"))
        #expect(ExportValues.metadataValue("5 apples") == .string("5 apples"))
    }
}
