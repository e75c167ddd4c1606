import Foundation
import HealthModel

/// The profile projection: characteristics, the latest height and weight, BMI from
/// them, and age on a given date.
public struct Profile: Sendable, Hashable {
    public let dateOfBirth: DateOfBirth?
    public let biologicalSex: BiologicalSex
    public let bloodType: BloodType
    public let fitzpatrickSkinType: FitzpatrickSkinType
    public let wheelchairUse: WheelchairUse
    public let activityMoveMode: ActivityMoveMode?
    /// The latest height and weight samples (end at or before the profile's instant;
    /// greatest start, end, sequence).
    public let height: QuantitySample?
    public let weight: QuantitySample?

    /// kg / m², a `count` quantity; nil when a value is missing or the height is zero.
    public var bodyMassIndex: Quantity? {
        (try? BodyMassIndex.compute(weight: weight?.quantity, height: height?.quantity)) ?? nil
    }

    /// Completed years on the calendar day of `date` in `timeZone`.
    public func age(at date: Date, in timeZone: TimeZone = TimeZone(identifier: "UTC")!) -> Int? {
        dateOfBirth?.age(at: date, in: timeZone)
    }
}

extension LedgerState {
    /// The profile as the owner sees it (every source) at `instant`, samples read from
    /// the log: the latest height and weight end at or before `instant` (nil: the time
    /// of the state's last event, the replayed instant).
    package func profile(fetcher: inout SampleFetcher, at instant: Date? = nil) throws -> Profile {
        let bound = (instant ?? Date(timeIntervalSince1970: Double(lastRecordedAt) / 1e9)).timeIntervalSinceReferenceDate
        func latest(_ type: QuantityType) throws -> QuantitySample? {
            guard let slot = samples.latest(typeCode: ObjectType.quantity(type).code, endingBy: bound),
                  case .quantity(let s) = try fetcher.sample(slot, in: self) else { return nil }
            return s
        }
        func value<T>(_ type: CharacteristicType, _ extract: (CharacteristicValue) -> T?) -> T? {
            characteristics[type].flatMap(extract)
        }
        return Profile(
            dateOfBirth: value(.dateOfBirth) { if case .dateOfBirth(let v) = $0 { v } else { nil } },
            biologicalSex: value(.biologicalSex) { if case .biologicalSex(let v) = $0 { v } else { nil } } ?? .notSet,
            bloodType: value(.bloodType) { if case .bloodType(let v) = $0 { v } else { nil } } ?? .notSet,
            fitzpatrickSkinType: value(.fitzpatrickSkinType) { if case .fitzpatrickSkinType(let v) = $0 { v } else { nil } } ?? .notSet,
            wheelchairUse: value(.wheelchairUse) { if case .wheelchairUse(let v) = $0 { v } else { nil } } ?? .notSet,
            activityMoveMode: value(.activityMoveMode) { if case .activityMoveMode(let v) = $0 { v } else { nil } },
            height: try latest(.height), weight: try latest(.bodyMass))
    }
}
