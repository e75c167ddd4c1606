/// One day's activity rings (HKActivitySummary), as exports write them.
///
/// Numbers are kept as written (`activeEnergyBurned` in `activeEnergyBurnedUnit`,
/// move and exercise time in minutes, stand hours as counts); attributes this
/// version does not know are kept verbatim in `otherAttributes`.
///
/// Invariant: `day` is a real calendar date; every number is finite.
public struct ActivitySummary: Hashable, Sendable {
    /// The calendar day the summary covers (HKActivitySummary's date components).
    public let day: DateOfBirth
    public let activeEnergyBurned: Double?
    public let activeEnergyBurnedGoal: Double?
    /// The unit of the two energy numbers as written (`kcal`, `kJ`).
    public let activeEnergyBurnedUnit: String?
    public let appleMoveTime: Double?
    public let appleMoveTimeGoal: Double?
    public let appleExerciseTime: Double?
    public let appleExerciseTimeGoal: Double?
    public let appleStandHours: Double?
    public let appleStandHoursGoal: Double?
    /// Attributes not named above, in the order written.
    public let otherAttributes: [MetadataEntry]

    /// Throws `nonFiniteValue` for a NaN or infinite number.
    public init(day: DateOfBirth, activeEnergyBurned: Double? = nil, activeEnergyBurnedGoal: Double? = nil,
                activeEnergyBurnedUnit: String? = nil, appleMoveTime: Double? = nil, appleMoveTimeGoal: Double? = nil,
                appleExerciseTime: Double? = nil, appleExerciseTimeGoal: Double? = nil, appleStandHours: Double? = nil,
                appleStandHoursGoal: Double? = nil, otherAttributes: [MetadataEntry] = []) throws {
        for (name, v) in [("activeEnergyBurned", activeEnergyBurned), ("activeEnergyBurnedGoal", activeEnergyBurnedGoal),
                          ("appleMoveTime", appleMoveTime), ("appleMoveTimeGoal", appleMoveTimeGoal),
                          ("appleExerciseTime", appleExerciseTime), ("appleExerciseTimeGoal", appleExerciseTimeGoal),
                          ("appleStandHours", appleStandHours), ("appleStandHoursGoal", appleStandHoursGoal)] {
            if let v, !v.isFinite { throw HealthModelError.nonFiniteValue(field: "activity summary \(name)") }
        }
        self.day = day
        self.activeEnergyBurned = activeEnergyBurned
        self.activeEnergyBurnedGoal = activeEnergyBurnedGoal
        self.activeEnergyBurnedUnit = activeEnergyBurnedUnit
        self.appleMoveTime = appleMoveTime
        self.appleMoveTimeGoal = appleMoveTimeGoal
        self.appleExerciseTime = appleExerciseTime
        self.appleExerciseTimeGoal = appleExerciseTimeGoal
        self.appleStandHours = appleStandHours
        self.appleStandHoursGoal = appleStandHoursGoal
        self.otherAttributes = otherAttributes
    }

    /// The numbers in a fixed order, for encoders.
    public var numbers: [Double?] {
        [activeEnergyBurned, activeEnergyBurnedGoal, appleMoveTime, appleMoveTimeGoal, appleExerciseTime,
         appleExerciseTimeGoal, appleStandHours, appleStandHoursGoal]
    }

    /// The attribute names of `numbers`, in the same order.
    public static let numberNames = ["activeEnergyBurned", "activeEnergyBurnedGoal", "appleMoveTime", "appleMoveTimeGoal",
                                     "appleExerciseTime", "appleExerciseTimeGoal", "appleStandHours", "appleStandHoursGoal"]

    /// A summary from `numbers` in the order of `numberNames`.
    public init(day: DateOfBirth, numbers: [Double?], activeEnergyBurnedUnit: String?, otherAttributes: [MetadataEntry]) throws {
        func at(_ i: Int) -> Double? { i < numbers.count ? numbers[i] : nil }
        try self.init(day: day, activeEnergyBurned: at(0), activeEnergyBurnedGoal: at(1),
                      activeEnergyBurnedUnit: activeEnergyBurnedUnit, appleMoveTime: at(2), appleMoveTimeGoal: at(3),
                      appleExerciseTime: at(4), appleExerciseTimeGoal: at(5), appleStandHours: at(6),
                      appleStandHoursGoal: at(7), otherAttributes: otherAttributes)
    }
}

/// One beat of a heart-rate-variability sample's beat list
/// (HeartRateVariabilityMetadataList/InstantaneousBeatsPerMinute in exports).
public struct InstantaneousBeat: Hashable, Sendable {
    /// Beats per minute.
    public let bpm: Double
    /// The time as written (`00:20:37,80`: a local time of day with a decimal comma,
    /// no date); kept verbatim.
    public let time: String

    /// Throws `nonFiniteValue` for a NaN or infinite rate.
    public init(bpm: Double, time: String) throws {
        guard bpm.isFinite else { throw HealthModelError.nonFiniteValue(field: "beat bpm") }
        self.bpm = bpm
        self.time = time
    }
}

/// The UTC offsets a sample's dates were written with (exports write local times,
/// `2019-06-17 21:07:11 -0400`), in seconds east of UTC, so the dates can be shown
/// as they were written.
public struct WrittenOffsets: Hashable, Sendable {
    public let start: Int
    public let end: Int
    /// The creation date's offset, when the sample has a creation date.
    public let creation: Int?

    public init(start: Int, end: Int, creation: Int?) {
        self.start = start
        self.end = end
        self.creation = creation
    }
}
