import Foundation
import HealthModel

extension StateDifference {
    /// The first difference of the statistics projections (after everything else
    /// compared equal): a slot's value or manual flag (keyed by the sample's UUID), a
    /// type's source priority, the grant order.
    static func statisticsDifference(_ a: LedgerState, _ b: LedgerState) -> StateDifference? {
        let s = a.statistics, t = b.statistics
        // As buffers (a mapped column's blocks all checked first: the values its
        // subscript gives), so that the loop is plain loads.
        let first: Int? = s.values.withUnsafeBufferPointer { sv in
            t.values.withUnsafeBufferPointer { tv in
                s.userEntered.withUnsafeBufferPointer { su in
                    t.userEntered.withUnsafeBufferPointer { tu in
                        for slot in 0..<max(sv.count, tv.count) {
                            guard slot < sv.count, slot < tv.count, sv[slot].bitPattern == tv[slot].bitPattern else { return slot }
                            precondition(slot < su.count && slot < tu.count, "index in range")  // as the subscripts were
                            if su[slot] != tu[slot] { return slot }
                        }
                        return nil
                    }
                }
            }
        }
        if let slot = first {
            let uuid = StateDifference.key(a.samples, slot)
            return StateDifference(projection: "statistics", key: uuid)
        }
        for code in Set(s.priorities.keys).union(t.priorities.keys).sorted() where s.priority(code) != t.priority(code) {
            return StateDifference(projection: "sourcePriorities", key: ObjectType(code: code)?.identifier ?? String(code))
        }
        if s.grantOrder != t.grantOrder { return StateDifference(projection: "statistics", key: "grantOrder") }
        return nil
    }
}
