import Foundation

/// A metadata value (HealthKit allows strings, numbers, dates, quantities and,
/// through NSNumber, booleans).
public enum MetadataValue: Hashable, Sendable, CustomStringConvertible {
    case string(String)
    case integer(Int64)
    case number(Double)
    case bool(Bool)
    case date(Date)
    case quantity(Quantity)

    /// A readable form: strings verbatim, dates ISO 8601, quantities `56 degF`.
    public var description: String {
        switch self {
        case .string(let s): s
        case .integer(let i): String(i)
        case .number(let d): String(d)
        case .bool(let b): b ? "true" : "false"
        case .date(let d): ISO8601.string(d)
        case .quantity(let q): q.description
        }
    }
}

/// One metadata entry. Keys are kept verbatim: `meal` and `Meal` are two keys.
public struct MetadataEntry: Hashable, Sendable {
    public let key: String
    public let value: MetadataValue

    public init(key: String, value: MetadataValue) {
        self.key = key
        self.value = value
    }
}

/// A sample's metadata: entries in the order they were given, keys verbatim
/// (case-sensitive, spaces allowed), nothing merged or dropped.
public struct Metadata: Hashable, Sendable, ExpressibleByDictionaryLiteral, RandomAccessCollection {
    public typealias Key = String
    public typealias Value = MetadataValue
    /// The entries, in the order given.
    public private(set) var entries: [MetadataEntry]

    /// Metadata from entries, in order.
    public init(_ entries: [MetadataEntry] = []) { self.entries = entries }

    /// Metadata from a literal; entries are ordered by key for determinism.
    public init(dictionaryLiteral elements: (String, MetadataValue)...) {
        entries = elements.sorted { $0.0 < $1.0 }.map { MetadataEntry(key: $0.0, value: $0.1) }
    }

    /// The first value stored under `key` (exact, case-sensitive match).
    public subscript(key: String) -> MetadataValue? {
        entries.first { $0.key == key }?.value
    }

    public var startIndex: Int { entries.startIndex }
    public var endIndex: Int { entries.endIndex }
    public subscript(position: Int) -> MetadataEntry { entries[position] }

    /// Adds an entry at the end (a repeated key is kept, not merged).
    public mutating func append(_ key: String, _ value: MetadataValue) {
        entries.append(MetadataEntry(key: key, value: value))
    }

    /// Whether HealthKit defines `key`, for a key starting with `HK`: every
    /// `HKMetadataKey…` raw value (the form of HealthKit's newer keys and of the sync
    /// keys), and the older keys whose raw values drop `MetadataKey` (`HKWasUserEntered`,
    /// `HKTimeZone`, … listed in `healthKitShortKeys`). HealthKit refuses an app's
    /// other `HK…` keys; the importer keeps them verbatim.
    public static func isDefinedByHealthKit(_ key: String) -> Bool {
        key.hasPrefix("HKMetadataKey") || healthKitShortKeys.contains(key)
    }

