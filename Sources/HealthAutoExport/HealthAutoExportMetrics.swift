import HealthModel

/// Health Auto Export's metric names (snake_case, as its JSON pushes name them) and
/// the HealthKit types they come from. A metric not here is kept raw, counted, never
/// dropped (`HealthAutoExportPayload.raw`).
enum HealthAutoExportMetrics {
    /// Metrics of one quantity type, one point one sample.
    static let quantities: [String: QuantityType] = [
        "step_count": .stepCount,
        "active_energy": .activeEnergyBurned,
        "basal_energy_burned": .basalEnergyBurned,
        "walking_running_distance": .distanceWalkingRunning,
        "cycling_distance": .distanceCycling,
        "swimming_distance": .distanceSwimming,
        "flights_climbed": .flightsClimbed,
        "resting_heart_rate": .restingHeartRate,
        "walking_heart_rate_average": .walkingHeartRateAverage,
        "heart_rate_variability": .heartRateVariabilitySDNN,
        "respiratory_rate": .respiratoryRate,
        "blood_oxygen_saturation": .oxygenSaturation,
        "weight_body_mass": .bodyMass,
        "body_mass_index": .bodyMassIndex,
        "body_fat_percentage": .bodyFatPercentage,
        "lean_body_mass": .leanBodyMass,
        "height": .height,
        "body_temperature": .bodyTemperature,
        "dietary_water": .dietaryWater,
        "dietary_energy": .dietaryEnergyConsumed,
        "apple_exercise_time": .appleExerciseTime,
        "apple_stand_time": .appleStandTime,
        "vo2_max": .vo2Max,
        "walking_speed": .walkingSpeed,
        "six_minute_walking_test_distance": .sixMinuteWalkTestDistance,
        "environmental_audio_exposure": .environmentalAudioExposure,
        "headphone_audio_exposure": .headphoneAudioExposure,
        "time_in_daylight": .timeInDaylight,
        "blood_glucose": .bloodGlucose,
        "insulin_delivery": .insulinDelivery,
    ]

    /// Metrics with a shape of their own.
    static let heartRate = "heart_rate"
    static let bloodPressure = "blood_pressure"
    static let sleep = "sleep_analysis"
    static let mindful = "mindful_minutes"

    /// Health Auto Export's workout names → HealthKit's activity types; any other name
    /// is `.other` (the name kept in the workout's metadata).
    static let workouts: [String: WorkoutActivityType] = [
        "running": .running, "outdoor run": .running, "indoor run": .running, "cycling": .cycling, "outdoor cycle": .cycling,
        "indoor cycle": .cycling, "walking": .walking, "outdoor walk": .walking, "indoor walk": .walking, "swimming": .swimming,
        "pool swim": .swimming, "open water swim": .swimming, "hiking": .hiking, "yoga": .yoga, "rowing": .rowing,
        "elliptical": .elliptical, "stair stepper": .stairClimbing, "hiit": .highIntensityIntervalTraining,
        "high intensity interval training": .highIntensityIntervalTraining,
        "functional strength training": .functionalStrengthTraining,
        "traditional strength training": .traditionalStrengthTraining, "core training": .coreTraining, "dance": .socialDance,
        "pilates": .pilates, "tennis": .tennis, "soccer": .soccer, "basketball": .basketball, "cooldown": .cooldown,
    ]

    /// Its unaggregated sleep stages → `sleepAnalysis` values.
    static let sleepStages: [String: String] = [
        "in bed": "inBed", "inbed": "inBed", "asleep": "asleepUnspecified", "unspecified": "asleepUnspecified",
        "awake": "awake", "core": "asleepCore", "deep": "asleepDeep", "rem": "asleepREM",
    ]
}
