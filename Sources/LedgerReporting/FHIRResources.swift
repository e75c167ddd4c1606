import Foundation
import HealthModel

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

    // MARK: Shared by the resources

    /// A type's CodeableConcept: LOINC's coding when the table has one, and always
    /// HealthKit's (the identifier as code).
    static func code(_ identifier: String, shortName: String, entry: FHIRCode?, _ j: inout JSONBytes) {
        j.openObject()
        j.key("coding")
        j.openArray()
        if let entry { coding(loincSystem, entry.loinc, entry.display, &j) }
        coding(healthKitSystem, identifier, shortName, &j)
        j.closeArray()
        j.member("text", entry?.display ?? shortName)
        j.closeObject()
    }

    static func coding(_ system: String, _ code: String, _ display: String?, _ j: inout JSONBytes) {
        j.openObject()
        j.member("system", system)
        j.member("code", code)
        j.member("display", display)
        j.closeObject()
    }

    static func categoryDisplay(_ code: String) -> String? {
        switch code {
        case "vital-signs": "Vital Signs"
        case "activity": "Activity"
        case "laboratory": "Laboratory"
        default: nil
        }
    }

    static func quantity(_ q: FHIRQuantity, _ j: inout JSONBytes) {
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

    static func reference(_ target: String, _ j: inout JSONBytes) {
        j.openObject()
        j.member("reference", target)
        j.closeObject()
    }

    /// `dateTime(_:offset:)` as a string value.
    static func dateTime(_ date: Date, offset: Int?, _ j: inout JSONBytes) {
        guard let offset, offset != 0 else { return j.date(date) }
        j.string(dateTime(date, offset: offset))
    }

    /// A FHIR dateTime at `offset` seconds east of UTC (as the sample was written; nil
    /// or 0: `Z`): `2027-08-02T07:33:00+02:00`. FHIR's dateTime takes whole-minute
    /// offsets up to ±14:00; an offset beyond (an export may carry `+1430`, which the
    /// ledger keeps: D2 allows ±23:59) or with seconds is written in UTC instead.
    package static func dateTime(_ date: Date, offset: Int?) -> String {
        guard let offset, offset != 0, offset % 60 == 0, offset.magnitude <= 14 * 3600 else { return ISO8601.string(date) }
        let shifted = date.addingTimeInterval(Double(offset))
        guard ISO8601.isInRange(shifted) else { return ISO8601.string(date) }
        let minutes = Int(offset.magnitude) / 60
        return ISO8601.string(shifted).dropLast() + (offset < 0 ? "-" : "+") + ISO8601.pad(minutes / 60, 2) + ":" + ISO8601.pad(minutes % 60, 2)
    }
}
