import Foundation
import HealthModel

/// Everything a report shows, gathered once (`ReportGatherer`) and drawn by
/// `ReportHTML`: values only, no I/O.
public struct HealthReportData: Sendable {
    /// A value on a local day (a day number, `LocalDays`).
    public struct DayValue: Sendable, Equatable {
        public let day: Int
        public let value: Double
        public init(day: Int, value: Double) {
            self.day = day
            self.value = value
        }
    }

    /// A day's minimum, mean and maximum over `count` samples.
    public struct DayRange: Sendable, Equatable {
        public let day: Int
        public let min: Double
        public let mean: Double
        public let max: Double
        public let count: Int
    }

    /// One night (the noon-to-noon window ending on `day`): hours per sleep stage, in
    /// `ReportGatherer.sleepStages` order, overlaps between sources counted once.
    public struct Night: Sendable, Equatable {
        public let day: Int
        public let hours: [Double]
        public let inBed: Double
    }

    /// A week (Monday-based week number) and its workouts per activity type, in
    /// `workoutTypes` order.
    public struct WorkoutWeek: Sendable, Equatable {
        public let week: Int
        public let counts: [Int]
    }

    /// A measured value with where and when it came from.
    public struct Measured: Sendable, Equatable {
        public let text: String
        public let date: Date
        public let source: String
    }

    /// The profile, as the viewer may read it.
    public struct Profile: Sendable, Equatable {
        public var age: Int?
        public var sex: BiologicalSex = .notSet
        public var bloodType: BloodType = .notSet
        public var height: Measured?
        public var weight: Measured?
        /// The BMI from the latest weight and height, to two decimals in the locale.
        public var bodyMassIndex: String?
        public var bodyMassIndexDate: Date?
    }

    /// Samples of one type from one source and device.
    public struct SourceCount: Sendable, Equatable {
        /// The type's short name (`stepCount`).
        public let type: String
        /// HealthKit's identifier (`HKQuantityTypeIdentifierStepCount`).
        public let identifier: String
        public let source: String
        public let device: String
        public let count: Int
    }

    /// One event of the audit timeline.
    public struct TimelineEntry: Sendable, Equatable {
        public let sequence: UInt64
        public let recordedAt: Date
        /// The app the event concerns (bundle identifier), nil for the owner's own.
        public let app: String?
        public let actor: String
        public let kind: String
        public let what: String
    }

    /// The ledger's integrity at report time.
    public struct Integrity: Sendable, Equatable {
        public var intact: Bool
        /// Whether the whole `verify` ran (events and snapshots too), not only the log's check.
        public var full: Bool
        public var problems: [String]
        public var events: UInt64
        public var logBytes: UInt64
        public var chainHead: String
        /// The projections' digest (full verify only).
        public var projectionDigest: String?
        /// The Merkle tree head (`index/merkle.bin`): size and base64 root.
        public var checkpoint: (size: UInt64, root: String)?

        public static func == (a: Integrity, b: Integrity) -> Bool {
            a.intact == b.intact && a.full == b.full && a.problems == b.problems && a.events == b.events && a.logBytes == b.logBytes
                && a.chainHead == b.chainHead && a.projectionDigest == b.projectionDigest
                && a.checkpoint?.size == b.checkpoint?.size && a.checkpoint?.root == b.checkpoint?.root
        }
    }

    /// A chart the report could not draw, and why: shown where the charts are, never
    /// left out silently (a day whose steps do not add up to a finite number, …).
    public struct NotDrawn: Sendable, Equatable {
        /// The chart's id (`steps`, `heart-rate`, …: its figure's is `fig-` + id).
        public let id: String
        public let title: String
        public let reason: String
        public init(id: String, title: String, reason: String) {
            self.id = id
            self.title = title
            self.reason = reason
        }
    }

    /// `owner` or the app's bundle identifier.
    public var viewer: String
    public var appBundle: String?
    public var from: Date?
    public var to: Date?
    public var timeZone: TimeZone
    public var locale: Locale
    public var generatedAt: Date
    /// The command that rebuilds this report.
    public var command: String

    public var profile = Profile()
    /// Every body mass sample: (start, kg).
    public var bodyMass: [(Double, Double)] = []
    /// The 7-day trailing mean of the daily means, on each day with a weight.
    public var bodyMassAverage: [DayValue] = []
    /// BMI: stored samples, or (when none is stored) each weight over the latest height then.
    public var bodyMassIndex: [(Double, Double)] = []
    public var bodyMassIndexComputed = false
    public var heartRate: [DayRange] = []
    public var restingHeartRate: [DayValue] = []
    public var sleep: [Night] = []
    public var workoutTypes: [String] = []
    public var workouts: [WorkoutWeek] = []
    /// Daily step counts from the statistics engine (sources merged by priority).
    public var steps: [DayValue] = []
    /// Daily active energy (kcal) from the statistics engine (sources merged by priority).
    public var activeEnergy: [DayValue] = []
    public var sources: [SourceCount] = []
    /// Per charted cumulative type, the source order in force (first wins); empty for
    /// an app (the order is the owner's to see).
    public var priorities: [(type: String, sources: [String])] = []
    /// Charts the data could not be drawn for (gathering found values that do not add
    /// up to finite numbers); `ReportHTML` adds those whose values it finds so.
    public var notDrawn: [NotDrawn] = []
    public var timeline: [TimelineEntry] = []
    /// Timeline entries left out past the report's limit.
    public var timelineOmitted = 0
    public var integrity = Integrity(intact: false, full: false, problems: [], events: 0, logBytes: 0, chainHead: "", projectionDigest: nil)
}
