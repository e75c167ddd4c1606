import Foundation

/// HealthKit's `preferredUnits(for:)` without a device: the unit a person expects to
/// read a quantity type in, from the locale's region (the Health app's defaults), and
/// the owner's own choice over it.
///
/// Regions that measure in US customary units (`US`, `LR`, `MM`): body mass and lean
/// body mass in `lb`, height, waist and step length in `in` (people read height as
/// feet and inches: `PersonFormatting.height`), distances in `mi` (swimming in `yd`),
/// speeds in `mi/hr`, temperatures in `degF`, water in `fl_oz_us`. Everywhere else
/// the metric units (`kg`, `cm`, `km`, `m`, `km/hr`, `degC`, `mL`). Heart and
/// respiratory rates in `count/min` everywhere. A type not named here is read in its
/// canonical unit in every region (`kcal`, `%`, `count`, …).
public enum PreferredUnits {
    /// The regions whose people measure in US customary units.
    public static let customaryRegions: Set<String> = ["US", "LR", "MM"]

    /// The region of a locale identifier (`en_US` → `US`, `fr-CA` → `CA`,
    /// `en_US@calendar=gregorian` → `US`); nil when the identifier names none.
    public static func region(ofLocale identifier: String) -> String? {
        let base = identifier.split(separator: "@", maxSplits: 1).first.map(String.init) ?? identifier
        let parts = base.split(whereSeparator: { $0 == "_" || $0 == "-" })
        for part in parts.dropFirst() where (part.count == 2 && part.allSatisfy(\.isLetter)) || (part.count == 3 && part.allSatisfy(\.isNumber)) {
            return part.uppercased()
        }
        return nil
    }

    /// Whether a locale measures in US customary units.
    public static func usesCustomaryUnits(locale identifier: String) -> Bool {
        region(ofLocale: identifier).map(customaryRegions.contains) ?? false
    }

    /// The unit the locale reads `type` in (no owner choice applied).
    public static func unit(for type: QuantityType, locale identifier: String) -> HealthUnit {
        let customary = usesCustomaryUnits(locale: identifier)
        guard let pair = byType[type.code] else { return type.canonicalUnit }
        return customary ? pair.customary : pair.metric
    }

    /// The unit to show `type` in: the owner's choice when there is one, else the
    /// locale's.
    public static func unit(for type: QuantityType, locale identifier: String, ownerChoice: [QuantityType: HealthUnit]) -> HealthUnit {
        ownerChoice[type] ?? unit(for: type, locale: identifier)
    }

    /// Throws `unitNotAllowed` unless `unit` measures what `type` measures (a
    /// preference must convert).
    public static func check(_ unit: HealthUnit, for type: QuantityType) throws(HealthModelError) {
        guard unit.isCompatible(with: type.canonicalUnit) else {
            throw .unitNotAllowed(type: type.identifier, unit: unit.canonicalString, expectedDimension: type.dimension.description)
        }
    }

    private static let byType: [UInt16: (customary: HealthUnit, metric: HealthUnit)] = {
        var table: [UInt16: (customary: HealthUnit, metric: HealthUnit)] = [:]
        func set(_ names: [String], _ customary: String, _ metric: String) {
            for name in names {
                guard let type = try? QuantityType(identifier: name) else { preconditionFailure("no quantity type \(name)") }
                table[type.code] = (try! HealthUnit(customary), try! HealthUnit(metric))
            }
        }
        set(["bodyMass", "leanBodyMass"], "lb", "kg")
        set(["height", "waistCircumference", "walkingStepLength"], "in", "cm")
        set(["distanceWalkingRunning", "distanceCycling", "distanceWheelchair", "distanceDownhillSnowSports",
             "distanceRowing", "distancePaddleSports", "distanceSkatingSports", "distanceCrossCountrySkiing"], "mi", "km")
        set(["distanceSwimming"], "yd", "m")
        set(["walkingSpeed", "runningSpeed", "cyclingSpeed", "rowingSpeed", "paddleSportsSpeed", "crossCountrySkiingSpeed"],
            "mi/hr", "km/hr")
        set(["bodyTemperature", "basalBodyTemperature", "waterTemperature", "appleSleepingWristTemperature"], "degF", "degC")
        set(["dietaryWater"], "fl_oz_us", "mL")
        // Rates people read per minute whatever the region (the canonical unit is per second).
        set(["heartRate", "respiratoryRate"], "count/min", "count/min")
        return table
    }()
}
