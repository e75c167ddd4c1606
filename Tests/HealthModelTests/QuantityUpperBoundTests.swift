import Foundation
import Testing
import HealthModel

/// Every quantity type's values have an upper bound in the
/// canonical unit (1e15; sound levels 1,000 dB), so no sum a ledger can hold is
/// infinite; values already in a log are read back unchecked.
struct QuantityUpperBoundTests {
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    static let beyond = "(no measurement is larger, and sums must stay finite)"

    @Test func aValueBeyondTheTypesBoundIsRefusedAtSaveNamingTypeValueAndRange() throws {
        #expect(throws: HealthModelError.valueOutOfRange(field: "stepCount value", value: 1e308, range: "|value| ≤ 1e15 count \(Self.beyond)")) {
            try QuantitySample(type: .stepCount, quantity: try Quantity(1e308, .count), start: t0, end: t0)
        }
        #expect(HealthModelError.valueOutOfRange(field: "stepCount value", value: 1e308, range: "|value| ≤ 1e15 count \(Self.beyond)").description
                == "valueOutOfRange: stepCount value = 1e+308 is outside |value| ≤ 1e15 count \(Self.beyond)")
        // the bound is in the canonical unit, whatever unit the value comes in
        _ = try QuantitySample(type: .distanceWalkingRunning, quantity: try Quantity(1e12, unit: "km"), start: t0, end: t0)
        #expect(throws: HealthModelError.valueOutOfRange(field: "distanceWalkingRunning value", value: 1e13, range: "|value| ≤ 1e15 m \(Self.beyond)")) {
            try QuantitySample(type: .distanceWalkingRunning, quantity: try Quantity(1e13, unit: "km"), start: t0, end: t0)
        }
        // a unit whose scale overflows the canonical value: refused, not stored as infinity
        #expect(throws: HealthModelError.valueOutOfRange(field: "bodyMass value", value: 1e300, range: "|value| ≤ 1e15 kg \(Self.beyond)")) {
            try QuantitySample(type: .bodyMass, quantity: try Quantity(1e300, unit: "Tg^5/g^4"), start: t0, end: t0)
        }
        // heart rate in count/min is bounded as count/s: 1e15 count/s is 6e16 count/min
        _ = try QuantitySample(type: .heartRate, quantity: try Quantity(5.9e16, unit: "count/min"), start: t0, end: t0)
        #expect(throws: HealthModelError.valueOutOfRange(field: "heartRate value", value: 6.1e16, range: "|value| ≤ 1e15 count/s \(Self.beyond)")) {
            try QuantitySample(type: .heartRate, quantity: try Quantity(6.1e16, unit: "count/min"), start: t0, end: t0)
        }
        // temperatures: above absolute zero and bounded above
        #expect(throws: HealthModelError.valueOutOfRange(field: "bodyTemperature value", value: 1e16, range: "|value| ≤ 1e15 degC \(Self.beyond)")) {
            try QuantitySample(type: .bodyTemperature, quantity: try Quantity(1e16, unit: "degC"), start: t0, end: t0)
        }
        // sound levels: 10^(L/10) is averaged, so ±1,000 dB
        _ = try QuantitySample(type: .environmentalAudioExposure, quantity: try Quantity(-1000, unit: "dBASPL"), start: t0, end: t0)
        #expect(throws: HealthModelError.valueOutOfRange(field: "environmentalAudioExposure value", value: 1001, range: "-1000…1000 dBASPL")) {
            try QuantitySample(type: .environmentalAudioExposure, quantity: try Quantity(1001, unit: "dBASPL"), start: t0, end: t0)
        }
        #expect(throws: HealthModelError.valueOutOfRange(field: "environmentalAudioExposure value", value: -1e300, range: "-1000…1000 dBASPL")) {
            try QuantitySample(type: .environmentalAudioExposure, quantity: try Quantity(-1e300, unit: "dBASPL"), start: t0, end: t0)
        }
        // the lower bounds keep their texts
        #expect(throws: HealthModelError.valueOutOfRange(field: "stepCount value", value: -1, range: "≥ 0 count")) {
            try QuantitySample(type: .stepCount, quantity: try Quantity(-1, .count), start: t0, end: t0)
        }
    }

    @Test func everyTypeHasABoundAndTheBoundKeepsSumsFinite() throws {
        for type in QuantityType.allTypes {
            let range = type.validRange
            #expect(range.maximumMagnitude <= QuantityValueRange.maximumMagnitude, "\(type)")
            #expect(!range.contains(.infinity) && !range.contains(-.infinity) && !range.contains(.nan), "\(type)")
            #expect(!range.contains(range.maximumMagnitude.nextUp), "\(type)")
        }
        // 2^35 samples (more than a 1 TiB log holds) at the bound, in the smallest unit
        // of a length the parser knows (pm, 1e-12 m): finite
        let worst = QuantityValueRange.maximumMagnitude * 0x1p35 * 1e12
        #expect(worst.isFinite && worst < 1e300)
    }

    @Test func aWorkoutsTotalsAreBoundedAsSamplesAre() throws {
        let end = t0.addingTimeInterval(1800)
        #expect(throws: HealthModelError.valueOutOfRange(field: "workout totalEnergyBurned", value: 1e308, range: "|value| ≤ 1e15 kcal \(Self.beyond)")) {
            try Workout(activityType: .running, start: t0, end: end, totalEnergyBurned: try Quantity(1e308, unit: "kcal"))
        }
        #expect(throws: HealthModelError.valueOutOfRange(field: "workout totalDistance", value: 1e13, range: "|value| ≤ 1e15 m \(Self.beyond)")) {
            try Workout(activityType: .running, start: t0, end: end, totalDistance: try Quantity(1e13, unit: "km"))
        }
    }

    @Test func valuesReadBackFromALogAreNotRangeChecked() throws {
        let common = try SampleCommon(startDate: t0, endDate: t0)
        let old = try QuantitySample(type: .stepCount, quantity: try Quantity(1e308, .count), common: common, checkingRange: false)
        #expect(old.quantity.value == 1e308)
    }
}
