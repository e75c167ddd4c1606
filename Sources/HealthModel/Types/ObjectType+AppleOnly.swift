/// The types only Apple computes (Apple Watch and iPhone): HealthKit lets apps read
/// them but refuses to let an app share (write) them — requesting share
/// authorization for one fails with errorAuthorizationDenied ("Authorization to share
/// the following types is disallowed"). Part of the type table.
///
/// Source, checked per type in Apple's documentation
/// (https://developer.apple.com/documentation/healthkit/hkquantitytypeidentifier/<name>
/// and …/hkcategorytypeidentifier/<name>): each page describes a value the system
/// records or estimates ("Apple Watch estimates…", "the system records…"); the list of
/// types refused for sharing is the one HealthKit enforces at run time (as also listed
/// by react-native-healthkit's `QuantityTypeIdentifierReadOnly`). Records of these
/// types from an Apple Health export are imported under the imported sources.
extension ObjectType {
    /// Short names of the quantity types only Apple computes.
    public static let appleOnlyQuantityTypes: [String] = [
        "appleExerciseTime", "appleStandTime", "appleMoveTime", "appleWalkingSteadiness", "walkingHeartRateAverage",
        "atrialFibrillationBurden", "appleSleepingWristTemperature", "appleSleepingBreathingDisturbances",
    ]

    /// Short names of the category types only Apple computes.
    public static let appleOnlyCategoryTypes: [String] = [
        "appleStandHour", "appleWalkingSteadinessEvent", "highHeartRateEvent", "lowHeartRateEvent",
        "irregularHeartRhythmEvent", "lowCardioFitnessEvent",
        // Apple Watch's breathing-disturbance and hypertension notifications, like its
        // heart-rate notifications above (…/hkcategorytypeidentifier/sleepapneaevent,
        // …/hypertensionevent).
        "sleepApneaEvent", "hypertensionEvent",
    ]

    static let appleOnlyCodes: [UInt16] = (appleOnlyQuantityTypes + appleOnlyCategoryTypes).compactMap {
        (try? ObjectType(identifier: $0))?.code
    } + [ObjectType.activitySummary.code]  // HKActivitySummaryType: the rings, read-only

    /// `appleOnlyCodes` as a bit per type code (codes are below 2^16: 1,024 words), so
    /// that the check replay makes for every saved sample is a load, not a hash.
    static let appleOnlyBits: [UInt64] = {
        var bits = [UInt64](repeating: 0, count: 1 << 10)
        for code in appleOnlyCodes { bits[Int(code) >> 6] |= 1 << (UInt64(code) & 63) }
        return bits
    }()

    /// Whether only Apple computes this type: apps may read it, never share it.
    public var isAppleOnly: Bool { Self.isAppleOnly(code: code) }

    /// Whether the type with this code is one only Apple computes (false for a code
    /// that names no type).
    @inline(__always)
    public static func isAppleOnly(code: UInt16) -> Bool {
        appleOnlyBits[Int(code) >> 6] & (1 << (UInt64(code) & 63)) != 0
    }
}
