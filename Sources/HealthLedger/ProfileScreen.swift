import Foundation
import HealthModel
import LedgerCore

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

    /// Reads the profile for an app. `now` fixes "today" for the age (tests pass a
    /// fixed date); `locale` chooses the units people read.
    public static func load(from store: HealthStore, now: Date = Date(), locale: Locale = Locale(identifier: "en_US"),
                            timeZone: TimeZone = TimeZone(identifier: "UTC")!) async throws -> ProfileScreen {
        let dob = try? await store.dateOfBirthComponents()
        let height = try await store.mostRecentSample(for: .quantity(.height), now: now)
        let weight = try await store.mostRecentSample(for: .quantity(.bodyMass), now: now)
        func quantity(_ s: Sample?) -> Quantity? { if case .quantity(let q)? = s { q.quantity } else { nil } }
        let h = quantity(height), w = quantity(weight)
        let bmi = try BodyMassIndex.compute(weight: w, height: h)
        return ProfileScreen(age: dob?.age(at: now, in: timeZone), biologicalSex: try await store.biologicalSex(),
                             bloodType: try await store.bloodType(), height: h, weight: w,
                             heightText: try h.map { try PersonFormatting.height($0, locale: locale) },
                             weightText: try w.map { try PersonFormatting.bodyMass($0, locale: locale) },
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
