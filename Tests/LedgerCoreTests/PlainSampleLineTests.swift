import Foundation
import Testing
import HealthModel
@testable import LedgerCore
@testable import LedgerReporting
import TestSupport

/// `PlainSampleLine` writes the common line of a sample read in place through a raw
/// cursor: exactly the bytes the field-by-field writer (`SampleJSONWriter.appendByField`)
/// writes, or nothing at all (answering false) for a line it leaves to that writer.
struct PlainSampleLineTests {
    /// A sample of seeded random shape: values whole and not, small and huge; dates on
    /// whole seconds and not, before 1970 and near year 9999; with and without a
    /// creation date, a source, a source version, metadata; a bundle identifier that
    /// JSON must escape, and one too long for the line's buffer.
    static func sample(_ i: Int, _ rng: inout SeededGenerator) throws -> (Sample, Source?) {
        /// One of `common` four times in five, else one of `odd`.
        func pick<T>(_ common: [T], _ odd: [T], _ rng: inout SeededGenerator) -> T {
            rng.next() % 5 != 0 ? common[Int(rng.next() % UInt64(common.count))] : odd[Int(rng.next() % UInt64(odd.count))]
        }
        let value = pick([0, 1, 3005, 999_999_999_999_999], [12.5, 0.1, 1e15, 1e16, 123_456_789.25, 7e-7], &rng)
        let start = date(pick(["2026-03-01T10:00:00Z", "1969-12-31T23:59:59Z", "0001-01-01T00:00:01Z", "9999-12-30T00:00:00Z",
                               "2000-02-29T12:34:56Z"], ["1970-01-01T00:00:00.5Z", "0001-01-01T00:00:00Z"], &rng))
        let end = start.addingTimeInterval(pick([0, 1, 86_400], [59.5, 0.25], &rng))
        let bundle: String? = pick([nil, "com.example.app", "com.apple.health.7F3A"],
                                   ["com.example.\"quoted\"", String(repeating: "x", count: 300)], &rng)
        let versions: [String?] = [nil, "2.0 (41), beta", "1"]
        let source = bundle.map { Source(bundleIdentifier: $0, name: "App", version: versions[Int(rng.next() % 3)]) }
        var metadata = Metadata()
        if rng.next() % 3 == 0 { metadata.append("HKWasUserEntered", .bool(true)) }
        if rng.next() % 5 == 0 { metadata.append("n", .integer(-42)) }
        let creation: Date? = pick([nil, start], [start.addingTimeInterval(0.75)], &rng)
        let quantity = try Quantity(value, unit: "count")
        let common = try SampleCommon(uuid: fixedUUID(i), startDate: start, endDate: end, metadata: metadata, source: source,
                                      creationDate: creation)
        return (.quantity(try QuantitySample(type: .stepCount, quantity: quantity, common: common, checkingRange: false)), source)
    }

    @Test func everyLineIsTheFieldByFieldLineOrLeftToIt() throws {
        var rng = SeededGenerator(seed: 31)
        let code = ObjectType.quantity(.stepCount).code
        var samples: [Sample] = [], sources: [Source?] = []
        for i in 0..<3000 {
            let (s, source) = try Self.sample(i, &rng)
            samples.append(s)
            sources.append(source)
        }
        let (payload, ranges) = PlainQuantityBytesTests.encoded(samples)
        var written = 0, left = 0, withMetadata = 0
        var leftFor: Set<String> = []
        for (i, range) in ranges.enumerated() {
            let plain = try #require(PlainQuantityBytes.read(payload, range, typeCode: code, source: sources[i]), "sample \(i)")
            var fast: [UInt8] = Array("prefix,".utf8), slow: [UInt8] = Array("prefix,".utf8)
            SampleJSONWriter.appendByField(plain, to: &slow)
            if PlainSampleLine.write(plain, to: &fast) {
                #expect(fast == slow, "sample \(i): \(String(decoding: fast, as: UTF8.self))")
                written += 1
                if plain.metadataCount > 0 { withMetadata += 1 }
            } else {
                #expect(fast == Array("prefix,".utf8), "sample \(i): nothing written when it answers false")
                left += 1
                let c = samples[i].common
                if case .quantity(let q) = samples[i], q.quantity.value != q.quantity.value.rounded() || abs(q.quantity.value) >= 1e15 {
                    leftFor.insert("value")
                } else if ([c.startDate, c.endDate] + (c.creationDate.map { [$0] } ?? [])).contains(where: { d in
                    // `SampleJSONWriter.date`'s own rule: whole seconds strictly inside years 1…9999
                    let t = d.timeIntervalSince1970
                    return t != t.rounded(.down) || t <= -62_135_596_800 || t >= 253_402_300_800
                }) {
                    leftFor.insert("date")
                } else if c.source?.bundleIdentifier.contains("\"") == true {
                    leftFor.insert("escape")
                } else if (c.source?.bundleIdentifier.utf8.count ?? 0) > 200 {
                    leftFor.insert("length")
                } else {
                    Issue.record("sample \(i) left to the field-by-field writer for no reason: \(String(decoding: slow, as: UTF8.self))")
                }
            }
            // Through the public door, the same line either way.
            var line: [UInt8] = []
            SampleJSONWriter.append(plain, to: &line)
            #expect(line == Array(slow.dropFirst(7)), "sample \(i)")
        }
        #expect(written > 500 && withMetadata > 100 && left > 500, "written \(written), with metadata \(withMetadata), left \(left)")
        #expect(leftFor == ["value", "date", "escape", "length"])
    }

    /// A line spelled out, with a negative whole value, a source version and metadata.
    @Test func aLineSpelledOut() throws {
        let t = date("1969-07-20T20:17:40Z")
        let source = Source(bundleIdentifier: "com.example.app", name: "App", version: "1.2")
        let sample = Sample.quantity(try QuantitySample(type: .stepCount, quantity: try Quantity(-12, unit: "count"),
                                                        common: try SampleCommon(uuid: fixedUUID(7), startDate: t,
                                                                                 endDate: t.addingTimeInterval(3661),
                                                                                 metadata: ["HKWasUserEntered": .bool(true)],
                                                                                 source: source, creationDate: t),
                                                        checkingRange: false))
        let (payload, ranges) = PlainQuantityBytesTests.encoded([sample])
        let plain = try #require(PlainQuantityBytes.read(payload, ranges[0], typeCode: ObjectType.quantity(.stepCount).code,
                                                         source: source))
        var line: [UInt8] = []
        #expect(PlainSampleLine.write(plain, to: &line))
        #expect(String(decoding: line, as: UTF8.self) == #"{"uuid":"00000000-0000-4000-8000-000000000007","type":"HKQuantityTypeIdentifierStepCount","kind":"quantity","value":-12,"unit":"count","start":"1969-07-20T20:17:40Z","end":"1969-07-20T21:18:41Z","source":"com.example.app","sourceVersion":"1.2","creationDate":"1969-07-20T20:17:40Z","metadata":{"HKWasUserEntered":true}}"#)
    }
}
