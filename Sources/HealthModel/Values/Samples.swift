import Foundation

/// A quantity sample (HKQuantitySample).
///
/// Invariant: the quantity's unit converts to the type's canonical unit, and a
/// percentage type's value is a fraction 0…1.
public struct QuantitySample: SampleValue {
    public let common: SampleCommon
    /// The quantity type.
    public let type: QuantityType
    /// The measured amount, in the unit it was given in (kept as given, never rounded).
    public let quantity: Quantity
    /// For a heart-rate-variability sample, the beats it was computed from (exports
    /// carry them), else empty.
    public let beats: [InstantaneousBeat]

    /// Validates and builds (see the type's invariants and `SampleCommon`).
    public init(type: QuantityType, quantity: Quantity, start: Date, end: Date, uuid: UUID = UUID(),
                metadata: Metadata = Metadata(), device: Device? = nil, source: Source? = nil,
                creationDate: Date? = nil) throws {
        try type.validate(quantity)
        self.common = try SampleCommon(uuid: uuid, startDate: start, endDate: end, metadata: metadata, device: device,
                                       source: source, creationDate: creationDate, field: type.shortName)
        self.type = type
        self.quantity = quantity
        self.beats = []
    }

    /// Re-validates a sample decoded from storage (or read from an export) against
    /// the common part.
    /// `checkingRange: false` reads back a value a log holds (accepted when written).
    public init(type: QuantityType, quantity: Quantity, common: SampleCommon, beats: [InstantaneousBeat] = [],
                checkingRange: Bool = true) throws {
        try type.validate(quantity, checkingRange: checkingRange)
        self.common = common
        self.type = type
        self.quantity = quantity
        self.beats = beats
    }
}

/// A category sample (HKCategorySample): a type and one of the values it admits.
public struct CategorySample: SampleValue {
    public let common: SampleCommon
    /// The category type.
    public let type: CategoryType
    /// A value the type defines (see `CategoryType.values`).
    public let value: Int

    /// Validates (`invalidCategoryValue`, dates, metadata) and builds.
    public init(type: CategoryType, value: Int, start: Date, end: Date, uuid: UUID = UUID(),
                metadata: Metadata = Metadata(), device: Device? = nil, source: Source? = nil,
                creationDate: Date? = nil) throws {
        try type.validate(value)
        self.common = try SampleCommon(uuid: uuid, startDate: start, endDate: end, metadata: metadata, device: device,
                                       source: source, creationDate: creationDate, field: type.shortName)
        self.type = type
        self.value = value
    }

    /// Builds from a validated common part.
    public init(type: CategoryType, value: Int, common: SampleCommon) throws {
        try type.validate(value)
        self.common = common
        self.type = type
        self.value = value
    }
}

/// A correlation (HKCorrelation): samples recorded together, such as systolic and
/// diastolic blood pressure, or the nutrients of one food entry.
///
/// Invariant: every member is a quantity sample of a type the correlation admits,
/// with distinct UUIDs different from the correlation's own.
public struct Correlation: SampleValue {
    public let common: SampleCommon
    /// The correlation type.
    public let type: CorrelationType
    /// The member samples.
    public let objects: [QuantitySample]

    /// Validates and builds.
    public init(type: CorrelationType, start: Date, end: Date, objects: [QuantitySample], uuid: UUID = UUID(),
                metadata: Metadata = Metadata(), device: Device? = nil, source: Source? = nil,
                creationDate: Date? = nil) throws {
        let common = try SampleCommon(uuid: uuid, startDate: start, endDate: end, metadata: metadata, device: device,
                                      source: source, creationDate: creationDate, field: type.shortName)
        try self.init(type: type, objects: objects, common: common)
    }

    /// Builds from a validated common part.
    public init(type: CorrelationType, objects: [QuantitySample], common: SampleCommon) throws {
        for member in objects where !type.admits(member.type) {
            throw HealthModelError.invalidField(field: "\(type.shortName) objects",
                                                reason: "\(member.type.identifier) is not a member type of \(type.identifier)")
        }
        var seen: Set<UUID> = [common.uuid]
        for member in objects where !seen.insert(member.uuid).inserted {
            throw HealthModelError.invalidField(field: "\(type.shortName) objects", reason: "UUID \(member.uuid) appears twice")
        }
        self.common = common
        self.type = type
        self.objects = objects
    }
}

