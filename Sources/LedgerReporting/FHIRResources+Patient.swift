import Foundation
import HealthModel

extension FHIRResources {
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
}
