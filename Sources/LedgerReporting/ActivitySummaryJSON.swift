import HealthModel
import LedgerCore

/// An activity summary as JSON: `day`, the numbers by their export names, the
/// energy unit, and other attributes verbatim.
package enum ActivitySummaryJSON {
    package static func object(_ a: ActivitySummary) -> JSONObject {
        var o = JSONObject()
        o.set("day", a.day.description)
        for (name, value) in zip(ActivitySummary.numberNames, a.numbers) where value != nil {
            o.set(name, value!)
        }
        o.set("activeEnergyBurnedUnit", a.activeEnergyBurnedUnit)
        for e in a.otherAttributes { o.set(e.key, e.value.description) }
        return o
    }
}
