import Foundation
import Testing
import HealthModel
@testable import LedgerCore

/// Kind 16 (`workoutActivitiesAdded`) byte for byte as events/FORMAT.md documents it,
/// and what its decoder refuses.
struct WorkoutActivityCodecTests {
    static let workout = fixedUUID(40), activity = fixedUUID(43)

    static func bytes(_ uuid: UUID) -> [UInt8] { withUnsafeBytes(of: uuid.uuid) { Array($0) } }

    /// 2001-01-01T00:10:00Z and 00:20:00Z: 600 and 1200 seconds after the reference date.
    static let start: [UInt8] = [0, 0, 0, 0, 0, 0xC0, 0x82, 0x40]
    static let end: [UInt8] = [0, 0, 0, 0, 0, 0xC0, 0x92, 0x40]

    /// actor 1 · workout · n=1 · (uuid · swimming (46) · start · end · 1 event (lap=3 at
    /// the start, duration 0, no metadata) · metadata {"k": string "v"}).
    static let golden: [UInt8] = [1] + bytes(workout) + [1] + bytes(activity) + [46] + start + end
        + [1, 3] + start + [0, 0, 0, 0, 0, 0, 0, 0] + [0]
        + [1, 1, 0x6B, 1, 1, 0x76]

    func decode(_ payload: [UInt8]) throws -> Event {
        try payload.withUnsafeBytes { try EventCodec.decode(kind: 16, version: 1, payload: $0) }
    }

    @Test func workoutActivitiesAddedPayloadIsExactlyAsDocumented() throws {
        let t0 = Date(timeIntervalSinceReferenceDate: 600), t1 = Date(timeIntervalSinceReferenceDate: 1200)
        let a = try WorkoutActivity(activityType: .swimming, start: t0, end: t1, events: [try WorkoutEvent(kind: .lap, date: t0)],
                                    metadata: ["k": .string("v")], uuid: Self.activity)
        let event = Event.workoutActivitiesAdded(actor: .app(1), workout: Self.workout, activities: [a])
        #expect(event.kind.rawValue == 16 && event.kind.currentVersion == 1)
        #expect(EventCodec.payload(event) == Self.golden)
        #expect(try decode(Self.golden) == event)
        // The owner writes actor 0.
        let owner = Event.workoutActivitiesAdded(actor: .owner, workout: Self.workout, activities: [a])
        #expect(try decode([0] + Self.golden.dropFirst()) == owner)
    }

    @Test func aDecoderRefusesWhatTheModelRefuses() throws {
        // No activity at all.
        #expect(throws: EventDecodingError.malformed(offset: 17, reason: "workout activities: none listed")) {
            try decode([1] + Self.bytes(Self.workout) + [0])
        }
        // Ends before it starts (the dates swapped).
        var swapped = Self.golden
        swapped.replaceSubrange(35..<51, with: Self.end + Self.start)
        #expect(throws: EventDecodingError.self) { try decode(swapped) }
        // An unknown activity type (a varint beyond the table).
        var unknown = Self.golden
        unknown[34] = 0x7F
        #expect(throws: EventDecodingError.malformed(offset: 34, reason: "unknown workout activity type")) { try decode(unknown) }
        // A trailing byte.
        #expect(throws: EventDecodingError.self) { try decode(Self.golden + [0]) }
    }
}
