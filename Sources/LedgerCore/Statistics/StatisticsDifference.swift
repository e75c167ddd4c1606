import Foundation
import HealthModel

extension StateDifference {
    /// The first difference of the statistics projections (after everything else
    /// compared equal): a slot's value or manual flag (keyed by the sample's UUID), a
    /// type's source priority, the grant order.
    static func statisticsDifference(_ a: LedgerState, _ b: LedgerState) -> StateDifference? {
        let s = a.statistics, t = b.statistics
        for slot in 0..<max(s.values.count, t.values.count) {
            let same = slot < s.values.count && slot < t.values.count && s.values[slot].bitPattern == t.values[slot].bitPattern
                && s.userEntered[slot] == t.userEntered[slot]
            if !same {
                let uuid = slot < a.samples.count ? a.samples.entry(UInt32(slot)).uuid.uuidString : "slot \(slot)"
                return StateDifference(projection: "statistics", key: uuid)
            }
        }
        for code in Set(s.priorities.keys).union(t.priorities.keys).sorted() where s.priority(code) != t.priority(code) {
            return StateDifference(projection: "sourcePriorities", key: ObjectType(code: code)?.identifier ?? String(code))
        }
        if s.grantOrder != t.grantOrder { return StateDifference(projection: "statistics", key: "grantOrder") }
        return nil
    }
}
