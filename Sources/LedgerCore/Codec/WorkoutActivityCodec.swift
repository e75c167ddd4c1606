import Foundation
import HealthModel

/// The bytes of workout activities (events/FORMAT.md, Part 2, `workoutActivitiesAdded`):
/// written by the event (kind 16) and by snapshot section 32, read back through the
/// model's constructor, so bytes that decode are activities the model accepts.
///
/// One activity: `uuid · varint activityType (HealthKit's raw value) · date start ·
/// date end · varint e · e × (u8 event type · date · f64 duration · metadata) · metadata`
/// — the events as a workout's own events are written.
enum WorkoutActivityCodec {
    static func encode(_ activities: [WorkoutActivity], into w: inout ByteWriter) {
        w.varint(activities.count)
        for a in activities {
            w.uuid(a.uuid)
            w.varint(UInt64(a.activityType.rawValue))
            w.date(a.startDate)
            w.date(a.endDate)
            w.varint(a.events.count)
            for e in a.events {
                w.u8(UInt8(e.kind.rawValue))
                w.date(e.date)
                w.f64(e.duration)
                SampleCodec.encodeMetadata(e.metadata, into: &w)
            }
            SampleCodec.encodeMetadata(a.metadata, into: &w)
        }
    }

    /// Reads `varint n (≥ 1) · n × activity`; an empty list, an unknown activity or
    /// event type, or an activity the model refuses is `malformed` at its offset.
    static func decode(_ r: inout ByteReader) throws(EventDecodingError) -> [WorkoutActivity] {
        // An activity takes at least 16 + 1 + 8 + 8 + 1 + 1 bytes.
        let countAt = r.absolutePosition
        let n = try r.count(limit: r.remaining / 35)
        guard n >= 1 else { throw .malformed(offset: countAt, reason: "workout activities: none listed") }
        var activities: [WorkoutActivity] = []
        activities.reserveCapacity(n)
        for _ in 0..<n {
            let at = r.absolutePosition
            let uuid = try r.uuid()
            let typeAt = r.absolutePosition
            guard let type = WorkoutActivityType(rawValue: UInt(try r.varint())) else {
                throw .malformed(offset: typeAt, reason: "unknown workout activity type")
            }
            let start = try r.date()
            let end = try r.date()
            var events: [WorkoutEvent] = []
            for _ in 0..<(try r.count(limit: r.remaining / 18)) {
                let eAt = r.absolutePosition
                guard let kind = WorkoutEvent.Kind(rawValue: Int(try r.u8())) else {
                    throw .malformed(offset: eAt, reason: "unknown workout event type")
                }
                let date = try r.date()
                let duration = try r.finite()
                let metadata = try SampleCodec.decodeMetadata(&r)
                do { events.append(try WorkoutEvent(kind: kind, date: date, duration: duration, metadata: metadata)) } catch {
                    throw .malformed(offset: eAt, reason: "workout activity event: \(error)")
                }
            }
            let metadata = try SampleCodec.decodeMetadata(&r)
            do {
                activities.append(try WorkoutActivity(activityType: type, start: start, end: end, events: events,
                                                      metadata: metadata, uuid: uuid))
            } catch {
                throw .malformed(offset: at, reason: "workout activity: \(error)")
            }
        }
        return activities
    }
}
