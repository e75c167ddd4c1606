import Foundation

extension Metadata {
    /// HealthKit's metadata keys whose values are booleans (an NSNumber holding a BOOL):
    /// `HKWasUserEntered` and the other yes/no keys of HKMetadata.h.
    public static let booleanKeys: Set<String> = [
        "HKWasUserEntered", "HKWasTakenInLab", "HKIndoorWorkout", "HKGroupFitness", "HKCoachedWorkout",
        "HKSexualActivityProtectionUsed", "HKMenstrualCycleStart", "HKQuantityClampedToLowerBound",
        "HKQuantityClampedToUpperBound", "HKAppleDeviceCalibrated", "HKAppleFitnessPlusSession",
    ]

    /// Throws `invalidField` for a HealthKit key holding a value of another type than
    /// HealthKit's: a boolean key (`booleanKeys`) takes `true`/`false` (or the NSNumber
    /// 1/0 HealthKit stores them as), never a string such as `"yes"` — HealthKit refuses
    /// such a save. What an app saves is checked (`HealthStore`); an import keeps an
    /// export's values as written (`HKWasUserEntered="1"` is a string there), and values
    /// read back from a log are not checked, so older logs stay readable.
    public func checkHealthKitValueTypes() throws {
        for entry in entries where Self.booleanKeys.contains(entry.key) {
            switch entry.value {
            case .bool: continue
            case .integer(let i) where i == 0 || i == 1: continue
            case .string(let s):
                throw HealthModelError.invalidField(field: "metadata[\(entry.key)]",
                                                    reason: "HealthKit's \(entry.key) is a boolean (true or false), not the string \"\(s)\"")
            default:
                throw HealthModelError.invalidField(field: "metadata[\(entry.key)]",
                                                    reason: "HealthKit's \(entry.key) is a boolean (true or false), not \(entry.value)")
            }
        }
    }
}
