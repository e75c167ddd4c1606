import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

/// `healthledger profile`: the tutorial's Profile & BMI screen, as an app (or the owner) sees it.
enum ProfileCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] profile (--app ID | --owner) [--now T] [--locale ID] [--json]

        The tutorial's Profile & BMI screen: age (completed years on --now's date in the
        owner's time zone; a date alone is that day's start there), height and weight in
        the owner's preferred unit when they chose one (`preferred-unit set`),
        sex, blood type, height and weight (most recent samples, formatted for people in
        --locale, default en_US), and BMI to two decimals — as the app sees them: what
        it may not read looks unset.

        \(ExitStatus.table)
        """

    static let command = Command(name: "profile", abstract: "The Profile & BMI screen, as an app sees it", help: help) { args, global in
        if handledHelp(&args, help) { return }
        guard let identity = try Identity.read(&args) else { return }
        let nowText = try args.option("--now")
        let locale = Locale(identifier: try args.option("--locale") ?? "en_US")
        try args.finish()
        var view = try LedgerView.read(global, as: identity)
        let zone = global.timeZone(ledgerZone: view.ownerTimeZone)
        let now = try nowText.map { try Parse.date($0, "--now", zone: zone) } ?? Date()
        let screen = try ProfileScreen.read(from: &view, now: now, locale: locale, timeZone: zone)
        if global.json {
            var o = JSONObject()
            o.set("age", screen.age)
            o.set("biologicalSex", screen.biologicalSex.rawName)
            o.set("bloodType", screen.bloodType.displayName)
            o.set("height", screen.heightText)
            o.set("weight", screen.weightText)
            o.set("bodyMassIndex", screen.bodyMassIndexText)
            Output.line(o.string)
        } else {
            for line in screen.lines { Output.line(line) }
        }
    }
}
