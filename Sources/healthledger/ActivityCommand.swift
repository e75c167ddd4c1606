import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

/// `healthledger activity`: HKActivitySummaryQuery over the recorded activity rings.
enum ActivityCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] activity (--app ID | --owner) [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--json]

        HKActivitySummaryQuery: the days of activity rings (imported from an Apple
        Health export) from --from to --to, both days included (calendar days, as
        HealthKit's date components), oldest first. One line per day: move (active
        energy) / goal, exercise minutes / goal, stand hours / goal; --json prints
        every recorded number by its export name. An app sees them once the owner
        granted it reading activitySummary (HKActivitySummaryType; read-only, as in
        HealthKit), and nothing before. --to before --from is exit 3.

        \(ExitStatus.table)
        """

    static let command = Command(name: "activity", abstract: "Activity summaries by day range (HKActivitySummaryQuery)",
                                 help: help) { args, global in
        if handledHelp(&args, help) { return }
        guard let identity = try Identity.read(&args) else { return }
        let start = try args.option("--from").map { try DateOfBirth(parsing: $0) }
        let end = try args.option("--to").map { try DateOfBirth(parsing: $0) }
        try args.finish()
        let query = try ActivitySummaryQuery(start: start, end: end)
        let view = try LedgerView.read(global, as: identity)
        for summary in view.activitySummaries(query) {
            Output.line(global.json ? ActivitySummaryJSON.object(summary).string : line(summary))
        }
    }

    /// `2019-05-05  move 420.5/500 kcal  exercise 32/30 min  stand 11/12 h`.
    static func line(_ a: ActivitySummary) -> String {
        func pair(_ value: Double?, _ goal: Double?) -> String {
            (value.map(JSONObject.number) ?? "–") + "/" + (goal.map(JSONObject.number) ?? "–")
        }
        return "\(a.day)  move \(pair(a.activeEnergyBurned, a.activeEnergyBurnedGoal)) \(a.activeEnergyBurnedUnit ?? "kcal")"
            + "  exercise \(pair(a.appleExerciseTime, a.appleExerciseTimeGoal)) min"
            + "  stand \(pair(a.appleStandHours, a.appleStandHoursGoal)) h"
    }
}
