import Foundation
import HealthModel
import LedgerReporting
import Testing
import TestSupport

/// `SampleJSONReader.flatSample` (ingest's fast path) against the tree reader it
/// stands in for (`JSONValue.parse` + `SampleJSONReader.sample`): on every line, the
/// fast path either answers nothing or gives exactly the tree reader's sample — and
/// answers nothing wherever the tree reader refuses, so that every refusal keeps its
/// one error. Lines built from pieces that are valid, odd and wrong, then every
/// line mutated byte by byte, seeded.
@Suite struct FlatSampleLineTests {
    static let zones: [TimeZone?] = [nil, TimeZone(identifier: "Pacific/Honolulu")]

    /// The tree reader's sample, or nil when it refuses.
    static func tree(_ line: [UInt8], zone: TimeZone?) -> Sample? {
        guard let value = try? JSONValue.parse(line[...]) else { return nil }
        return try? SampleJSONReader.sample(value, zone: zone)
    }

    /// `sample` with `uuid` in place of its own (lines without a uuid get a random one).
    static func withUUID(_ sample: Sample, _ uuid: UUID) -> Sample {
        switch sample {
        case .quantity(let q):
            return .quantity(try! QuantitySample(type: q.type, quantity: q.quantity, start: q.startDate, end: q.endDate, uuid: uuid,
                                                 metadata: q.metadata, device: q.device))
        case .category(let c):
            return .category(try! CategorySample(type: c.type, value: c.value, start: c.startDate, end: c.endDate, uuid: uuid,
                                                 metadata: c.metadata, device: c.device))
        default: return sample
        }
    }

    /// Checks one line; returns whether the fast path answered.
    @discardableResult
    static func check(_ line: [UInt8], zone: TimeZone?) -> Bool {
        let fast = SampleJSONReader.flatSample(line[...], zone: zone)
        let slow = tree(line, zone: zone)
        guard let fast else { return false }
        guard let slow else {
            Issue.record("the fast path read a line the tree reader refuses: \(String(decoding: line, as: UTF8.self))")
            return true
        }
        let same = fast == slow || withUUID(fast, slow.uuid) == slow
        #expect(same, "\(String(decoding: line, as: UTF8.self)): fast \(fast), tree \(slow)")
        return true
    }

