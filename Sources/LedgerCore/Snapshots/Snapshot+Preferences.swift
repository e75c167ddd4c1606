import Foundation
import HealthModel

/// Snapshot section 40 (`preferredUnits`): the owner's preferred unit per quantity
/// type, written only when there is one (events/FORMAT.md, Part 3):
/// `count varint, then per type: quantity type code u16, canonical unit string`,
/// in type-code order. Read back as the `preferredUnitSet` events that rebuild it.
extension SnapshotFile {
    static func writePreferredUnits(_ state: LedgerState, into w: inout ByteWriter) {
        let types = state.preferredUnits.keys.sorted()
        w.varint(types.count)
        for type in types {
            w.u16(ObjectType.quantity(type).code)
            w.string(state.preferredUnits[type]!.canonicalString)
        }
    }

    static func readPreferredUnits(_ r: inout ByteReader) throws -> [Event] {
        var events: [Event] = []
        for _ in 0..<(try r.count()) {
            guard case .quantity(let type)? = ObjectType(code: try r.u16()) else { throw r.malformed("preferred unit type") }
            let text = try r.string()
            guard let unit = try? HealthUnit(text), unit.isCompatible(with: type.canonicalUnit) else {
                throw r.malformed("preferred unit '\(text)' of \(type.shortName)")
            }
            events.append(.preferredUnitSet(type: type, unit: unit))
        }
        return events
    }
}

/// Snapshot section 41 (`associations`): samples associated with workouts, written
/// only when there are any: `count varint, then per workout (in UUID string order):
/// uuid workout, varint m, m × uuid` in the order associated. Read back as
/// `samplesAssociated` events (actor 0: the restore does not need it).
extension SnapshotFile {
    static func writeAssociations(_ state: LedgerState, into w: inout ByteWriter) {
        let workouts = state.associations.keys.sorted { $0.uuidString < $1.uuidString }
        w.varint(workouts.count)
        for workout in workouts {
            w.uuid(workout)
            let samples = state.associations[workout]!
            w.varint(samples.count)
            for uuid in samples { w.uuid(uuid) }
        }
    }

    static func readAssociations(_ r: inout ByteReader) throws -> [Event] {
        var events: [Event] = []
        for _ in 0..<(try r.count()) {
            let workout = try r.uuid()
            let m = try r.count(limit: r.remaining / 16)
            var samples: [UUID] = []
            for _ in 0..<m { samples.append(try r.uuid()) }
            events.append(.samplesAssociated(app: 0, workout: workout, samples: samples))
        }
        return events
    }
}

extension SnapshotFile {
    /// Section 40 as a small-section codec (optional: only when a unit is chosen).
    static let preferredUnitsSection = SnapshotSectionCodec(section: .preferredUnits, encode: { source, w in
        guard !source.state.preferredUnits.isEmpty else { return false }
        writePreferredUnits(source.state, into: &w)
        return true
    }, decode: { r, contents in
        contents.events += try readPreferredUnits(&r)
    }, required: false)

    /// Section 41 as a small-section codec (optional: only when there are associations).
    static let associationsSection = SnapshotSectionCodec(section: .associations, encode: { source, w in
        guard !source.state.associations.isEmpty else { return false }
        writeAssociations(source.state, into: &w)
        return true
    }, decode: { r, contents in
        contents.events += try readAssociations(&r)
    }, required: false)
}
