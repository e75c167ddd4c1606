import HealthModel

/// How one HealthKit type is coded in FHIR: its LOINC code (when LOINC has one), the
/// HealthKit unit its values are converted to and the UCUM code that unit is written
/// as, and the Observation category it belongs to.
package struct FHIRCode: Sendable, Equatable {
    /// The HealthKit type identifier (`HKQuantityTypeIdentifierBodyMass`).
    package let identifier: String
    /// The LOINC code (`29463-7`).
    package let loinc: String
    /// LOINC's display name for it.
    package let display: String
    /// The HealthKit unit values are converted to before writing (nil: a correlation,
    /// which has no value of its own).
    package let unit: String?
    /// The UCUM code the converted value is written with (`kg`, `/min`, `mm[Hg]`).
    package let ucum: String?
    /// `vital-signs` or `activity` (FHIR's observation-category codes), or nil.
    package let category: String?
}

/// The one table of HealthKit types FHIR knows by LOINC code, as data: one entry per
/// HealthKit type identifier (DESIGN.md, "FHIR export"). Codes and displays are
/// LOINC's (../shared/reference/fhir-mapping.md; the vital-signs ones as FHIR R4's
/// vital signs profiles use them). A type without an entry is coded by its HealthKit
/// identifier alone and written in its canonical unit (`FHIRUnits`).
package enum FHIRCodeTable {
    /// The entries, in no particular order; identifiers are unique.
    package static let entries: [FHIRCode] = [
        FHIRCode(identifier: "HKQuantityTypeIdentifierBodyMass", loinc: "29463-7", display: "Body weight",
                 unit: "kg", ucum: "kg", category: "vital-signs"),
        FHIRCode(identifier: "HKQuantityTypeIdentifierHeight", loinc: "8302-2", display: "Body height",
                 unit: "cm", ucum: "cm", category: "vital-signs"),
        FHIRCode(identifier: "HKQuantityTypeIdentifierBodyMassIndex", loinc: "39156-5", display: "Body mass index (BMI) [Ratio]",
                 unit: "count", ucum: "kg/m2", category: "vital-signs"),
        FHIRCode(identifier: "HKQuantityTypeIdentifierHeartRate", loinc: "8867-4", display: "Heart rate",
                 unit: "count/min", ucum: "/min", category: "vital-signs"),
        FHIRCode(identifier: "HKQuantityTypeIdentifierRestingHeartRate", loinc: "40443-4", display: "Heart rate --resting",
                 unit: "count/min", ucum: "/min", category: "vital-signs"),
        FHIRCode(identifier: "HKQuantityTypeIdentifierRespiratoryRate", loinc: "9279-1", display: "Respiratory rate",
                 unit: "count/min", ucum: "/min", category: "vital-signs"),
        FHIRCode(identifier: "HKQuantityTypeIdentifierBodyTemperature", loinc: "8310-5", display: "Body temperature",
                 unit: "degC", ucum: "Cel", category: "vital-signs"),
        FHIRCode(identifier: "HKQuantityTypeIdentifierOxygenSaturation", loinc: "59408-5",
                 display: "Oxygen saturation in Arterial blood by Pulse oximetry", unit: "%", ucum: "%", category: "vital-signs"),
        FHIRCode(identifier: "HKQuantityTypeIdentifierBloodGlucose", loinc: "2339-0", display: "Glucose [Mass/volume] in Blood",
                 unit: "mg/dL", ucum: "mg/dL", category: "laboratory"),
        FHIRCode(identifier: "HKCorrelationTypeIdentifierBloodPressure", loinc: "85354-9", display: "Blood pressure panel",
                 unit: nil, ucum: nil, category: "vital-signs"),
        FHIRCode(identifier: "HKQuantityTypeIdentifierBloodPressureSystolic", loinc: "8480-6", display: "Systolic blood pressure",
                 unit: "mmHg", ucum: "mm[Hg]", category: "vital-signs"),
        FHIRCode(identifier: "HKQuantityTypeIdentifierBloodPressureDiastolic", loinc: "8462-4", display: "Diastolic blood pressure",
                 unit: "mmHg", ucum: "mm[Hg]", category: "vital-signs"),
        FHIRCode(identifier: "HKQuantityTypeIdentifierStepCount", loinc: "55423-8",
                 display: "Number of steps in unspecified time Pedometer", unit: "count", ucum: "{steps}", category: "activity"),
        FHIRCode(identifier: "HKQuantityTypeIdentifierHeartRateVariabilitySDNN", loinc: "80404-7",
                 display: "R-R interval.standard deviation (Heart rate variability)", unit: "ms", ucum: "ms", category: "vital-signs"),
        FHIRCode(identifier: "HKQuantityTypeIdentifierBodyFatPercentage", loinc: "41982-0", display: "Percentage of body fat Measured",
                 unit: "%", ucum: "%", category: "vital-signs"),
        FHIRCode(identifier: "HKQuantityTypeIdentifierWaistCircumference", loinc: "8280-0",
                 display: "Waist Circumference at umbilicus by Tape measure", unit: "cm", ucum: "cm", category: "vital-signs"),
    ]

    private static let byIdentifier = Dictionary(uniqueKeysWithValues: entries.map { ($0.identifier, $0) })

    /// The entry of a HealthKit type identifier, if LOINC codes it.
    package static func entry(_ identifier: String) -> FHIRCode? { byIdentifier[identifier] }
}
