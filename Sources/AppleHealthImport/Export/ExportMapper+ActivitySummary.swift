import Foundation
import HealthModel
import LedgerCore

extension ExportMapper {
    // MARK: ActivitySummary

    func activitySummary() throws(ImportError) -> ActivitySummary {
        let mark = pendingChildren.count
        guard let dayText = text(.dateComponents) else { throw invalid("an ActivitySummary without dateComponents") }
        let day: DateOfBirth
        do { day = try DateOfBirth(parsing: dayText) } catch { throw invalid("dateComponents '\(dayText)' is not a date") }
        var numbers = [Double?](repeating: nil, count: ActivitySummary.numberNames.count)
        var unit: String?
        var other: [MetadataEntry] = []
        for i in 0..<scanner.attributeCount {
            let name = scanner.name(scanner.attributeName(i))
            if let k = ActivitySummary.numberNames.firstIndex(of: name) {
                numbers[k] = try number(i, name)
            } else if name == "activeEnergyBurnedUnit" {
                // A unit of energy or the import is refused here, as for an unparsable
                // number: whatever else is written (markup, text) is never kept.
                let text = scanner.valueString(i)
                guard let parsed = try? HealthUnit(text), parsed.isCompatible(with: .kilocalorie) else {
                    throw invalid("activeEnergyBurnedUnit '\(text)' is not a unit of energy (kcal, kJ, Cal, …)")
                }
                unit = text
            } else if name != "dateComponents" {
                other.append(MetadataEntry(key: name, value: .string(scanner.valueString(i))))
            }
        }
        try keepChildrenToEnd(below: scanner.depth)
        try attachPendingChildren(from: mark, to: "ActivitySummary", [MetadataEntry(key: "dateComponents", value: .string(dayText))])
        do {
            return try ActivitySummary(day: day, numbers: numbers, activeEnergyBurnedUnit: unit, otherAttributes: other)
        } catch {
            throw invalid("ActivitySummary: \(error)")
        }
    }
}
