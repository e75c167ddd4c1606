import Foundation
import HealthModel
import Testing
import TestSupport

/// The byte readers ingest's flat lines use in place — `ISO8601.date(utf8:dayStartIn:)`
/// and `UUIDText.parse(utf8:)` — against the string readers they stand in for
/// (`ISO8601.parse(_:dayStartIn:)`, `ISO8601.parse(_:)`, `UUIDText.parse(_:)`): on
/// every text, the same date or UUID, and nil exactly where the string reader
/// refuses. Texts that are valid, odd and wrong, then each mutated byte by byte, seeded.
@Suite struct TextBytesReadingTests {
    static let zones: [TimeZone?] = [nil, TimeZone(identifier: "UTC"), TimeZone(identifier: "Pacific/Kiritimati"),
                                     TimeZone(identifier: "Pacific/Pago_Pago")]

    static let dates = [
        "2027-08-02T05:33:00Z", "2027-08-02", "2027-08-02T05:33:00+02:00", "2027-08-02T05:33:00-0230", "2027-08-02 05:33Z",
        "2027-08-02t05:33:00.123456z", "2027-08-02T05:33:00,5Z", "2027-08-02T05:33:60Z", "2027-08-02T05:33:61Z",
        "2027-02-29", "2028-02-29", "2027-13-02T05:33:00Z", "0001-01-01", "0001-01-01T00:00:00Z", "0000-12-31",
        "9999-12-31", "9999-12-31T23:59:59.999999Z", "9999-12-31T23:30:00-01:00", "0001-01-01T00:30:00+01:00",
        "2027-08-02T05:33:00", "2027-08-02T05:33:00.Z", "2027-08-02T24:00:00Z", "2027-08-02T05:33:00+24:00",
        "2027-08-02T05:33:00+23:59", "yesterday", "", "2027", "2027-08-02T", "2027-08-02T05:33:00ZZ", " 2027-08-02",
        "2027-08-02T05:33:00." + String(repeating: "1", count: 107) + "Z", "2027-08-02T05:33:00." + String(repeating: "1", count: 108) + "Z",
        "2027-08-02T05:33:00+02:0", "2027-08-02T05:33:00+2:00", "２027-08-02",
    ]

    static let uuids = [
        "00000007-0000-4000-8000-000000000000", "00000007-0000-4000-8000-00000000000d", "ABCDEF01-2345-6789-abcd-ef0123456789",
        "00000007-0000-4000-8000-00000000000G", "00000007-0000-4000-8000-0000000000000", "00000007-0000-4000-8000-00000000000",
        "00000007+0000-4000-8000-000000000000", "+0000007-0000-4000-8000-000000000000", "0x000007-0000-4000-8000-000000000000",
        "00000007-0000-4000-8000_000000000000", "", "not-a-uuid", "00000007-0000-4000-8000-00000000000é",
    ]

    static func checkDate(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        // The flat lines hand over valid UTF-8 only (their strings are ASCII); other
        // bytes would not be the text's, so the comparison is on texts that round-trip.
        guard Array(text.utf8) == bytes else { return }
        for zone in zones {
            let expected = zone.map { z in try? ISO8601.parse(text, dayStartIn: z) } ?? (try? ISO8601.parse(text))
            let read = ISO8601.date(utf8: bytes[...], dayStartIn: zone)
            #expect(read == expected, "'\(text)' in \(zone?.identifier ?? "no zone"): bytes \(String(describing: read)), text \(String(describing: expected))")
        }
    }

    static func checkUUID(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard Array(text.utf8) == bytes else { return }
        let read = UUIDText.parse(utf8: bytes[...])
        #expect(read == UUIDText.parse(text), "'\(text)'")
        // A slice that does not start at 0 reads the same.
        let padded = [0x22] + bytes + [0x22]
        #expect(UUIDText.parse(utf8: padded[1..<padded.count - 1]) == read, "'\(text)' in a slice")
    }

    @Test func datesReadTheSameFromBytesAsFromText() {
        for text in Self.dates { Self.checkDate(Array(text.utf8)) }
        // The valid ones are read (the test is not passing by refusing everything).
        #expect(ISO8601.date(utf8: Array("2027-08-02T05:33:00Z".utf8)[...], dayStartIn: nil)
                == Date(timeIntervalSince1970: 1_817_184_780))
    }

    @Test func uuidsReadTheSameFromBytesAsFromText() {
        for text in Self.uuids { Self.checkUUID(Array(text.utf8)) }
        #expect(UUIDText.parse(utf8: Array(Self.uuids[0].utf8)[...]) != nil)
    }

    @Test func mutatedTextsReadTheSameFromBytesAsFromText() {
        var random = SeededRandom(seed: 31)
        let alphabet = Array("0123456789-+:TZtz .,eE".utf8) + [0x00, 0x7F, 0xC3, 0xFF]
        for n in 0..<20_000 {
            let isDate = n % 2 == 0
            let source = isDate ? Self.dates : Self.uuids
            var bytes = Array(source[Int(random.next() % UInt64(source.count))].utf8)
            for _ in 0...(random.next() % 3) {
                let at = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
                let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
                switch random.next() % 3 {
                case 0 where !bytes.isEmpty: bytes[at] = byte
                case 1: bytes.insert(byte, at: at)
                default: if !bytes.isEmpty { bytes.remove(at: at) }
                }
            }
            if isDate { Self.checkDate(bytes) } else { Self.checkUUID(bytes) }
        }
    }
}
