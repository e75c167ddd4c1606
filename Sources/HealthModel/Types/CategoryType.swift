/// A HealthKit category type (`HKCategoryTypeIdentifierSleepAnalysis`, …) with the
/// values it admits.
///
/// `code` is the stable number in the event format: the index in `table`, which is
/// append-only.
public struct CategoryType: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Stable code: the index in the append-only table.
    public let code: UInt16

    struct Descriptor: Sendable {
        let shortName: String
        /// (value, short name, older names HealthKit also wrote). Empty: only `notApplicable` (0).
        let values: [(Int, String, [String])]
        /// The HealthKit value enumeration after `HKCategoryValue` when several types share
        /// one (`Severity`, `Presence`, `VaginalBleeding`); `nil`: the type's own
        /// (`HKCategoryValueSleepAnalysis…`).
        let valueEnum: String?

        init(shortName: String, values: [(Int, String, [String])], valueEnum: String? = nil) {
            self.shortName = shortName
            self.values = values
            self.valueEnum = valueEnum
        }

        /// A type whose values are a shared HealthKit enumeration.
        init(_ shortName: String, _ shared: SharedValues) {
            self.init(shortName: shortName, values: shared.values, valueEnum: shared.name)
        }
    }

    /// A value enumeration several category types share (from Apple's documentation of
    /// `HKCategoryValueSeverity`, `HKCategoryValuePresence`, `HKCategoryValueVaginalBleeding`).
    struct SharedValues: Sendable {
        let name: String
        let values: [(Int, String, [String])]

        /// `HKCategoryValueSeverity`: symptoms.
        static let severity = SharedValues(name: "Severity", values: [
            (0, "unspecified", []), (1, "notPresent", []), (2, "mild", []), (3, "moderate", []), (4, "severe", [])])
        /// `HKCategoryValuePresence`: mood and sleep changes.
        static let presence = SharedValues(name: "Presence", values: [(0, "present", []), (1, "notPresent", [])])
        /// `HKCategoryValueVaginalBleeding`: bleeding during or after pregnancy, after menopause.
        static let vaginalBleeding = SharedValues(name: "VaginalBleeding", values: [
            (1, "unspecified", []), (2, "light", []), (3, "medium", []), (4, "heavy", []), (5, "none", [])])
        /// `HKCategoryValuePregnancyTestResult` / `…ProgesteroneTestResult` (same numbers, own names).
        static func testResult(_ name: String) -> SharedValues {
            SharedValues(name: name, values: [(1, "negative", []), (2, "positive", []), (3, "indeterminate", [])])
        }
    }

    init(uncheckedCode code: UInt16) { self.code = code }

    /// The type with stable code `code`, or `nil`.
    public init?(code: UInt16) {
        guard Int(code) < Self.table.count else { return nil }
        self.code = code
    }

    /// Looks up by raw identifier (`HKCategoryTypeIdentifierSleepAnalysis`) or short
    /// form (`sleepAnalysis`); throws `dataTypeNotAvailable`.
    public init(identifier: String) throws {
        guard let found = Self.byName[identifier] else {
            throw HealthModelError.dataTypeNotAvailable(identifier: identifier)
        }
        self = found
    }

    var descriptor: Descriptor { Self.table[Int(code)] }
    /// `sleepAnalysis`.
    public var shortName: String { descriptor.shortName }
    /// `HKCategoryTypeIdentifierSleepAnalysis`.
    public var identifier: String { "HKCategoryTypeIdentifier" + Self.capitalized(shortName) }
    /// The short name.
    public var description: String { shortName }

    public static func < (lhs: CategoryType, rhs: CategoryType) -> Bool { lhs.code < rhs.code }

    /// Every value the type admits, with HealthKit's raw name
    /// (`HKCategoryValueSleepAnalysisAsleepCore`) and short name (`asleepCore`).
    public var values: [(value: Int, rawName: String, shortName: String)] {
        if descriptor.values.isEmpty { return [(0, "HKCategoryValueNotApplicable", "notApplicable")] }
        let prefix = "HKCategoryValue" + (descriptor.valueEnum ?? Self.capitalized(shortName))
        return descriptor.values.map { ($0.0, prefix + Self.capitalized($0.1), $0.1) }
    }

    /// HealthKit's raw name of `value`, or `nil` when the type does not define it.
    public func rawName(of value: Int) -> String? {
        values.first { $0.value == value }?.rawName
    }

    /// The value named by a raw name, a short name, an older HealthKit name
    /// (`HKCategoryValueSleepAnalysisAsleep`) or a decimal number; throws
    /// `invalidCategoryValue` naming type and value.
    public func value(named name: String) throws -> Int {
        for entry in values where entry.rawName == name || entry.shortName == name { return entry.value }
        for (value, _, aliases) in descriptor.values {
            let prefix = "HKCategoryValue" + (descriptor.valueEnum ?? Self.capitalized(shortName))
            for alias in aliases where alias == name || prefix + Self.capitalized(alias) == name {
                return value
            }
        }
        if let number = Int(name) {
            try validate(number)
            return number
        }
        throw HealthModelError.invalidCategoryValue(type: identifier, value: name)
    }

    /// Throws `invalidCategoryValue` unless the type defines `value`.
    public func validate(_ value: Int) throws {
        // `values`' numbers, without building their names (decoding checks every sample).
        let defined = descriptor.values.isEmpty ? value == 0 : descriptor.values.contains { $0.0 == value }
        guard defined else {
            throw HealthModelError.invalidCategoryValue(type: identifier, value: String(value))
        }
    }

    /// Every category type, in code order.
    public static var allTypes: [CategoryType] { (0..<table.count).map { CategoryType(uncheckedCode: UInt16($0)) } }

    static func capitalized(_ s: String) -> String { s.prefix(1).uppercased() + s.dropFirst() }

    // APPEND-ONLY: the index is the stable code.
    static let table: [Descriptor] = [
        /* 0 */ Descriptor(shortName: "sleepAnalysis", values: [
            (0, "inBed", []), (1, "asleepUnspecified", ["asleep"]), (2, "awake", []),
            (3, "asleepCore", []), (4, "asleepDeep", []), (5, "asleepREM", [])]),
        /* 1 */ Descriptor(shortName: "appleStandHour", values: [(0, "stood", []), (1, "idle", [])]),
        /* 2 */ Descriptor(shortName: "mindfulSession", values: []),
        /* 3 */ Descriptor(shortName: "highHeartRateEvent", values: []),
        /* 4 */ Descriptor(shortName: "lowHeartRateEvent", values: []),
        /* 5 */ Descriptor(shortName: "irregularHeartRhythmEvent", values: []),
        /* 6 */ Descriptor(shortName: "menstrualFlow", values: [
            (1, "unspecified", []), (2, "light", []), (3, "medium", []), (4, "heavy", []), (5, "none", [])]),
        /* 7 */ Descriptor(shortName: "headphoneAudioExposureEvent", values: [(1, "sevenDayLimit", [])]),
        /* 8 */ Descriptor(shortName: "environmentalAudioExposureEvent", values: [(1, "momentaryLimit", [])]),
        /* 9 */ Descriptor(shortName: "toothbrushingEvent", values: []),
        /* 10 */ Descriptor(shortName: "handwashingEvent", values: []),
        /* 11 */ Descriptor(shortName: "sexualActivity", values: []),
        /* 12 */ Descriptor(shortName: "intermenstrualBleeding", values: []),
        /* 13 */ Descriptor(shortName: "cervicalMucusQuality", values: [
            (1, "dry", []), (2, "sticky", []), (3, "creamy", []), (4, "watery", []), (5, "eggWhite", [])]),
        /* 14 */ Descriptor(shortName: "ovulationTestResult", values: [
            (1, "negative", []), (2, "luteinizingHormoneSurge", ["positive"]),
            (3, "indeterminate", []), (4, "estrogenSurge", [])]),
        /* 15 */ Descriptor(shortName: "appleWalkingSteadinessEvent", values: [
            (1, "initialLow", []), (2, "initialVeryLow", []), (3, "repeatLow", []), (4, "repeatVeryLow", [])]),
        /* 16 */ Descriptor(shortName: "lowCardioFitnessEvent", values: [(1, "lowFitness", [])]),
        /* 17 */ Descriptor(shortName: "audioExposureEvent", values: [(1, "loudEnvironment", [])]),
        // Added from Apple's HKCategoryTypeIdentifier documentation (iOS 13.6–27): symptoms
        // (HKCategoryValueSeverity), cycle and pregnancy facts (HKCategoryValueNotApplicable),
        // and the types with their own values.
        /* 18 */ Descriptor("abdominalCramps", .severity),
        /* 19 */ Descriptor("acne", .severity),
        /* 20 */ Descriptor("bladderIncontinence", .severity),
        /* 21 */ Descriptor("bloating", .severity),
        /* 22 */ Descriptor("breastPain", .severity),
        /* 23 */ Descriptor("chestTightnessOrPain", .severity),
        /* 24 */ Descriptor("chills", .severity),
        /* 25 */ Descriptor("constipation", .severity),
        /* 26 */ Descriptor("coughing", .severity),
        /* 27 */ Descriptor("diarrhea", .severity),
        /* 28 */ Descriptor("dizziness", .severity),
        /* 29 */ Descriptor("drySkin", .severity),
        /* 30 */ Descriptor("fainting", .severity),
        /* 31 */ Descriptor("fatigue", .severity),
        /* 32 */ Descriptor("fever", .severity),
        /* 33 */ Descriptor("generalizedBodyAche", .severity),
        /* 34 */ Descriptor("hairLoss", .severity),
        /* 35 */ Descriptor("headache", .severity),
        /* 36 */ Descriptor("heartburn", .severity),
        /* 37 */ Descriptor("hotFlashes", .severity),
        /* 38 */ Descriptor("lossOfSmell", .severity),
        /* 39 */ Descriptor("lossOfTaste", .severity),
        /* 40 */ Descriptor("lowerBackPain", .severity),
        /* 41 */ Descriptor("memoryLapse", .severity),
        /* 42 */ Descriptor("nausea", .severity),
        /* 43 */ Descriptor("nightSweats", .severity),
        /* 44 */ Descriptor("pelvicPain", .severity),
        /* 45 */ Descriptor("rapidPoundingOrFlutteringHeartbeat", .severity),
        /* 46 */ Descriptor("runnyNose", .severity),
        /* 47 */ Descriptor("shortnessOfBreath", .severity),
        /* 48 */ Descriptor("sinusCongestion", .severity),
        /* 49 */ Descriptor("skippedHeartbeat", .severity),
        /* 50 */ Descriptor("soreThroat", .severity),
        /* 51 */ Descriptor("vaginalDryness", .severity),
        /* 52 */ Descriptor("vomiting", .severity),
        /* 53 */ Descriptor("wheezing", .severity),
        /* 54 */ Descriptor("moodChanges", .presence),
        /* 55 */ Descriptor("sleepChanges", .presence),
        /* 56 */ Descriptor(shortName: "appetiteChanges", values: [
            (0, "unspecified", []), (1, "noChange", []), (2, "decreased", []), (3, "increased", [])]),
        /* 57 */ Descriptor(shortName: "contraceptive", values: [
            (1, "unspecified", []), (2, "implant", []), (3, "injection", []), (4, "intrauterineDevice", []),
            (5, "intravaginalRing", []), (6, "oral", []), (7, "patch", [])]),
        /* 58 */ Descriptor("pregnancyTestResult", .testResult("PregnancyTestResult")),
        /* 59 */ Descriptor("progesteroneTestResult", .testResult("ProgesteroneTestResult")),
        /* 60 */ Descriptor("bleedingDuringPregnancy", .vaginalBleeding),
        /* 61 */ Descriptor("bleedingAfterPregnancy", .vaginalBleeding),
        /* 62 */ Descriptor("bleedingAfterMenopause", .vaginalBleeding),
        /* 63 */ Descriptor(shortName: "infrequentMenstrualCycles", values: []),
        /* 64 */ Descriptor(shortName: "irregularMenstrualCycles", values: []),
        /* 65 */ Descriptor(shortName: "lactation", values: []),
        /* 66 */ Descriptor(shortName: "persistentIntermenstrualBleeding", values: []),
        /* 67 */ Descriptor(shortName: "pregnancy", values: []),
        /* 68 */ Descriptor(shortName: "prolongedMenstrualPeriods", values: []),
        /* 69 */ Descriptor(shortName: "sleepApneaEvent", values: []),
        /* 70 */ Descriptor(shortName: "hypertensionEvent", values: []),
    ]

    static let byName: [String: CategoryType] = {
        var names: [String: CategoryType] = [:]
        for i in table.indices {
            let type = CategoryType(uncheckedCode: UInt16(i))
            names[type.identifier] = type
            names[type.shortName] = type
        }
        return names
    }()

    /// `sleepAnalysis`.
    public static let sleepAnalysis = CategoryType(uncheckedCode: 0)
    /// `appleStandHour`.
    public static let appleStandHour = CategoryType(uncheckedCode: 1)
    /// `mindfulSession`.
    public static let mindfulSession = CategoryType(uncheckedCode: 2)
    /// `highHeartRateEvent`.
    public static let highHeartRateEvent = CategoryType(uncheckedCode: 3)
    /// `lowHeartRateEvent`.
    public static let lowHeartRateEvent = CategoryType(uncheckedCode: 4)
    /// `irregularHeartRhythmEvent`.
    public static let irregularHeartRhythmEvent = CategoryType(uncheckedCode: 5)
    /// `menstrualFlow`.
    public static let menstrualFlow = CategoryType(uncheckedCode: 6)
}
