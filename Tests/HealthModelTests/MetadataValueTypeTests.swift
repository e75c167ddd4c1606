import Foundation
import Testing
import HealthModel

/// HealthKit's boolean metadata keys take booleans (or the NSNumber
/// 1/0 HealthKit stores them as), never strings such as "yes"; other keys are free.
struct MetadataValueTypeTests {
    @Test func booleanKeysTakeBooleansOnly() throws {
        for good: MetadataValue in [.bool(true), .bool(false), .integer(1), .integer(0)] {
            try Metadata([MetadataEntry(key: "HKWasUserEntered", value: good)]).checkHealthKitValueTypes()
        }
        #expect(throws: HealthModelError.invalidField(field: "metadata[HKWasUserEntered]",
                                                      reason: "HealthKit's HKWasUserEntered is a boolean (true or false), not the string \"yes\"")) {
            try Metadata([MetadataEntry(key: "HKWasUserEntered", value: .string("yes"))]).checkHealthKitValueTypes()
        }
        #expect(throws: HealthModelError.invalidField(field: "metadata[HKWasTakenInLab]",
                                                      reason: "HealthKit's HKWasTakenInLab is a boolean (true or false), not 2")) {
            try Metadata([MetadataEntry(key: "HKWasTakenInLab", value: .integer(2))]).checkHealthKitValueTypes()
        }
        #expect(Metadata.booleanKeys.isSubset(of: Metadata.healthKitShortKeys))
        // a key of another type, or an app's own key: not checked here
        try Metadata([MetadataEntry(key: "HKTimeZone", value: .string("Europe/Berlin")),
                      MetadataEntry(key: "wasUserEntered", value: .string("yes"))]).checkHealthKitValueTypes()
    }
}