/// An event inside a workout (HKWorkoutEvent).
public struct WorkoutEvent: Hashable, Sendable {
    /// HKWorkoutEventType, with HealthKit's raw values.
    public enum Kind: Int, Hashable, Sendable, CaseIterable {
        case pause = 1, resume, lap, marker, motionPaused, motionResumed, segment, pauseOrResumeRequest

        /// `HKWorkoutEventTypePause`, …
        public var identifier: String {
            let name = String(describing: self)
            return "HKWorkoutEventType" + name.prefix(1).uppercased() + name.dropFirst()
        }

        /// Looks up by raw name, short name or number.
        public init(name: String) throws {
            guard let found = Self.allCases.first(where: { $0.identifier == name || String(describing: $0) == name })
                    ?? Int(name).flatMap(Kind.init(rawValue:)) else {
                throw HealthModelError.invalidField(field: "workout event type", reason: "unknown '\(name)'")
            }
            self = found
        }
    }

    public let kind: Kind
    /// When the event starts.
    public let date: Date
    /// How long it lasts (0 for an instant).
    public let duration: TimeInterval
    public let metadata: Metadata

    /// Validates (finite date and duration ≥ 0) and builds.
    public init(kind: Kind, date: Date, duration: TimeInterval = 0, metadata: Metadata = Metadata()) throws {
        guard date.timeIntervalSince1970.isFinite else { throw HealthModelError.nonFiniteValue(field: "workout event date") }
        try ISO8601.checkRange(date, field: "workout event date")
        guard duration.isFinite else { throw HealthModelError.nonFiniteValue(field: "workout event duration") }
        guard duration >= 0 else {
            throw HealthModelError.valueOutOfRange(field: "workout event duration", value: duration, range: "≥ 0")
        }
        try metadata.validate()
        self.kind = kind
        self.date = date
        self.duration = duration
        self.metadata = metadata
    }
}

/// Statistics of one quantity type over a workout, as exports write them
/// (WorkoutStatistics); values are in `unit`.
public struct WorkoutStatistic: Hashable, Sendable {
    public let type: TypeIdentifier
    public let startDate: Date
    public let endDate: Date
    public let average: Double?
    public let minimum: Double?
    public let maximum: Double?
    public let sum: Double?
    /// The unit string as written (kept verbatim).
    public let unit: String?

    public init(type: TypeIdentifier, startDate: Date, endDate: Date, average: Double? = nil, minimum: Double? = nil,
                maximum: Double? = nil, sum: Double? = nil, unit: String? = nil) {
        self.type = type
        self.startDate = startDate
        self.endDate = endDate
        self.average = average
        self.minimum = minimum
        self.maximum = maximum
        self.sum = sum
        self.unit = unit
    }
}

/// One point of a workout route (CLLocation's fields as exports write them).
public struct RouteLocation: Hashable, Sendable {
    public let date: Date
    public let latitude: Double
    public let longitude: Double
    public let altitude: Double?
    public let horizontalAccuracy: Double?
    public let verticalAccuracy: Double?
    public let course: Double?
    public let speed: Double?

    public init(date: Date, latitude: Double, longitude: Double, altitude: Double? = nil,
                horizontalAccuracy: Double? = nil, verticalAccuracy: Double? = nil, course: Double? = nil,
                speed: Double? = nil) {
        self.date = date
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.course = course
        self.speed = speed
    }
}

/// A workout's route: where a file reference points (`/workout-routes/….gpx`) and
/// the points, when they were available.
public struct WorkoutRoute: Hashable, Sendable {
    public let sourceName: String?
    public let sourceVersion: String?
    public let creationDate: Date?
    public let startDate: Date?
    public let endDate: Date?
    public let fileReference: String?
    public let locations: [RouteLocation]
    public let metadata: Metadata

