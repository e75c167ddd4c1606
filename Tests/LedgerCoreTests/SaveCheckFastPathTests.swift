import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import TestSupport

/// Replay checks each save with `EventCodec.checkSave`, which shows a common-shape
/// quantity sample valid in place (`PlainQuantityBytes.provesValid`) and decodes any
/// other in full. The one definition of a valid event must not move: for every byte of
/// a save flipped, every cut, both save versions, with and without a source, and with
/// the memos carried from save to save as replay carries them, `checkSave` accepts
/// exactly what the full decoder accepts and throws exactly its error.
struct SaveCheckFastPathTests {
    static let source = Source(bundleIdentifier: "com.example.app", name: "Example", version: "2.0 (41)")

    /// Samples of the common shape: plain, with metadata of every plain kind, with a
    /// sync identity, a creation date, written offsets, a source version, a replaced UUID.
    static func commonSamples() throws -> [SavedSample] {
        let t = date("2026-03-01T10:00:00Z")
        var synced = Metadata()
        synced.append(Metadata.WellKnownKey.syncIdentifier, .string("sync-1"))
        synced.append(Metadata.WellKnownKey.syncVersion, .integer(3))
        let steps = try QuantitySample(type: .stepCount, quantity: try Quantity(42, unit: "count"), start: t,
                                       end: t.addingTimeInterval(60), uuid: fixedUUID(1))
        let manual = try QuantitySample(type: .stepCount, quantity: try Quantity(7, unit: "count"), start: t,
                                        end: t.addingTimeInterval(30), uuid: fixedUUID(2),
                                        metadata: ["HKWasUserEntered": .bool(true), "n": .integer(-5), "s": .string("walk"),
                                                   "x": .number(2.5), "d": .date(t)],
                                        creationDate: t.addingTimeInterval(90))
        let mass = try QuantitySample(type: .bodyMass, quantity: try Quantity(70.5, unit: "kg"), start: t, end: t,
                                      uuid: fixedUUID(3), metadata: synced)
        let common = try SampleCommon(uuid: fixedUUID(4), startDate: t, endDate: t.addingTimeInterval(120),
                                      source: Source(bundleIdentifier: "b", name: "n", version: "9.1"), creationDate: t,
                                      writtenOffsets: WrittenOffsets(start: 3600, end: -7200, creation: 0))
        let rate = try QuantitySample(type: .heartRate, quantity: try Quantity(61, unit: "count/min"), common: common)
        return [SavedSample(.quantity(steps)), SavedSample(.quantity(manual)), SavedSample(.quantity(mass)),
                SavedSample(.quantity(rate), replaces: fixedUUID(9))]
    }

    /// Each sample's bytes in a save's payload, after its length prefix.
    static func sampleBytes(_ payload: [UInt8]) -> [[UInt8]] {
        payload.withUnsafeBytes { p in
            var r = ByteReader(p)
            _ = try! r.varint()
            return (0..<(try! r.count())).map { _ in Array(try! r.lengthPrefixed().bytes) }
        }
    }

    /// What the full decoder says of a save's payload, and what `checkSave` says.
    static func judged(_ payload: [UInt8], version: UInt16, source: Source?, memo: inout SampleCodec.SaveMemo,
                       valid: inout PlainQuantityBytes.ValidMetadata)
        -> (decoder: Result<AppOrdinal, EventDecodingError>, check: Result<AppOrdinal, EventDecodingError>) {
        payload.withUnsafeBytes { p in
            let decoder = Result { () throws(EventDecodingError) -> AppOrdinal in
                guard case .samplesSaved(let app, _) = try EventCodec.decode(kind: EventKind.samplesSaved.rawValue, version: version,
                                                                             payload: p, source: { _ in source }) else {
                    preconditionFailure("a samplesSaved payload decodes to a save")
                }
                return app
            }
            let check = Result { () throws(EventDecodingError) -> AppOrdinal in
                try EventCodec.checkSave(version: version, payload: p, source: source, memo: &memo, valid: &valid)
            }
            return (decoder, check)
        }
    }

    @Test func theCommonShapeIsShownValidInPlace() throws {
        var memo = SampleCodec.SaveMemo(capacity: 64)
        var valid = PlainQuantityBytes.ValidMetadata()
        for saved in try Self.commonSamples() {
            let sample = Self.sampleBytes(EventCodec.payload(.samplesSaved(app: 1, samples: [saved])))[0]
            let proven = sample.withUnsafeBytes {
                PlainQuantityBytes.provesValid($0, version: EventKind.samplesSaved.currentVersion, memo: &memo, valid: &valid)
            }
            #expect(proven, "\(saved.sample.uuid)")
        }
        // Another shape is left to the decoder: a device.
        let t = date("2026-03-01T10:00:00Z")
        let device = Device(name: "Watch", manufacturer: "Apple Inc.")
        let withDevice = try QuantitySample(type: .stepCount, quantity: try Quantity(1, unit: "count"), start: t, end: t,
                                            uuid: fixedUUID(8), device: device)
        let sample = Self.sampleBytes(EventCodec.payload(.samplesSaved(app: 1, samples: [SavedSample(.quantity(withDevice))])))[0]
        #expect(!sample.withUnsafeBytes {
            PlainQuantityBytes.provesValid($0, version: EventKind.samplesSaved.currentVersion, memo: &memo, valid: &valid)
        })
    }

    @Test func everyFlipAndCutIsJudgedAsTheDecoderJudgesIt() throws {
        let payload = EventCodec.payload(.samplesSaved(app: 3, samples: try Self.commonSamples()))
        var judgedCount = 0, accepted = 0, refused = 0
        for version: UInt16 in [1, 2] {
            for source in [nil, Self.source] {
                // Carried over every payload, as replay carries them over a chunk's saves:
                // what one accepted must not make another accepted.
                var memo = SampleCodec.SaveMemo(capacity: 64)
                var valid = PlainQuantityBytes.ValidMetadata()
                var damaged: [[UInt8]] = [payload]
                for i in payload.indices {
                    for bit in 0..<8 {
                        var bytes = payload
                        bytes[i] ^= 1 << UInt8(bit)
                        damaged.append(bytes)
                    }
                }
                for cut in 0..<payload.count { damaged.append(Array(payload[..<cut])) }
                for bytes in damaged {
                    let (decoder, check) = Self.judged(bytes, version: version, source: source, memo: &memo, valid: &valid)
                    #expect(decoder == check, "version \(version), \(bytes.count) bytes")
                    judgedCount += 1
                    if case .success = decoder { accepted += 1 } else { refused += 1 }
                }
            }
        }
        #expect(judgedCount > 4 * 8 * 300)
        // Flips of values, dates' low bits and UUIDs are accepted; most others refused.
        #expect(accepted > 500 && refused > 2_000)
    }
}
