import Foundation
import HealthModel

/// Who wrote a set of exported resources, and how a receiver proves it: the FHIR
/// Provenance of one saving event's resources (DESIGN.md, "FHIR export").
package struct FHIRProvenance: Sendable, Equatable {
    /// The Provenance's id.
    package let id: String
    /// References (`Observation/<uuid>`).
    package var targets: [String]
    /// When the event was recorded (the log record's time).
    package let recorded: Date
    /// The ledger's origin line, `healthledger/<ledger id>`.
    package let origin: String
    /// The ledger's id (the namespace of its event sequence numbers).
    package let ledgerId: UUID
    /// The event (log record) that wrote the targets; nil for resources derived from
    /// the ledger's state as a whole (the Patient).
    package let sequence: UInt64?
    /// The app that saved the samples, when known.
    package let author: String?
    /// The checkpoint the export was read at: its tree size and root.
    package let checkpoint: FHIRCheckpoint?

    package init(id: String, targets: [String], recorded: Date, origin: String, ledgerId: UUID, sequence: UInt64?,
                 author: String?, checkpoint: FHIRCheckpoint?) {
        self.id = id
        self.targets = targets
        self.recorded = recorded
        self.origin = origin
        self.ledgerId = ledgerId
        self.sequence = sequence
        self.author = author
        self.checkpoint = checkpoint
    }
}

/// A ledger's checkpoint: the Merkle tree of its first `size` events and that tree's root.
package struct FHIRCheckpoint: Sendable, Equatable {
    /// Events in the tree (the checkpoint's size).
    package let size: UInt64
    /// The RFC 9162 root hash, 32 bytes.
    package let root: [UInt8]

    package init(size: UInt64, root: [UInt8]) {
        self.size = size
        self.root = root
    }

    /// The root in lower-case hexadecimal.
    package var rootHex: String { root.map { String($0, radix: 16).leftPadded(2) }.joined() }
    /// The root in base64, as `checkpoint` prints it.
    package var rootBase64: String { Data(root).base64EncodedString() }
}

