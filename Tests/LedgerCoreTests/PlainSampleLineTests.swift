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

    /// Seeded hostile shapes over every quantity type in its canonical unit: values ±0,
    /// ±(10^15 − 1), ±10^15, huge and subnormal; dates at the year-1 and year-9999 edges
    /// and around midnights before 1970, whole and not; bundle identifiers of 0–300
    /// bytes with non-ASCII letters, emoji, DEL, control characters, quotes and
    /// backslashes; a source version of up to 200 bytes; the sample read with its own
    /// source, none (its version still in the bytes) or another app's. Every line the
    /// fast writer accepts equals the field-by-field line; every refusal writes nothing.
    @Test func hostileShapesAgreeWithTheFieldByFieldLine() throws {
        let lo: Double = -62_135_596_800, hi: Double = 253_402_300_800
        var rng = SeededGenerator(seed: 77)
        func pick(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        func randomDate() -> Date {
            let t: Double
            switch pick(6) {
            case 0: t = [lo, lo + 1, lo + 2, hi - 1, hi - 2, hi - 86_400, -1, 0, -86_400, -86_401, -86_399, -0.5, 1.5, lo + 0.5][pick(14)]
            case 1: t = Double(Int64(bitPattern: rng.next()) % 4_000_000_000)
            case 2: t = Double(Int64(bitPattern: rng.next()) % 4_000_000_000) + 0.25
            default: t = lo + 1 + Double(rng.next() % UInt64(hi - lo - 2))
            }
            return Date(timeIntervalSince1970: t)
        }
        let alphabet = ["a", ".", "é", "日", "😀", "\u{7F}", "\u{1F}", "\"", "\\", "\u{0}", "x", "\u{80}", "/", "\n", "Z", "-", "\u{2028}"]
        let types = QuantityType.allTypes
        var written = 0, left = 0
        for i in 0..<20_000 {
            let type = types[pick(types.count)]
            let value: Double = [0.0, -0.0, 1, -1, 999_999_999_999_999, -999_999_999_999_999, 1e15, -1e15, 1e15 - 1, 3.5, -7,
                                 Double(Int64(bitPattern: rng.next()) % 1_000_000_000_000_000), 1e300, Double.leastNonzeroMagnitude][pick(14)]
            let start = randomDate()
            let end = pick(3) == 0 ? start : start.addingTimeInterval(Double(pick(100_000)))
            let length = pick(4) == 0 ? pick(300) : pick(40)
            var text = ""
            for _ in 0..<length { text += pick(3) == 0 ? alphabet[pick(alphabet.count)] : "c" }
            let bundle: String? = pick(5) == 0 ? nil : text
            let versions: [String?] = [nil, "1", "2.0 (41), beta", String(repeating: "v", count: pick(200))]
            let version = versions[pick(versions.count)]
            let saved = (bundle ?? "com.x").isEmpty ? nil : Source(bundleIdentifier: bundle ?? "com.x", name: "A", version: version)
            var metadata = Metadata()
            if pick(3) == 0 { metadata.append("HKWasUserEntered", .bool(true)) }
            let creation: Date? = pick(2) == 0 ? nil : randomDate()
            // Shapes the model refuses (a value out of the type's range, say) are not samples.
            guard let quantity = try? Quantity(value, type.canonicalUnit),
                  let common = try? SampleCommon(uuid: UUID(), startDate: start, endDate: end, metadata: metadata,
                                                 source: saved, creationDate: creation),
                  let q = try? QuantitySample(type: type, quantity: quantity, common: common, checkingRange: false) else { continue }
            let (payload, ranges) = PlainQuantityBytesTests.encoded([.quantity(q)])
            let reader: Source? = [saved, nil, bundle.map { Source(bundleIdentifier: $0, name: "B") }][pick(3)]
            guard let plain = PlainQuantityBytes.read(payload, ranges[0], typeCode: ObjectType.quantity(type).code,
                                                      source: reader) else { continue }
            var fast: [UInt8] = [1, 2], slow: [UInt8] = [1, 2]
            SampleJSONWriter.appendByField(plain, to: &slow)
            if PlainSampleLine.write(plain, to: &fast) {
                written += 1
                #expect(fast == slow, "\(i): \(String(decoding: fast, as: UTF8.self)) vs \(String(decoding: slow, as: UTF8.self))")
            } else {
                left += 1
                #expect(fast == [1, 2], "\(i): nothing written when it answers false")
            }
        }
        #expect(written > 2500 && left > 2500, "written \(written), left \(left)")
    }
}
