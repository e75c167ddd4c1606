import Foundation
import HealthModel

extension SamplePredicate {
    /// `matches` for a sample read in place (`PlainQuantityBytes`): true or false when
    /// its bytes decide it exactly as `matches` decides the decoded sample, nil when
    /// only the decoded sample can (a value compared in a unit spelled otherwise than
    /// the sample's, a key that is not ASCII: canonical equivalence, which `Metadata`'s
    /// lookup uses, can equate it with another spelling). The read engine decodes the
    /// sample when this says nil.
    package func matches(_ s: PlainQuantityBytes) -> Bool? {
        switch self {
        case .uuids(let set): return set.contains(s.uuid)
        case .sources(let set): return s.bundleIdentifier.map { set.contains($0) } ?? false
        case .device: return false  // the common shape has no device
        case .metadataExists(let key):
            guard let found = s.firstMetadata(key) else { return nil }
            return found != nil
        case .metadata(let key, let op, let operand):
            guard let found = s.firstMetadata(key) else { return nil }
            guard let value = found, let order = Self.compare(value, operand) else { return op == .notEqual }
            return op.holds(order, 0)
        case .quantity(let op, let q):
            // `compare` converts the operand into the sample's unit, which is the operand's
            // value itself when the unit is the same: decided when spelled the same.
            var spelling = q.unit.spelling
            let same = spelling.withUTF8 { u in s.payload[s.unit].elementsEqual(u) }
            guard same else { return nil }
            return op.holds(s.value < q.value ? -1 : s.value > q.value ? 1 : 0, 0)
        case .categoryValue, .workoutActivity, .workoutDuration, .workoutEnergy, .workoutDistance: return false
        case .and(let all):
            var undecided = false
            for p in all {
                switch p.matches(s) {
                case false?: return false
                case nil: undecided = true
                case true?: continue
                }
            }
            return undecided ? nil : true
        case .or(let any):
            var undecided = false
            for p in any {
                switch p.matches(s) {
                case true?: return true
                case nil: undecided = true
                case false?: continue
                }
            }
            return undecided ? nil : false
        case .not(let p): return p.matches(s).map { !$0 }
        }
    }
}

extension PlainQuantityBytes {
    /// The first metadata value under `key` (`Metadata`'s subscript): `.some(nil)`
    /// when there is none, nil when the key is not ASCII (undecided here).
    func firstMetadata(_ key: String) -> HealthModel.MetadataValue?? {
        var key = key
        return key.withUTF8 { k -> HealthModel.MetadataValue?? in
            guard !k.contains(where: { $0 >= 0x80 }) else { return nil }
            var found: HealthModel.MetadataValue?
            forEachMetadata { name, value in
                guard found == nil, name.count == k.count, payload[name].elementsEqual(k) else { return }
                switch value {
                case .string(let r): found = .string(String(decoding: payload[r], as: UTF8.self))
                case .integer(let i): found = .integer(i)
                case .number(let d): found = .number(d)
                case .bool(let b): found = .bool(b)
                case .date(let d): found = .date(Date(timeIntervalSinceReferenceDate: d))
                }
            }
            return .some(found)
        }
    }
}