    static let pieces: [[String]] = [
        [#""type":"stepCount""#, #""type":"bodyMass""#, #""type":"heartRate""#, #""type":"sleepAnalysis""#,
         #""type":"HKQuantityTypeIdentifierStepCount""#, #""type":"workout""#, #""type":"noSuchType""#, #""type":3"#, #""type":null"#,
         #""type":"step\u0043ount""#],
        [#""value":3235"#, #""value":-0"#, #""value":1.5"#, #""value":1e3"#, #""value":1E+3"#, #""value":01"#, #""value":1."#,
         #""value":72.25"#, #""value":1e400"#, #""value":"3235""#, #""value":"asleepCore""#, #""value":"HKCategoryValueSleepAnalysisInBed""#,
         #""value":2"#, #""value":2.0"#, #""value":"2""#, #""value":true"#, #""value":-5"#],
        [#""unit":"count""#, #""unit":"kg""#, #""unit":"count/min""#, #""unit":"lb""#, #""unit":"furlong""#, #""unit":7"#, ""],
        [#""start":"2027-08-02T05:33:00Z""#, #""start":"2027-08-02""#, #""start":"2027-08-02T05:33:00+02:00""#,
         #""start":"2027-13-02T05:33:00Z""#, #""start":"yesterday""#],
        [#""end":"2027-08-02T05:38:00Z""#, #""end":"2027-08-01T05:38:00Z""#, #""end":"2027-08-03""#, ""],
        [#""uuid":"00000007-0000-4000-8000-000000000000""#, #""uuid":"not-a-uuid""#, #""uuid":"00000007-0000-4000-8000-00000000000G""#, ""],
        ["", "", "", #""metadata":{}"#, #""metadata":{"HKWasUserEntered":true}"#, #""device":{"name":"Watch"}"#, #""foo":1"#,
         #""type":"stepCount""#, #""unit":"count""#] + Self.metadataPieces,
    ]

    /// Metadata objects the fast path reads (plain names; strings, numbers, true,
    /// false; at most four members) and ones it leaves to the tree reader (a sync key,
    /// a duplicate name, an escape, null, an array, an object, five members, a number
    /// beyond a Double) or that the tree reader refuses.
    static let metadataPieces = [
        #""metadata":{"HKWasUserEntered":false}"#, #""metadata":{"HKWasUserEntered":1}"#, #""metadata":{"HKWasUserEntered":2}"#,
        #""metadata":{"HKWasUserEntered":"yes"}"#, #""metadata":{ "note" : "a b" , "n" : 3 , "x" : 1.5 , "e" : -0 }"#,
        #""metadata":{"big":12345678901234567890,"neg":-9223372036854775808,"exp":1e2}"#, #""metadata":{"k":1e400}"#,
        #""metadata":{"a":1,"a":2}"#, #""metadata":{"HKMetadataKeySyncIdentifier":"s","HKMetadataKeySyncVersion":1}"#,
        #""metadata":{"HKMetadataKeySyncIdentifier":"s"}"#, #""metadata":{"k":null}"#, #""metadata":{"k":[1]}"#,
        #""metadata":{"k":{"a":1}}"#, #""metadata":{"k":"é"}"#, #""metadata":{"a":1,"b":2,"c":3,"d":4,"e":5}"#,
        #""metadata":{"a":true,"b":false,"c":"x","d":0}"#, #""metadata":{"HKFoo":1}"#, #""metadata":{"":1}"#,
        #""metadata":{"k":tru}"#, #""metadata":{"k":falsey}"#, #""metadata":{"k":01}"#, #""metadata":{"k":"v",}"#,
        #""metadata":{"HKTimeZone":"Europe/Paris"}"#, #""metadata":[]"#, #""metadata":"x""#, #""metadata":{"#,
    ]

    @Test func everyCombinationOfPiecesReadsAsTheTreeReaderReadsIt() {
        var random = SeededRandom(seed: 29)
        var answered = 0
        let separators = [",", ", ", " ,", ",\t"]
        for n in 0..<20_000 {
            var members = Self.pieces.map { $0[Int(random.next() % UInt64($0.count))] }.filter { !$0.isEmpty }
            if n % 3 == 0 { members.shuffle(using: &random) }
            let separator = separators[n % separators.count]
            let open = n % 5 == 0 ? "{ " : "{", close = n % 7 == 0 ? " }\r" : "}"
            let line = Array((open + members.joined(separator: separator) + close).utf8)
            for zone in Self.zones where Self.check(line, zone: zone) { answered += 1 }
        }
        // The common lines are read fast: the test is not passing by answering nothing.
        #expect(answered >= 100, "the fast path answered \(answered) of 40000")
    }

    @Test func everyWellFormedLineIsReadFastAsTheTreeReaderReadsIt() {
        // Every combination of valid fields, in two orders and two spacings: each one
        // read fast, and exactly as the tree reader reads it.
        var total = 0, answered = 0
        let kinds = [(#""type":"stepCount""#, [#""value":3235"#, #""value":1.5"#, #""value":1e3"#, #""value":0"#], [#""unit":"count""#]),
                     (#""type":"bodyMass""#, [#""value":72.25"#, #""value":7.2E+1"#], [#""unit":"kg""#, #""unit":"lb""#]),
                     (#""type":"heartRate""#, [#""value":61"#], [#""unit":"count/min""#]),
                     (#""type":"sleepAnalysis""#, [#""value":"asleepCore""#, #""value":2"#, #""value":"HKCategoryValueSleepAnalysisInBed""#], [""])]
        let starts = [#""start":"2027-08-02T05:33:00Z""#, #""start":"2027-08-02""#, #""start":"2027-08-02T05:33:00+02:00""#]
        let ends = [#""end":"2027-08-03T05:38:00Z""#, ""]
        let uuids = [#""uuid":"00000007-0000-4000-8000-00000000ABCD""#, ""]
        for (type, values, units) in kinds {
            for value in values { for unit in units { for start in starts { for end in ends { for uuid in uuids {
                for reversed in [false, true] { for separator in [",", " , "] {
                    var members = [type, value, unit, start, end, uuid].filter { !$0.isEmpty }
                    if reversed { members.reverse() }
                    let line = Array(("{" + members.joined(separator: separator) + "}").utf8)
                    for zone in Self.zones {
                        total += 1
                        if Self.check(line, zone: zone) { answered += 1 }
                    }
                }}
            }}}}}
        }
        #expect(total == 1152)
        #expect(answered == total)
    }

    @Test func everyLineMutatedByteByByteReadsAsTheTreeReaderReadsIt() {
        var random = SeededRandom(seed: 31)
        let lines = [
            #"{"type":"stepCount","value":3235,"unit":"count","start":"2027-08-02T05:33:00Z","end":"2027-08-02T05:38:00Z","uuid":"00000007-0000-4000-8000-000000000000"}"#,
            #"{"type":"sleepAnalysis","value":"asleepCore","start":"2027-08-02","end":"2027-08-03","uuid":"00000007-0000-4000-8000-000000000001"}"#,
            #"{ "type" : "bodyMass" , "value" : 72.5 , "unit" : "kg" , "start" : "2027-08-02T05:33:00+02:00" }"#,
        ].map { Array($0.utf8) }
        var answered = 0
        let alphabet = Array(#"{}[]:,"\ 0123456789.eE+-atrufnlkgcoZT"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xFF]
        for _ in 0..<20_000 {
            var line = lines[Int(random.next() % UInt64(lines.count))]
            for _ in 0..<(1 + Int(random.next() % 3)) {
                let at = Int(random.next() % UInt64(line.count))
                let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
                switch random.next() % 3 {
                case 0: line[at] = byte
                case 1: line.insert(byte, at: at)
                default: line.remove(at: at)
                }
                if line.isEmpty { line = [0x7B] }
            }
            for zone in Self.zones where Self.check(line, zone: zone) { answered += 1 }
        }
        #expect(answered >= 900, "the fast path answered \(answered) of 40000")
    }

    @Test func everyMetadataObjectReadsAsTheTreeReaderReadsIt() {
        // The benchmark's line with each metadata piece, then mutated byte by byte:
        // the well-formed plain ones are read fast, and every answer is the tree's.
        let head = #"{"type":"stepCount","value":1759,"unit":"count","start":"2025-06-18T22:25:00Z","end":"2025-06-18T22:42:00Z","#
        let readFast: Set = [
            #""metadata":{}"#, #""metadata":{"HKWasUserEntered":true}"#, #""metadata":{"HKWasUserEntered":false}"#,
            #""metadata":{"HKWasUserEntered":1}"#, #""metadata":{ "note" : "a b" , "n" : 3 , "x" : 1.5 , "e" : -0 }"#,
            #""metadata":{"big":12345678901234567890,"neg":-9223372036854775808,"exp":1e2}"#,
            #""metadata":{"a":true,"b":false,"c":"x","d":0}"#, #""metadata":{"HKTimeZone":"Europe/Paris"}"#,
        ]
        let leftToTheTree: Set = [
            #""metadata":{"k":1e400}"#, #""metadata":{"a":1,"a":2}"#,
            #""metadata":{"HKMetadataKeySyncIdentifier":"s","HKMetadataKeySyncVersion":1}"#,
            #""metadata":{"HKMetadataKeySyncIdentifier":"s"}"#, #""metadata":{"k":null}"#, #""metadata":{"k":[1]}"#,
            #""metadata":{"k":{"a":1}}"#, #""metadata":{"k":"\u00e9"}"#, #""metadata":{"a":1,"b":2,"c":3,"d":4,"e":5}"#,
            #""metadata":{"k":tru}"#, #""metadata":{"k":falsey}"#, #""metadata":{"k":01}"#, #""metadata":{"k":"v",}"#,
            #""metadata":[]"#, #""metadata":"x""#, #""metadata":{"#,
        ]
        for piece in Set(Self.metadataPieces).union(readFast) {
            let line = Array((head + piece + "}").utf8)
            for zone in Self.zones {
                let answered = Self.check(line, zone: zone)
                if readFast.contains(piece) { #expect(answered, "\(piece) is read fast") }
                if leftToTheTree.contains(piece) { #expect(!answered, "\(piece) is left to the tree reader") }
            }
        }
        var random = SeededRandom(seed: 37)
        let alphabet = Array(#"{}[]:,"\ 0123456789.eE+-atrufnlsHK"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xFF]
        let lines = [#""metadata":{"HKWasUserEntered":true,"note":"a b","n":-12,"x":1.5e-3}"#, #""metadata":{"k":false}"#]
            .map { Array((head + $0 + "}").utf8) }
        var mutatedAnswered = 0
        for _ in 0..<20_000 {
            var line = lines[Int(random.next() % UInt64(lines.count))]
            for _ in 0..<(1 + Int(random.next() % 3)) {
                // Mostly inside the metadata object, where the new reading is.
                let at = random.next() % 4 == 0 ? Int(random.next() % UInt64(line.count))
                                                : head.utf8.count + Int(random.next() % UInt64(line.count - head.utf8.count))
                let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
                switch random.next() % 3 {
                case 0: line[at] = byte
                case 1: line.insert(byte, at: at)
                default: line.remove(at: at)
                }
                if line.isEmpty { line = [0x7B] }
            }
            if Self.check(line, zone: nil) { mutatedAnswered += 1 }
        }
        #expect(mutatedAnswered >= 900, "the fast path answered \(mutatedAnswered) of 20000")
    }

    @Test func theBenchmarksLineIsReadFastAndExactly() throws {
        let line = Array(#"{"type":"stepCount","value":3235,"unit":"count","start":"2027-08-02T05:33:00Z","end":"2027-08-02T05:38:00Z","uuid":"00000007-0000-4000-8000-000000000000"}"#.utf8)
        let sample = try #require(SampleJSONReader.flatSample(line[...]))
        guard case .quantity(let q) = sample else { Issue.record("not a quantity: \(sample)"); return }
        #expect(q.type == .stepCount && q.quantity.value == 3235 && q.quantity.unit.spelling == "count")
        #expect(q.startDate == Date(timeIntervalSince1970: 1_817_184_780) && q.endDate == Date(timeIntervalSince1970: 1_817_185_080))
        #expect(q.uuid.uuidString == "00000007-0000-4000-8000-000000000000" && q.metadata.isEmpty && q.device == nil)
    }
}
