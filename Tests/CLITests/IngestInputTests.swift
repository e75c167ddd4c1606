import Foundation
import LedgerReporting
import Testing
import TestSupport
@testable import healthledger

/// `ingest`'s input: strict JSON (RFC 8259) and strictly typed fields, one message
/// per kind of error naming the line and the field; a refused line appends nothing
/// of its batch and leaves the ledger byte for byte as it was.
struct IngestInputTests {
    static let start = "\"start\":\"2026-02-02T08:00:00Z\""

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let line: String
        let message: String
        var testDescription: String { name }
    }

    static let refusals: [Case] = [
        Case(name: "metadata a string", line: "{\"type\":\"bodyMass\",\"value\":70,\"unit\":\"kg\",\(start),\"metadata\":\"str\"}",
             message: "wrongType: \"metadata\" must be an object, not a string"),
        Case(name: "device a string", line: "{\"type\":\"bodyMass\",\"value\":70,\"unit\":\"kg\",\(start),\"device\":\"x\"}",
             message: "wrongType: \"device\" must be an object, not a string"),
        Case(name: "duplicate key", line: "{\"type\":\"bodyMass\",\"value\":70,\"value\":71,\"unit\":\"kg\",\(start)}",
             message: "invalidJSON: column 31: duplicate member \"value\""),
        Case(name: "leading zero", line: "{\"type\":\"bodyMass\",\"value\":072,\"unit\":\"kg\",\(start)}",
             message: "invalidJSON: column 28 (in \"value\"): leading zero in a number"),
        Case(name: "plus sign", line: "{\"type\":\"bodyMass\",\"value\":+72,\"unit\":\"kg\",\(start)}",
             message: "invalidJSON: column 28 (in \"value\"): a number may not start with '+'"),
        Case(name: "number in a string", line: "{\"type\":\"bodyMass\",\"value\":\"72\",\"unit\":\"kg\",\(start)}",
             message: "wrongType: \"value\" must be a number for HKQuantityTypeIdentifierBodyMass, not a string"),
        Case(name: "value a boolean", line: "{\"type\":\"bodyMass\",\"value\":true,\"unit\":\"kg\",\(start)}",
             message: "wrongType: \"value\" must be a number for HKQuantityTypeIdentifierBodyMass, not a boolean"),
        Case(name: "type a number", line: "{\"type\":42,\"value\":70,\"unit\":\"kg\",\(start)}",
             message: "wrongType: \"type\" must be a string, not a number"),
        Case(name: "unit a number", line: "{\"type\":\"bodyMass\",\"value\":70,\"unit\":1,\(start)}",
             message: "wrongType: \"unit\" must be a string, not a number"),
        Case(name: "value missing", line: "{\"type\":\"bodyMass\",\"unit\":\"kg\",\(start)}",
             message: "missingField: \"value\""),
        Case(name: "value null", line: "{\"type\":\"bodyMass\",\"value\":null,\"unit\":\"kg\",\(start)}",
             message: "wrongType: \"value\" must be a number for HKQuantityTypeIdentifierBodyMass, not null"),
        Case(name: "out of range", line: "{\"type\":\"bodyMass\",\"value\":1e309,\"unit\":\"kg\",\(start)}",
             message: "invalidJSON: column 28 (in \"value\"): number out of range (beyond ±1.8e308)"),
        Case(name: "sync identifier without version",
             line: "{\"type\":\"bodyMass\",\"value\":70,\"unit\":\"kg\",\(start),\"metadata\":{\"HKMetadataKeySyncIdentifier\":\"s\"}}",
             message: "missingField: \"metadata \"HKMetadataKeySyncVersion\"\" (HKMetadataKeySyncIdentifier needs it)"),
        Case(name: "sync version a string",
             line: "{\"type\":\"bodyMass\",\"value\":70,\"unit\":\"kg\",\(start),\"metadata\":{\"HKMetadataKeySyncIdentifier\":\"s\",\"HKMetadataKeySyncVersion\":\"2\"}}",
             message: "wrongType: metadata \"HKMetadataKeySyncVersion\" must be a whole number, not a string"),
        Case(name: "sync version not whole",
             line: "{\"type\":\"bodyMass\",\"value\":70,\"unit\":\"kg\",\(start),\"metadata\":{\"HKMetadataKeySyncIdentifier\":\"s\",\"HKMetadataKeySyncVersion\":2.0}}",
             message: "invalidSyncVersion: metadata \"HKMetadataKeySyncVersion\" must be a whole number in the 64-bit range, not 2.0"),
        Case(name: "unknown field", line: "{\"type\":\"bodyMass\",\"value\":70,\"unit\":\"kg\",\(start),\"metdata\":{}}",
             message: "unknownField: \"metdata\" (fields: type, value, unit, start, end, uuid, metadata, device)"),
        Case(name: "unknown device field", line: "{\"type\":\"bodyMass\",\"value\":70,\"unit\":\"kg\",\(start),\"device\":{\"colour\":\"red\"}}",
             message: "unknownField: device \"colour\" (fields: name, manufacturer, model, hardwareVersion, firmwareVersion, softwareVersion, localIdentifier, udiDeviceIdentifier)"),
        Case(name: "category value in a string", line: "{\"type\":\"sleepAnalysis\",\"value\":\"1\",\(start)}",
             message: "wrongType: \"value\" \"1\" is a number in a string; give a value name or a JSON number (HKCategoryTypeIdentifierSleepAnalysis)"),
        Case(name: "unit on a category", line: "{\"type\":\"sleepAnalysis\",\"value\":1,\"unit\":\"kg\",\(start)}",
             message: "unexpectedField: \"unit\" is for quantity types; HKCategoryTypeIdentifierSleepAnalysis is a category type"),
        Case(name: "trailing garbage", line: "{\"type\":\"bodyMass\",\"value\":70,\"unit\":\"kg\",\(start)} x",
             message: "invalidJSON: column 75: unexpected text after the value"),
        Case(name: "raw control character", line: "{\"type\":\"body\u{01}Mass\",\"value\":70,\"unit\":\"kg\",\(start)}",
             message: "invalidJSON: column 14 (in \"type\"): control character in a string (escape it)"),
        Case(name: "lone surrogate", line: "{\"type\":\"bodyMass\\ud800\",\"value\":70,\"unit\":\"kg\",\(start)}",
             message: "invalidJSON: column 18 (in \"type\"): lone surrogate in a \\u escape"),
        Case(name: "too deep", line: String(repeating: "[", count: 65) + String(repeating: "]", count: 65),
             message: "invalidJSON: column 65: nested deeper than 64 levels"),
        Case(name: "not an object", line: "[1]", message: "wrongType: a line must be a JSON object, not an array"),
    ]

    @Test(arguments: refusals)
    func aRefusedLineLeavesTheLedgerUnchanged(_ c: Case) throws {
        let dir = try StoreCommandTests.prepared()
        let before = try StoreCommandTests.contents(dir)
        let good = "{\"type\":\"bodyMass\",\"value\":71,\"unit\":\"kg\",\"start\":\"2026-02-03T08:00:00Z\"}"
        let r = try CLIRunner.run(["--ledger", dir.path, "ingest", "--app", "com.example.scale"], stdin: good + "\n" + c.line + "\n")
        #expect(r.status == 3)
        #expect(r.stderr == "healthledger: line 2: \(c.message); lines 1-2 were not appended\n")
        #expect(r.stdout == "")
        #expect(try StoreCommandTests.contents(dir) == before, "the ledger changed")
    }

    /// A line longer than 64 MiB is refused before it exhausts memory.
    @Test(.tags(.sweep), .disabled(if: Sweeps.leftOut, Sweeps.reason)) func aLineTooLongIsRefused() throws {
        let dir = try StoreCommandTests.prepared()
        let before = try StoreCommandTests.contents(dir)
        let good = "{\"type\":\"bodyMass\",\"value\":71,\"unit\":\"kg\",\"start\":\"2026-02-03T08:00:00Z\"}"
        let huge = "{\"type\":\"" + String(repeating: "x", count: (64 << 20) + 10)
        let r = try CLIRunner.run(["--ledger", dir.path, "ingest", "--app", "com.example.scale"], stdin: good + "\n" + huge)
        #expect(r.status == 3)
        #expect(r.stderr == "healthledger: line 2: lineTooLong: no newline within 64 MiB; lines 1-2 were not appended\n")
        #expect(try StoreCommandTests.contents(dir) == before)
    }

    /// The same refusals in process, so their messages are pinned without a ledger.
    @Test(arguments: refusals)
    func theSameRefusalInProcess(_ c: Case) throws {
        #expect(IngestInputTests.refusal(c.line) == c.message)
    }

    /// The message `ingest` gives for one line, or nil when it is accepted.
    static func refusal(_ line: String) -> String? {
        do {
            _ = try IngestCommand.sample(try JSONValue.parse(line))
            return nil
        } catch let e as JSONValue.ParseError {
            return "invalidJSON: \(e)"
        } catch {
            return describe(error).message
        }
    }

    @Test func validJSONIsAccepted() throws {
        let accepted = [
            "{\"type\":\"bodyTemperature\",\"value\":-0.5e-2,\"unit\":\"degC\",\(Self.start)}",
            "{\"type\":\"stepCount\",\"value\":0,\"unit\":\"count\",\(Self.start)}",
            " {\"type\":\"bodyMass\" , \"value\" : 7E+1 ,\"unit\":\"kg\",\(Self.start)}\t\r",
            "{\"type\":\"bodyMass\",\"value\":70,\"unit\":\"kg\",\(Self.start),\"metadata\":{\"n\\u00e9\\ud83d\\ude00\":\"\\u0041\\/\"}}",
            "{\"type\":\"sleepAnalysis\",\"value\":\"asleepCore\",\(Self.start)}",
            "{\"type\":\"sleepAnalysis\",\"value\":1,\(Self.start)}",
            "{\"type\":\"bodyMass\",\"value\":70,\"unit\":\"kg\",\(Self.start),\"metadata\":{\"HKMetadataKeySyncIdentifier\":\"s\",\"HKMetadataKeySyncVersion\":3}}",
        ]
        for line in accepted { #expect(Self.refusal(line) == nil, "\(line)") }
        let v = try JSONValue.parse("{\"a\":[1,2.5,\"x\",true,false,null,{}]}")
        #expect(v == .object([("a", .array([.number(1, text: "1"), .number(2.5, text: "2.5"), .string("x"), .bool(true), .bool(false), .null, .object([])]))]))
        let deepest = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try JSONValue.parse(deepest) }
    }

    @Test func malformedJSONHasOneMessagePerKind() {
        let cases: [(String, String)] = [
            ("", "column 1: unexpected end of line"),
            ("{\"a\":1", "column 7: unexpected end of line"),
            ("{\"a\":1,}", "column 8: expected a member name in double quotes"),
            ("{\"a\" 1}", "column 6: expected : after a member name"),
            ("{\"a\":1 \"b\":2}", "column 8: expected , or }"),
            ("[1 2]", "column 4: expected , or ]"),
            ("{\"a\":tru}", "column 6 (in \"a\"): invalid literal (true, false or null)"),
            ("{\"a\":.5}", "column 6 (in \"a\"): a number must start with a digit"),
            ("{\"a\":1.}", "column 8 (in \"a\"): expected a digit after '.'"),
            ("{\"a\":1e}", "column 8 (in \"a\"): expected a digit in the exponent"),
            ("{\"a\":-}", "column 7 (in \"a\"): expected a digit"),
            ("{\"a\":\"x\\q\"}", "column 8 (in \"a\"): invalid escape (\\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX)"),
            ("{\"a\":\"\\u12g4\"}", "column 7 (in \"a\"): invalid \\u escape (four hex digits)"),
            ("{\"a\":\"\\udc00\"}", "column 7 (in \"a\"): lone surrogate in a \\u escape"),
            ("{\"a\":\"\\ud800\\u0041\"}", "column 7 (in \"a\"): lone surrogate in a \\u escape"),
            ("{\"a\":\"x", "column 8 (in \"a\"): unterminated string"),
            ("{\"a\":{\"b\":NaN}}", "column 11 (in \"a\".\"b\"): expected a value"),
            ("\u{FEFF}{}", "column 1: expected a value"),
        ]
        for (text, message) in cases {
            #expect(throws: JSONValue.ParseError.self, "\(text)") { try JSONValue.parse(text) }
            do { _ = try JSONValue.parse(text) } catch { #expect(error.description == message, "\(text)") }
        }
        // Invalid UTF-8 inside a string (a lone continuation byte).
        let bytes: [UInt8] = Array("{\"a\":\"".utf8) + [0x80] + Array("\"}".utf8)
        do { _ = try JSONValue.parse(ArraySlice(bytes)); Issue.record("accepted") } catch {
            #expect(error.description == "column 6 (in \"a\"): invalid UTF-8 in a string")
        }
    }
}
