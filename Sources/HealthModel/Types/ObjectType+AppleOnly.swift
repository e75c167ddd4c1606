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

    static let appleOnlyCodes: Set<UInt16> = Set((appleOnlyQuantityTypes + appleOnlyCategoryTypes).compactMap {
        (try? ObjectType(identifier: $0))?.code
    } + [ObjectType.activitySummary.code])  // HKActivitySummaryType: the rings, read-only

    /// Whether only Apple computes this type: apps may read it, never share it.
    public var isAppleOnly: Bool { Self.appleOnlyCodes.contains(code) }
}
