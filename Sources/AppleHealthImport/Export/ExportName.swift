/// Element and attribute names of the Apple Health export format (the DTDs of
/// export versions 3–13), interned first so that their ids are these raw values.
enum ExportName: Int, CaseIterable {
    // Elements.
    case HealthData, ExportDate, Me, Record, MetadataEntry, HeartRateVariabilityMetadataList
    case InstantaneousBeatsPerMinute, Correlation, Workout, WorkoutEvent, WorkoutStatistics, WorkoutRoute
    case FileReference, Location, ActivitySummary
    // Attributes.
    case type, sourceName, sourceVersion, unit, creationDate, startDate, endDate, value, device, key, locale
    case bpm, time, workoutActivityType, duration, durationUnit, totalDistance, totalDistanceUnit
    case totalEnergyBurned, totalEnergyBurnedUnit, date, average, minimum, maximum, sum, path
    case latitude, longitude, altitude, horizontalAccuracy, verticalAccuracy, course, speed, dateComponents
    case activeEnergyBurned, activeEnergyBurnedGoal, activeEnergyBurnedUnit, appleMoveTime, appleMoveTimeGoal
    case appleExerciseTime, appleExerciseTimeGoal, appleStandHours, appleStandHoursGoal

    /// The names in id order, for `XMLScanner(predefinedNames:)`.
    static let all: [String] = allCases.map { String(describing: $0) }

    /// The id as the scanner reports it.
    var id: Int { rawValue }
}
