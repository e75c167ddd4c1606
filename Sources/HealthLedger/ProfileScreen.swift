import Foundation
import HealthModel
import LedgerCore
import LedgerReporting

/// The tutorial's "Profile & BMI" screen: age, sex, blood type, height, weight and
/// BMI, read the way the tutorial's app reads them (characteristics through the
/// store, height and weight as the most recent samples).
public struct ProfileScreen: Sendable, Equatable {
    public init(age: Int?, biologicalSex: BiologicalSex, bloodType: BloodType, height: Quantity?, weight: Quantity?,
                heightText: String?, weightText: String?, bodyMassIndexText: String?, bodyMassIndex: Quantity?) {
        self.age = age
        self.biologicalSex = biologicalSex
        self.bloodType = bloodType
        self.height = height
        self.weight = weight
        self.heightText = heightText
        self.weightText = weightText
        self.bodyMassIndexText = bodyMassIndexText
        self.bodyMassIndex = bodyMassIndex
    }

    public let age: Int?
    public let biologicalSex: BiologicalSex
    public let bloodType: BloodType
    public let height: Quantity?
    public let weight: Quantity?
    /// The height as a person reads it (`5 ft, 8.898 in`, `175 cm`).
    public let heightText: String?
    /// The weight as a person reads it (`154.324 lb`, `70 kg`).
    public let weightText: String?
    /// kg/m² to two decimals (`22.86`), or nil without height and weight.
    public let bodyMassIndexText: String?
    public let bodyMassIndex: Quantity?

    /// Reads the profile for an app, in one read of the ledger. `now` fixes "today"
    /// for the age (tests pass a fixed date); `locale` chooses the units people read.
    public static func load(from store: HealthStore, now: Date = Date(), locale: Locale = Locale(identifier: "en_US"),
                            timeZone: TimeZone = TimeZone(identifier: "UTC")!) async throws -> ProfileScreen {
        try await store.read { view in try read(from: &view, now: now, locale: locale, timeZone: timeZone) }
    }

    /// The profile as `view`'s viewer sees it: what it may not read looks unset.
    /// Characteristics through the read view, height and weight as the most recent
    /// samples the viewer may see; `timeZone` gives the calendar day of `now`.
    public static func read(from view: inout LedgerReadView, now: Date, locale: Locale, timeZone: TimeZone) throws -> ProfileScreen {
        var dob: DateOfBirth?
        if case .dateOfBirth(let d)? = view.characteristic(.dateOfBirth) { dob = d }
        var sex = BiologicalSex.notSet, blood = BloodType.notSet
        if case .biologicalSex(let v)? = view.characteristic(.biologicalSex) { sex = v }
        if case .bloodType(let v)? = view.characteristic(.bloodType) { blood = v }
        func quantity(_ s: Sample?) -> Quantity? { if case .quantity(let q)? = s { q.quantity } else { nil } }
        let h = quantity(try view.mostRecentSample(for: .quantity(.height), now: now))
        let w = quantity(try view.mostRecentSample(for: .quantity(.bodyMass), now: now))
        let bmi = try BodyMassIndex.compute(weight: w, height: h)
        /// In the owner's chosen unit, when they chose one (else the locale's formatting).
        func shown(_ q: Quantity, _ type: QuantityType) throws -> String? {
            guard let unit = view.ownerChosenUnit(for: type) else { return nil }
            return "\(JSONObject.number(try q.doubleValue(for: unit))) \(unit)"
        }
        return ProfileScreen(age: dob?.age(at: now, in: timeZone), biologicalSex: sex, bloodType: blood, height: h, weight: w,
                             heightText: try h.map { try shown($0, .height) ?? PersonFormatting.height($0, locale: locale) },
                             weightText: try w.map { try shown($0, .bodyMass) ?? PersonFormatting.bodyMass($0, locale: locale) },
                             bodyMassIndexText: bmi.map(BodyMassIndex.formatted), bodyMassIndex: bmi)
    }

    /// The screen as text, one line per row.
    public var lines: [String] {
        [
            "Age:         \(age.map(String.init) ?? "—")",
            "Sex:         \(biologicalSex.displayName)",
            "Blood type:  \(bloodType.displayName)",
            "Height:      \(heightText ?? "—")",
            "Weight:      \(weightText ?? "—")",
            "BMI:         \(bodyMassIndexText ?? "—")",
        ]
    }
}
