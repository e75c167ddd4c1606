import Foundation
import HealthModel

/// A comparison operator of a predicate.
public enum Comparison: String, Sendable, Hashable, CaseIterable {
    case equal = "=", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="

    func holds<T: Comparable>(_ a: T, _ b: T) -> Bool {
        switch self {
        case .equal: a == b
        case .notEqual: a != b
        case .less: a < b
        case .lessOrEqual: a <= b
        case .greater: a > b
        case .greaterOrEqual: a >= b
        }
    }
}

/// HealthKit's sample predicates beyond dates (`HKQuery.predicateForObjects(with:)`,
/// `…(from: sources)`, `…(withDeviceProperty:)`, `…(withMetadataKey:operatorType:value:)`,
/// `predicateForQuantitySamples(with:quantity:)`, `predicateForCategorySamples`,
/// workout predicates), combined with AND / OR / NOT. Evaluated on decoded samples
/// (`matches`); the read engine applies it after the index has selected by type,
/// time, visibility and source.
public indirect enum SamplePredicate: Sendable, Hashable {
    /// The sample's UUID is one of these.
    case uuids(Set<UUID>)
    /// Saved by one of these bundle identifiers.
    case sources(Set<String>)
    /// A device property equals a string.
    case device(DeviceProperty, String)
    /// The metadata has the key.
    case metadataExists(String)
    /// The metadata value under the key compares to an operand (same kind: a string
    /// to a string, a number to an integer or number, a date to a date, a quantity to
    /// a quantity in any compatible unit, a boolean to a boolean); a value of another
    /// kind, or a missing key, matches only `!=`.
    case metadata(String, Comparison, MetadataValue)
    /// A quantity sample's value compares to a quantity in any compatible unit (an
    /// incompatible unit matches nothing).
    case quantity(Comparison, Quantity)
    /// A category sample's value compares to a number.
    case categoryValue(Comparison, Int)
    /// A workout's activity type.
    case workoutActivity(WorkoutActivityType)
    /// A workout's duration in seconds.
    case workoutDuration(Comparison, Double)
    /// A workout's total energy burned / total distance (nil total: no match).
    case workoutEnergy(Comparison, Quantity)
    case workoutDistance(Comparison, Quantity)
    case and([SamplePredicate])
    case or([SamplePredicate])
    case not(SamplePredicate)

    /// HKDevice properties a predicate may name.
    public enum DeviceProperty: String, Sendable, Hashable, CaseIterable {
        case name, manufacturer, model, localIdentifier
    }

    /// Whether the sample satisfies the predicate.
    public func matches(_ sample: Sample) -> Bool {
        let c = sample.common
        switch self {
        case .uuids(let set): return set.contains(c.uuid)
        case .sources(let set): return c.source.map { set.contains($0.bundleIdentifier) } ?? false
        case .device(let property, let value):
            guard let d = c.device else { return false }
            switch property {
            case .name: return d.name == value
            case .manufacturer: return d.manufacturer == value
            case .model: return d.model == value
            case .localIdentifier: return d.localIdentifier == value
            }
        case .metadataExists(let key): return c.metadata[key] != nil
        case .metadata(let key, let op, let operand):
            guard let value = c.metadata[key], let order = Self.compare(value, operand) else { return op == .notEqual }
            return op.holds(order, 0)
        case .quantity(let op, let q):
            guard case .quantity(let s) = sample else { return false }
            return Self.compare(s.quantity, q).map { op.holds($0, 0) } ?? false
        case .categoryValue(let op, let v):
            guard case .category(let s) = sample else { return false }
            return op.holds(s.value, v)
        case .workoutActivity(let a):
            guard case .workout(let w) = sample else { return false }
            return w.activityType == a
        case .workoutDuration(let op, let seconds):
            guard case .workout(let w) = sample else { return false }
            return op.holds(w.duration, seconds)
        case .workoutEnergy(let op, let q):
            guard case .workout(let w) = sample, let e = w.totalEnergyBurned else { return false }
            return Self.compare(e, q).map { op.holds($0, 0) } ?? false
        case .workoutDistance(let op, let q):
            guard case .workout(let w) = sample, let d = w.totalDistance else { return false }
            return Self.compare(d, q).map { op.holds($0, 0) } ?? false
        case .and(let all): return all.allSatisfy { $0.matches(sample) }
        case .or(let any): return any.contains { $0.matches(sample) }
        case .not(let p): return !p.matches(sample)
        }
    }

    /// Whether every sample this predicate matches has `HKWasUserEntered` as its
    /// first value under that key, and that value is the boolean true — so that a
    /// quantity sample whose statistics flag (`StatisticsProjection.userEntered`: that
    /// first value says yes) is 0 cannot match, and the read engine skips it before
    /// decoding (`metadata.HKWasUserEntered = true`, alone or in an AND).
    var impliesUserEntered: Bool {
        switch self {
        case .metadata(let key, .equal, .bool(true)): key == Metadata.WellKnownKey.wasUserEntered
        case .and(let all): all.contains { $0.impliesUserEntered }
        default: false
        }
    }

    /// −1, 0, 1: `a` against `b` converted to `a`'s unit; nil when the units do not convert.
    static func compare(_ a: Quantity, _ b: Quantity) -> Int? {
        guard let other = try? b.doubleValue(for: a.unit) else { return nil }
        return a.value < other ? -1 : a.value > other ? 1 : 0
    }

    static func compare(_ a: MetadataValue, _ b: MetadataValue) -> Int? {
        func order<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : x > y ? 1 : 0 }
        switch (a, b) {
        case (.string(let x), .string(let y)): return order(x, y)
        case (.integer(let x), .integer(let y)): return order(x, y)
        case (.integer(let x), .number(let y)): return order(Double(x), y)
        case (.number(let x), .integer(let y)): return order(x, Double(y))
        case (.number(let x), .number(let y)): return order(x, y)
        case (.date(let x), .date(let y)): return order(x, y)
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (x ? 1 : -1)
        case (.quantity(let x), .quantity(let y)): return compare(x, y)
        default: return nil
        }
    }
}
