import Foundation
import HealthModel
import LedgerReporting
import Testing

/// The byte-level readers on ingest's path: a JSON string without escapes
/// is taken as its bytes, duplicate names are found by comparison in small objects and
/// by hashing in large ones, and a UUID's text is read without `sscanf` — each giving
/// exactly what the general path gives, and refusing what it must.
struct JSONTextReadingTests {
    /// Plain strings (ASCII and not) read as they are written; invalid UTF-8 in a
    /// plain string is refused with its column, as in an escaped one.
    @Test func plainStringsAreTheirBytesAndInvalidUTF8IsRefused() throws {
        #expect(try JSONValue.parse(#"{"a":"plain","b":"café ☕","c":"tab\tand \"quote\""}"#)
                == .object([("a", .string("plain")), ("b", .string("café ☕")), ("c", .string("tab\tand \"quote\""))]))
        var bytes = Array(#"{"a":"ab"#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        expectRefusal(bytes, #"column 6 (in "a"): invalid UTF-8 in a string"#)
        // the same bytes behind an escape take the general path: the same refusal
        bytes = Array(#"{"a":"\nab"#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        expectRefusal(bytes, #"column 6 (in "a"): invalid UTF-8 in a string"#)
        // a control character ends the plain scan and is refused where it stands
        expectRefusal(Array("{\"a\":\"x\u{01}\"}".utf8), #"column 8 (in "a"): control character in a string (escape it)"#)
    }

    func expectRefusal(_ bytes: [UInt8], _ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let value = try JSONValue.parse(bytes[...])
            Issue.record("accepted as \(value)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.description == message, sourceLocation: sourceLocation)
        }
    }

    /// A duplicate name is refused with its column whether the object is small (names
    /// compared) or large (names hashed past sixteen), and 40 distinct names pass.
    @Test func duplicateNamesAreRefusedInSmallAndLargeObjects() throws {
        func object(_ names: [String]) -> String { "{" + names.map { "\"\($0)\":1" }.joined(separator: ",") + "}" }
        let distinct = (0..<40).map { "k\($0)" }
        guard case .object(let members) = try JSONValue.parse(object(distinct)) else { Issue.record("not an object"); return }
        #expect(members.map(\.0) == distinct)
        for count in [2, 16, 17, 30] {
            var names = (0..<count).map { "k\($0)" }
            names.append("k1")
            let text = object(names)
            let column = text.utf8.count - #""k1":1}"#.utf8.count + 1
            do {
                _ = try JSONValue.parse(text)
                Issue.record("a duplicate after \(count) names was accepted")
            } catch {
                #expect(error.description == "column \(column): duplicate member \"k1\"", "after \(count) names")
            }
        }
    }

    /// UUID text: every UUID Foundation writes (and its lower-case form) reads back as
    /// Foundation reads it; what `sscanf` let through there (a sign, a space, `0x`) and
    /// every malformed text is refused.
    @Test func uuidTextReadsWhatFoundationWritesAndNothingLoose() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var bytes = [UInt8](repeating: 0, count: 16)
            for i in 0..<16 { bytes[i] = UInt8.random(in: 0...255, using: &generator) }
            let uuid = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                   bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
            #expect(UUIDText.parse(uuid.uuidString) == uuid)
            #expect(UUIDText.parse(uuid.uuidString.lowercased()) == uuid)
            #expect(UUIDText.parse(uuid.uuidString) == UUID(uuidString: uuid.uuidString))
        }
        #expect(UUIDText.parse("00000007-0000-4000-8000-00000000000a") == UUID(uuidString: "00000007-0000-4000-8000-00000000000A"))
        for loose in [" 0000007-0000-4000-8000-000000000000", "+0000007-0000-4000-8000-000000000000",
                      "-0000007-0000-4000-8000-000000000000", "0x000007-0000-4000-8000-000000000000"] {
            #expect(UUID(uuidString: loose) != nil, "Foundation's reading, for the record: \(loose)")
            #expect(UUIDText.parse(loose) == nil, "\(loose)")
        }
        for bad in ["", "00000007-0000-4000-8000-00000000000", "00000007-0000-4000-8000-0000000000000",
                    "00000007-0000-4000-8000-00000000000g", "00000007_0000-4000-8000-000000000000",
                    "000000070-000-4000-8000-000000000000", "00000007-0000-4000-8000-00000000000é",
                    "{0000007-0000-4000-8000-000000000000}"] {
            #expect(UUIDText.parse(bad) == nil, "\(bad)")
        }
    }
}