    /// HealthKit's metadata keys whose raw values are `HK` + the name (HKMetadata.h;
    /// the keys seen in Apple Health exports).
    public static let healthKitShortKeys: Set<String> = [
        "HKDeviceSerialNumber", "HKBodyTemperatureSensorLocation", "HKHeartRateSensorLocation", "HKFoodType",
        "HKUDIDeviceIdentifier", "HKUDIProductionIdentifier", "HKDigitalSignature", "HKExternalUUID", "HKTimeZone",
        "HKDeviceName", "HKDeviceManufacturerName", "HKWasTakenInLab", "HKReferenceRangeLowerLimit",
        "HKReferenceRangeUpperLimit", "HKWasUserEntered", "HKWorkoutBrandName", "HKGroupFitness", "HKIndoorWorkout",
        "HKCoachedWorkout", "HKWeatherCondition", "HKWeatherTemperature", "HKWeatherHumidity",
        "HKSexualActivityProtectionUsed", "HKMenstrualCycleStart", "HKLapLength", "HKSwimmingLocationType",
        "HKSwimmingStrokeStyle", "HKInsulinDeliveryReason", "HKBloodGlucoseMealTime", "HKVO2MaxTestType",
        "HKHeartRateEventThreshold", "HKAverageSpeed", "HKMaximumSpeed", "HKAlpineSlopeGrade", "HKElevationAscended",
        "HKElevationDescended", "HKFitnessMachineDuration", "HKIndoorBikeDistance", "HKCrossTrainerDistance",
        "HKAudioExposureLevel", "HKAudioExposureDuration", "HKAverageMETs", "HKBarometricPressure",
        "HKVO2MaxValue", "HKLowCardioFitnessEventThreshold", "HKDateOfEarliestDataUsedForEstimate",
        "HKAlgorithmVersion", "HKSWOLFScore", "HKQuantityClampedToLowerBound", "HKQuantityClampedToUpperBound",
        "HKGlassesPrescriptionDescription", "HKActivityType", "HKPhysicalEffortEstimationType",
        "HKHeartRateRecoveryTestType", "HKHeartRateRecoveryActivityType", "HKHeartRateRecoveryActivityDuration",
        "HKHeartRateRecoveryMaxObservedRecoveryHeartRate", "HKSessionEstimate", "HKUserMotionContext",
        "HKAppleDeviceCalibrated", "HKAppleECGAlgorithmVersion", "HKDevicePlacementSide", "HKWaterSalinity",
        "HKCyclingFunctionalThresholdPowerTestType", "HKMaximumLightIntensity", "HKHeadphoneGain",
        "HKAppleFitnessPlusSession", "HKPrescriptionType",
    ]

    /// HealthKit's well-known keys.
    public enum WellKnownKey {
        /// `HKMetadataKeySyncIdentifier`: with a sync version, identifies an object across saves.
        public static let syncIdentifier = "HKMetadataKeySyncIdentifier"
        /// `HKMetadataKeySyncVersion`: an integer; a higher version replaces a lower one.
        public static let syncVersion = "HKMetadataKeySyncVersion"
        /// `HKWasUserEntered`.
        public static let wasUserEntered = "HKWasUserEntered"
        /// `HKTimeZone`.
        public static let timeZone = "HKTimeZone"
        /// `HKWorkoutBrandName`: the brand of a workout (the tutorial's "Prancercise").
        public static let workoutBrandName = "HKWorkoutBrandName"
        /// `HKExternalUUID`.
        public static let externalUUID = "HKExternalUUID"
    }

    /// The sync identifier and version, when both are present. Throws `invalidField`
    /// when only one is present or the version is not an integer (HealthKit requires
    /// both together).
    public func syncIdentity() throws -> (identifier: String, version: Int64)? {
        if entries.isEmpty { return nil }  // neither key (every sample's validation asks)
        let id = self[WellKnownKey.syncIdentifier], version = self[WellKnownKey.syncVersion]
        switch (id, version) {
        case (nil, nil):
            return nil
        case (.string(let s)?, .integer(let v)?):
            return (s, v)
        case (.string(let s)?, .number(let d)?) where d == d.rounded() && abs(d) < 9e15:
            return (s, Int64(d))
        case (.string(let s)?, .string(let text)?) where Int64(text) != nil:
            return (s, Int64(text)!)
        case (_?, nil), (nil, _?):
            throw HealthModelError.invalidField(field: "metadata",
                reason: "\(WellKnownKey.syncIdentifier) and \(WellKnownKey.syncVersion) must be given together")
        default:
            throw HealthModelError.invalidField(field: "metadata",
                reason: "\(WellKnownKey.syncIdentifier) must be a string and \(WellKnownKey.syncVersion) an integer")
        }
    }

    /// Checks every number is finite and every date in `ISO8601.validRange`.
    func validate() throws {
        for entry in entries {
            if case .number(let d) = entry.value, !d.isFinite {
                throw HealthModelError.nonFiniteValue(field: "metadata[\(entry.key)]")
            }
            if case .date(let d) = entry.value { try ISO8601.checkRange(d, field: "metadata[\(entry.key)]") }
        }
        _ = try syncIdentity()
    }
}
