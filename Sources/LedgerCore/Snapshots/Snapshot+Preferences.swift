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