/// FHIR R4 resources as NDJSON lines, written into bytes (`JSONBytes`): an
/// Observation per sample, the Patient of the characteristics, a Device, a
/// Provenance, and a Bulk Data deletion Bundle. Pure formatting: what to write comes
/// from the export (LedgerTools' `exportFHIR`). DESIGN.md, "FHIR export", says why
/// each field is what it is.
package enum FHIRResources {
    /// The code systems and URLs the resources name.
    package static let healthKitSystem = "http://developer.apple.com/documentation/healthkit"
    package static let workoutActivitySystem = "http://developer.apple.com/documentation/healthkit/hkworkoutactivitytype"
    package static let workoutFieldSystem = "http://developer.apple.com/documentation/healthkit/hkworkout"
    package static let loincSystem = "http://loinc.org"
    package static let ucumSystem = "http://unitsofmeasure.org"
    package static let categorySystem = "http://terminology.hl7.org/CodeSystem/observation-category"
    package static let participantSystem = "http://terminology.hl7.org/CodeSystem/provenance-participant-type"
    /// The Provenance extension naming the checkpoint.
    package static let checkpointExtension = "urn:healthledger:fhir:checkpoint"

    // MARK: Observation

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

    /// A type's CodeableConcept: LOINC's coding when the table has one, and always
    /// HealthKit's (the identifier as code).
    private static func code(_ identifier: String, shortName: String, entry: FHIRCode?, _ j: inout JSONBytes) {
        j.openObject()
        j.key("coding")
        j.openArray()
        if let entry { coding(loincSystem, entry.loinc, entry.display, &j) }
        coding(healthKitSystem, identifier, shortName, &j)
        j.closeArray()
        j.member("text", entry?.display ?? shortName)
        j.closeObject()
    }

    private static func coding(_ system: String, _ code: String, _ display: String?, _ j: inout JSONBytes) {
        j.openObject()
        j.member("system", system)
        j.member("code", code)
        j.member("display", display)
        j.closeObject()
    }

    private static func categoryDisplay(_ code: String) -> String? {
        switch code {
        case "vital-signs": "Vital Signs"
        case "activity": "Activity"
        case "laboratory": "Laboratory"
        default: nil
        }
    }

    private static func quantity(_ q: FHIRQuantity, _ j: inout JSONBytes) {
        j.openObject()
        j.key("value")
        j.number(q.value)
        j.member("unit", q.unit)
        if let ucum = q.ucum {
            j.member("system", ucumSystem)
            j.member("code", ucum)
        }
        j.closeObject()
    }

    private static func reference(_ target: String, _ j: inout JSONBytes) {
        j.openObject()
        j.member("reference", target)
        j.closeObject()
    }

    /// `dateTime(_:offset:)` as a string value.
    private static func dateTime(_ date: Date, offset: Int?, _ j: inout JSONBytes) {
        guard let offset, offset != 0 else { return j.date(date) }
        j.string(dateTime(date, offset: offset))
    }

    /// A FHIR dateTime at `offset` seconds east of UTC (as the sample was written; nil
    /// or 0: `Z`): `2027-08-02T07:33:00+02:00`.
    package static func dateTime(_ date: Date, offset: Int?) -> String {
        guard let offset, offset != 0 else { return ISO8601.string(date) }
        let shifted = date.addingTimeInterval(Double(offset))
        guard ISO8601.isInRange(shifted) else { return ISO8601.string(date) }
        let minutes = abs(offset) / 60
        return ISO8601.string(shifted).dropLast() + (offset < 0 ? "-" : "+") + ISO8601.pad(minutes / 60, 2) + ":" + ISO8601.pad(minutes % 60, 2)
    }

    // MARK: Patient, Device

    /// The Patient of the characteristics the viewer may read: `birthDate`, `gender`
    /// (biological sex: female, male, other; not set: omitted) and each other
    /// characteristic as an extension holding HealthKit's raw name.
    package static func patient(id: String, characteristics: [CharacteristicValue], into j: inout JSONBytes) {
        j.openObject()
        j.member("resourceType", "Patient")
        j.member("id", id)
        let others = characteristics.filter {
            switch $0 {
            case .dateOfBirth, .biologicalSex: false
            default: true
            }
        }
        if !others.isEmpty {
            j.key("extension")
            j.openArray()
            for value in others {
                j.openObject()
                j.member("url", healthKitSystem + "/" + value.type.identifier)
                j.member("valueString", value.description)
                j.closeObject()
            }
            j.closeArray()
        }
        for value in characteristics {
            switch value {
            case .biologicalSex(let sex):
                switch sex {
                case .female: j.member("gender", "female")
                case .male: j.member("gender", "male")
                case .other: j.member("gender", "other")
                case .notSet: break
                }
            case .dateOfBirth(let d):
                j.member("birthDate", d.description)
            default:
                break
            }
        }
        j.closeObject()
    }

    /// A Device from a sample's HKDevice: name, manufacturer, model, versions, UDI and
    /// local identifier, each when present and not blank.
    package static func device(id: String, _ d: Device, into j: inout JSONBytes) {
        func present(_ s: String?) -> String? { s.flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 } }
        j.openObject()
        j.member("resourceType", "Device")
        j.member("id", id)
        if let local = present(d.localIdentifier) {
            j.key("identifier")
            j.openArray()
            j.openObject()
            j.member("system", healthKitSystem + "/hkdevice/localidentifier")
            j.member("value", local)
            j.closeObject()
            j.closeArray()
        }
        if let udi = present(d.udiDeviceIdentifier) {
            j.key("udiCarrier")
            j.openArray()
            j.openObject()
            j.member("deviceIdentifier", udi)
            j.closeObject()
            j.closeArray()
        }
        j.member("manufacturer", present(d.manufacturer))
        if let name = present(d.name) {
            j.key("deviceName")
            j.openArray()
            j.openObject()
            j.member("name", name)
            j.member("type", "user-friendly-name")
            j.closeObject()
            j.closeArray()
        }
        j.member("modelNumber", present(d.model))
        let versions = [("hardware", d.hardwareVersion), ("firmware", d.firmwareVersion), ("software", d.softwareVersion)]
            .compactMap { kind, v in present(v).map { (kind, $0) } }
        if !versions.isEmpty {
            j.key("version")
            j.openArray()
            for (kind, value) in versions {
                j.openObject()
                j.key("type")
                j.openObject()
                j.member("text", kind)
                j.closeObject()
                j.member("value", value)
                j.closeObject()
            }
            j.closeArray()
        }
        j.closeObject()
    }

    // MARK: Provenance, deletions

    /// A Provenance: its targets, the ledger as custodian, the app as author, the
    /// event as source entity (identifier: the sequence number in the ledger's
    /// namespace, `urn:uuid:<ledger id>`) and the checkpoint as an extension
    /// (`checkpointExtension`: origin, size, root in hex and base64).
    package static func provenance(_ p: FHIRProvenance, into j: inout JSONBytes) {
        j.openObject()
        j.member("resourceType", "Provenance")
        j.member("id", p.id)
        j.key("extension")
        j.openArray()
        j.openObject()
        j.member("url", checkpointExtension)
        j.key("extension")
        j.openArray()
        stringExtension("origin", p.origin, &j)
        if let sequence = p.sequence { stringExtension("event", String(sequence), &j) }
        if let checkpoint = p.checkpoint {
            stringExtension("checkpointSize", String(checkpoint.size), &j)
            stringExtension("checkpointRootHex", checkpoint.rootHex, &j)
            stringExtension("checkpointRoot", checkpoint.rootBase64, &j)
        }
        j.closeArray()
        j.closeObject()
        j.closeArray()
        j.key("target")
        j.openArray()
        for target in p.targets { reference(target, &j) }
        j.closeArray()
        j.member("recorded", ISO8601.string(p.recorded))
        j.key("agent")
        j.openArray()
        if let author = p.author { agent("author", "Author", author, system: "urn:healthledger:source", &j) }
        agent("custodian", "Custodian", p.origin, system: "urn:healthledger:ledger", &j)
        j.closeArray()
        if let sequence = p.sequence {
            j.key("entity")
            j.openArray()
            j.openObject()
            j.member("role", "source")
            j.key("what")
            j.openObject()
            j.key("identifier")
            j.openObject()
            j.member("system", "urn:uuid:" + p.ledgerId.uuidString.lowercased())
            j.member("value", String(sequence))
            j.closeObject()
            j.member("display", "event \(sequence) of \(p.origin)")
            j.closeObject()
            j.closeObject()
            j.closeArray()
        }
        j.closeObject()
    }

    private static func stringExtension(_ url: String, _ value: String, _ j: inout JSONBytes) {
        j.openObject()
        j.member("url", url)
        j.member("valueString", value)
        j.closeObject()
    }

    private static func agent(_ code: String, _ display: String, _ who: String, system: String, _ j: inout JSONBytes) {
        j.openObject()
        j.key("type")
        j.openObject()
        j.key("coding")
        j.openArray()
        coding(participantSystem, code, display, &j)
        j.closeArray()
        j.closeObject()
        j.key("who")
        j.openObject()
        j.key("identifier")
        j.openObject()
        j.member("system", system)
        j.member("value", who)
        j.closeObject()
        j.member("display", who)
        j.closeObject()
        j.closeObject()
    }

    /// A Bulk Data deletion: a transaction Bundle with one `DELETE <reference>` entry.
    package static func deletion(_ reference: String, into j: inout JSONBytes) {
        j.openObject()
        j.member("resourceType", "Bundle")
        j.member("type", "transaction")
        j.key("entry")
        j.openArray()
        j.openObject()
        j.key("request")
        j.openObject()
        j.member("method", "DELETE")
        j.member("url", reference)
        j.closeObject()
        j.closeObject()
        j.closeArray()
        j.closeObject()
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