    public init(sourceName: String? = nil, sourceVersion: String? = nil, creationDate: Date? = nil,
                startDate: Date? = nil, endDate: Date? = nil, fileReference: String? = nil,
                locations: [RouteLocation] = [], metadata: Metadata = Metadata()) {
        self.sourceName = sourceName
        self.sourceVersion = sourceVersion
        self.creationDate = creationDate
        self.startDate = startDate
        self.endDate = endDate
        self.fileReference = fileReference
        self.locations = locations
        self.metadata = metadata
    }
}

/// A workout (HKWorkout).
///
/// Invariants: `duration` is finite and ≥ 0; total energy is an energy and total
/// distance a length; every event lies within [start, end].
public struct Workout: SampleValue {
    public let common: SampleCommon
    public let activityType: WorkoutActivityType
    /// Active time in seconds (may be less than end − start when paused).
    public let duration: TimeInterval
    public let totalEnergyBurned: Quantity?
    public let totalDistance: Quantity?
    public let events: [WorkoutEvent]
    public let statistics: [WorkoutStatistic]
    public let routes: [WorkoutRoute]
    /// The workout's segments (HKWorkout.workoutActivities), by start date. They are
    /// not part of the saved sample: the ledger records them as their own events
    /// (`workoutActivitiesAdded`) and its readers attach them (`withActivities`).
    public private(set) var activities: [WorkoutActivity] = []

    /// This workout with `activities` (sorted by start, then end, then UUID string),
    /// as a reader returns it.
    public func withActivities(_ activities: [WorkoutActivity]) -> Workout {
        var copy = self
        copy.activities = activities.sorted {
            ($0.startDate, $0.endDate, $0.uuid.uuidString) < ($1.startDate, $1.endDate, $1.uuid.uuidString)
        }
        return copy
    }

    /// Validates and builds; `duration` defaults to end − start.
    public init(activityType: WorkoutActivityType, start: Date, end: Date, duration: TimeInterval? = nil,
                totalEnergyBurned: Quantity? = nil, totalDistance: Quantity? = nil, events: [WorkoutEvent] = [],
                uuid: UUID = UUID(), metadata: Metadata = Metadata(), device: Device? = nil, source: Source? = nil,
                creationDate: Date? = nil, statistics: [WorkoutStatistic] = [], routes: [WorkoutRoute] = []) throws {
        let common = try SampleCommon(uuid: uuid, startDate: start, endDate: end, metadata: metadata, device: device,
                                      source: source, creationDate: creationDate, field: "workout")
        try self.init(activityType: activityType, duration: duration ?? end.timeIntervalSince(start),
                      totalEnergyBurned: totalEnergyBurned, totalDistance: totalDistance, events: events,
                      statistics: statistics, routes: routes, common: common)
    }

