/// A workout activity type with HealthKit's raw values (HKWorkoutActivityType).
///
/// Prancercise, the tutorial's workout, is not a HealthKit activity type: it is
/// logged as `.other` with the metadata key `HKWorkoutBrandName` = "Prancercise"
/// (HealthKit's own key for a branded workout), so that any HealthKit reader
/// understands it and nothing is invented.
public enum WorkoutActivityType: UInt, Hashable, Sendable, CaseIterable {
    case americanFootball = 1, archery, australianFootball, badminton, baseball, basketball, bowling, boxing,
         climbing, cricket, crossTraining, curling, cycling, dance, danceInspiredTraining, elliptical,
         equestrianSports, fencing, fishing, functionalStrengthTraining, golf, gymnastics, handball, hiking,
         hockey, hunting, lacrosse, martialArts, mindAndBody, mixedMetabolicCardioTraining, paddleSports, play,
         preparationAndRecovery, racquetball, rowing, rugby, running, sailing, skatingSports, snowSports,
         soccer, softball, squash, stairClimbing, surfingSports, swimming, tableTennis, tennis, trackAndField,
         traditionalStrengthTraining, volleyball, walking, waterFitness, waterPolo, waterSports, wrestling,
         yoga, barre, coreTraining, crossCountrySkiing, downhillSkiing, flexibility,
         highIntensityIntervalTraining, jumpRope, kickboxing, pilates, snowboarding, stairs, stepTraining,
         wheelchairWalkPace, wheelchairRunPace, taiChi, mixedCardio, handCycling, discSports, fitnessGaming,
         cardioDance, socialDance, pickleball, cooldown
    case swimBikeRun = 82, transition, underwaterDiving
    case other = 3000

    /// HealthKit's Swift name, e.g. `running` (the case name; this type is deliberately
    /// not `CustomStringConvertible`, so `String(describing:)` yields it).
    public var shortName: String { String(describing: self) }
    /// The raw name in exports, e.g. `HKWorkoutActivityTypeRunning`.
    public var identifier: String {
        "HKWorkoutActivityType" + shortName.prefix(1).uppercased() + shortName.dropFirst()
    }

    /// Looks up by raw name, short name, `hiit`, or HealthKit's number;
    /// throws `unknownWorkoutActivityType`.
    public init(name: String) throws {
        if let found = Self.byName[name] {
            self = found
        } else if let number = UInt(name), let found = WorkoutActivityType(rawValue: number) {
            self = found
        } else {
            throw HealthModelError.unknownWorkoutActivityType(name)
        }
    }

    static let byName: [String: WorkoutActivityType] = {
        var names: [String: WorkoutActivityType] = ["hiit": .highIntensityIntervalTraining, "HIIT": .highIntensityIntervalTraining]
        for type in allCases {
            names[type.identifier] = type
            names[type.shortName] = type
        }
        return names
    }()
}
