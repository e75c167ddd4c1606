import Foundation
import HealthModel

extension FHIRResources {
    /// One sample's Observation (one line, no newline). `patient` is the Patient's id;
    /// `device` the Device's id when the sample names one. Records kept raw are not
    /// written (returns false).
    @discardableResult
    package static func observation(_ sample: Sample, patient: String, device: String?, into j: inout JSONBytes) -> Bool {
        let c = sample.common
        if case .unrecognized = sample { return false }
        guard case .known(let type) = sample.type else { return false }
        j.openObject()
        j.member("resourceType", "Observation")
        j.key("id")
        j.uuid(c.uuid)
        j.key("identifier")
        j.openArray()
        j.openObject()
        j.member("system", "urn:ietf:rfc:3986")
        j.key("value")
        j.uuid(c.uuid, prefix: "urn:uuid:", lowercase: true)
        j.closeObject()
        j.closeArray()
        j.members(typeMembers[type.code] ?? typeMembers(type))
        j.key("subject")
        reference("Patient/" + patient, &j)
        let offsets = c.writtenOffsets
        if c.startDate == c.endDate {
            j.key("effectiveDateTime")
            dateTime(c.startDate, offset: offsets?.start, &j)
        } else {
            j.key("effectivePeriod")
            j.openObject()
            j.key("start")
            dateTime(c.startDate, offset: offsets?.start, &j)
            j.key("end")
            dateTime(c.endDate, offset: offsets?.end, &j)
            j.closeObject()
        }
        if let creation = c.creationDate {
            j.key("issued")
            j.date(creation)
        }
        switch sample {
        case .quantity(let q):
            j.key("valueQuantity")
            quantity(FHIRUnits.quantity(q.quantity, of: q.type), &j)
        case .category(let s):
            let name = s.type.rawName(of: s.value)
            j.key("valueCodeableConcept")
            j.openObject()
            j.key("coding")
            j.openArray()
            coding(healthKitSystem, name ?? String(s.value), nil, &j)
            j.closeArray()
            j.member("text", name ?? String(s.value))
            j.closeObject()
        case .workout(let w):
            j.key("valueCodeableConcept")
            j.openObject()
            j.key("coding")
            j.openArray()
            coding(workoutActivitySystem, w.activityType.identifier, w.activityType.shortName, &j)
            j.closeArray()
            j.member("text", w.activityType.shortName)
            j.closeObject()
        case .correlation, .unrecognized:
            break
        }
        if let device {
            j.key("device")
            reference("Device/" + device, &j)
        }
        switch sample {
        case .correlation(let k) where !k.objects.isEmpty:
            j.key("component")
            j.openArray()
            for member in k.objects {
                j.openObject()
                j.key("code")
                code(member.type.identifier, shortName: member.type.shortName, entry: FHIRCodeTable.entry(member.type.identifier), &j)
                j.key("valueQuantity")
                quantity(FHIRUnits.quantity(member.quantity, of: member.type), &j)
                j.closeObject()
            }
            j.closeArray()
        case .workout(let w):
            j.key("component")
            j.openArray()
            workoutComponent("duration", FHIRQuantity(value: w.duration, unit: "s", ucum: "s"), &j)
            if let energy = w.totalEnergyBurned {
                workoutComponent("totalEnergyBurned", FHIRUnits.quantity(energy, in: "kcal"), &j)
            }
            if let distance = w.totalDistance {
                workoutComponent("totalDistance", FHIRUnits.quantity(distance, in: "m"), &j)
            }
            j.closeArray()
        default:
            break
        }
        j.closeObject()
        return true
    }

    /// `"status":"final","category":[…],"code":{…}` of each sample type, rendered once
    /// (they are the same for every sample of the type), by type code.
    private static let typeMembers: [UInt16: [UInt8]] = Dictionary(uniqueKeysWithValues:
        ObjectType.allTypes.filter(\.isSampleType).map { ($0.code, typeMembers($0)) })

    private static func typeMembers(_ type: ObjectType) -> [UInt8] {
        let entry = FHIRCodeTable.entry(type.identifier)
        var j = JSONBytes()
        j.openObject()
        j.member("status", "final")
        let category: String? = if case .workout = type { "activity" } else { entry?.category }
        if let category {
            j.key("category")
            j.openArray()
            j.openObject()
            j.key("coding")
            j.openArray()
            coding(categorySystem, category, categoryDisplay(category), &j)
            j.closeArray()
            j.closeObject()
            j.closeArray()
        }
        j.key("code")
        code(type.identifier, shortName: type.shortName, entry: entry, &j)
        return Array(j.bytes.dropFirst())  // the members, without the brace
    }

    private static func workoutComponent(_ field: String, _ value: FHIRQuantity, _ j: inout JSONBytes) {
        j.openObject()
        j.key("code")
        j.openObject()
        j.key("coding")
        j.openArray()
        coding(workoutFieldSystem, field, nil, &j)
        j.closeArray()
        j.member("text", field)
        j.closeObject()
        j.key("valueQuantity")
        quantity(value, &j)
        j.closeObject()
    }
}