    /// Builds from a validated common part.
    public init(activityType: WorkoutActivityType, duration: TimeInterval, totalEnergyBurned: Quantity?,
                totalDistance: Quantity?, events: [WorkoutEvent], statistics: [WorkoutStatistic] = [],
                routes: [WorkoutRoute] = [], common: SampleCommon, checkingRange: Bool = true) throws {
        guard duration.isFinite else { throw HealthModelError.nonFiniteValue(field: "workout duration") }
        if checkingRange {
            for (name, total, canonical) in [("totalEnergyBurned", totalEnergyBurned, HealthUnit.kilocalorie),
                                             ("totalDistance", totalDistance, HealthUnit.meter)] {
                guard let total else { continue }
                if total.value < 0 {
                    throw HealthModelError.valueOutOfRange(field: "workout \(name)", value: total.value,
                                                           range: "≥ 0 \(total.unit.canonicalString)")
                }
                // as a quantity sample's values: at most 1e15 in the canonical unit (sums stay finite)
                let inCanonical = (try? total.doubleValue(for: canonical)) ?? total.value
                if !(inCanonical <= QuantityValueRange.maximumMagnitude) {
                    throw HealthModelError.valueOutOfRange(field: "workout \(name)", value: total.value,
                                                           range: QuantityValueRange.nonNegative.upperText(unit: canonical.canonicalString))
                }
            }
        }
        guard duration >= 0 else {
            throw HealthModelError.valueOutOfRange(field: "workout duration", value: duration, range: "≥ 0")
        }
        if let energy = totalEnergyBurned, energy.unit.dimension != HealthUnit.kilocalorie.dimension {
            throw HealthModelError.unitNotAllowed(type: "workout totalEnergyBurned", unit: energy.unit.canonicalString,
                                                  expectedDimension: HealthUnit.kilocalorie.dimension.description)
        }
        if let distance = totalDistance, distance.unit.dimension != HealthUnit.meter.dimension {
            throw HealthModelError.unitNotAllowed(type: "workout totalDistance", unit: distance.unit.canonicalString,
                                                  expectedDimension: HealthUnit.meter.dimension.description)
        }
        for event in events where event.date < common.startDate || event.date > common.endDate {
            throw HealthModelError.invalidField(field: "workout events",
                                                reason: "\(event.kind.identifier) at \(ISO8601.string(event.date)) is outside the workout")
        }
        // Statistics and routes have plain initializers; their dates are checked here.
        for statistic in statistics {
            try ISO8601.checkRange(statistic.startDate, field: "workout statistic startDate")
            try ISO8601.checkRange(statistic.endDate, field: "workout statistic endDate")
        }
        for route in routes {
            for (date, name) in [(route.creationDate, "creationDate"), (route.startDate, "startDate"), (route.endDate, "endDate")] {
                if let date { try ISO8601.checkRange(date, field: "workout route \(name)") }
            }
            for location in route.locations { try ISO8601.checkRange(location.date, field: "workout route location date") }
            for entry in route.metadata.entries {
                if case .date(let d) = entry.value { try ISO8601.checkRange(d, field: "workout route metadata[\(entry.key)]") }
            }
        }
        self.common = common
        self.activityType = activityType
        self.duration = duration
        self.totalEnergyBurned = totalEnergyBurned
        self.totalDistance = totalDistance
        self.events = events
        self.statistics = statistics
        self.routes = routes
    }
}

/// A record whose type this version does not know, or that lacks a value or unit
/// its type requires: kept with its raw strings so that nothing is lost.
public struct UnrecognizedSample: SampleValue {
    public let common: SampleCommon
    /// The type identifier as written.
    public let typeIdentifier: String
    /// The value as written, if any.
    public let value: String?
    /// The unit as written, if any.
    public let unit: String?
    /// Why it was kept raw (`no value`, `unknown type`, `unit 'x' does not fit …`),
    /// with anything of the original the common part could not hold.
    public let reason: String?

    public init(typeIdentifier: String, value: String?, unit: String?, reason: String? = nil, common: SampleCommon) {
        self.common = common
        self.typeIdentifier = typeIdentifier
        self.value = value
        self.unit = unit
        self.reason = reason
    }
}

/// A sample of any kind.
public indirect enum Sample: Hashable, Sendable {
    case quantity(QuantitySample)
    case category(CategorySample)
    case correlation(Correlation)
    case workout(Workout)
    case unrecognized(UnrecognizedSample)

    /// The common part.
    public var common: SampleCommon {
        switch self {
        case .quantity(let s): s.common
        case .category(let s): s.common
        case .correlation(let s): s.common
        case .workout(let s): s.common
        case .unrecognized(let s): s.common
        }
    }

    /// The sample's type.
    public var type: TypeIdentifier {
        switch self {
        case .quantity(let s): .known(.quantity(s.type))
        case .category(let s): .known(.category(s.type))
        case .correlation(let s): .known(.correlation(s.type))
        case .workout: .known(.workout)
        case .unrecognized(let s): TypeIdentifier(parsing: s.typeIdentifier)
        }
    }

    public var uuid: UUID { common.uuid }
    public var startDate: Date { common.startDate }
    public var endDate: Date { common.endDate }
}
