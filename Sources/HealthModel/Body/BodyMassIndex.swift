import Foundation

/// Body mass index from a weight and a height.
public enum BodyMassIndex {
    /// BMI = mass in kg / (height in m)², as a `count` quantity (how HealthKit stores
    /// BMI). `nil` when either is missing or not positive. Any mass and length
    /// units work (`lb`, `ft`, `cm`, …); throws `incompatibleUnits` for a weight that
    /// is not a mass or a height that is not a length.
    public static func compute(weight: Quantity?, height: Quantity?) throws -> Quantity? {
        guard let weight, let height else { return nil }
        let kilograms = try weight.doubleValue(for: .kilogram)
        let meters = try height.doubleValue(for: .meter)
        // A weight or height of 0 or less is no measurement: no BMI (never a negative
        // one, nor a positive one from two negatives).
        guard meters > 0, kilograms > 0 else { return nil }
        return try Quantity(kilograms / (meters * meters), .count)
    }

    /// The BMI to two decimals, as the tutorial's profile screen shows it (`22.86`).
    public static func formatted(_ bmi: Quantity) -> String {
        let value = (try? bmi.doubleValue(for: .count)) ?? bmi.value
        return String(format: "%.2f", locale: Locale(identifier: "en_US_POSIX"), value)
    }
}

/// Formatting of body mass and height for people, through Foundation's
/// `MassFormatter` and `LengthFormatter` with their person-use settings.
public enum PersonFormatting {
    /// A body mass for display: `176.37 lb` in `en_US`, `80 kg` in `de_DE`.
    public static func bodyMass(_ mass: Quantity, locale: Locale) throws -> String {
        let formatter = MassFormatter()
        formatter.isForPersonMassUse = true
        formatter.numberFormatter.locale = locale
        return formatter.string(fromKilograms: try mass.doubleValue(for: .kilogram))
    }

    /// A height for display: `5 ft, 10.866 in` in `en_US`, `180 cm` in `de_DE`.
    public static func height(_ height: Quantity, locale: Locale) throws -> String {
        let formatter = LengthFormatter()
        formatter.isForPersonHeightUse = true
        formatter.numberFormatter.locale = locale
        return formatter.string(fromMeters: try height.doubleValue(for: .meter))
    }
}
