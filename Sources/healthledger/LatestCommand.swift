import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

/// `healthledger latest`: the most recent sample of a type, as an app (or the owner) sees it.
enum LatestCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] latest (--app ID | --owner) TYPE [--unit U] [--locale ID] [--now T] [--json]

        The most recent sample as the tutorial defines it: from the distant past to now
        (--now to pick another instant), strictEndDate, newest start first, limit 1 — a
        sample dated in the future is not "most recent". A quantity is shown in --unit,
        else in the preferred unit (`preferred-unit`: the owner's choice, else
        --locale's, default en_US); --json keeps the stored value and unit and adds
        "converted" and "convertedUnit".

        \(ExitStatus.table)
        """

    static let command = Command(name: "latest", abstract: "The most recent sample of a type", help: help) { args, global in
        if handledHelp(&args, help) { return }
        guard let identity = try Identity.read(&args) else { return }
        let unitOption = try args.option("--unit").map { try HealthUnit($0) }
        let locale = try args.option("--locale") ?? "en_US"
        let nowText = try args.option("--now")
        let type = try Parse.type(try args.required("TYPE"))
        try args.finish()
        var view = try LedgerView.read(global, as: identity)
        let zone = global.timeZone(ledgerZone: view.ownerTimeZone)
        let now = try nowText.map { try Parse.date($0, "--now", zone: zone) } ?? Date()
        guard let sample = try view.mostRecentSample(for: type, now: now) else {
            throw CLIError.notFound("noData: no \(type.identifier) sample before \(ISO8601.string(now))")
        }
        if case .quantity(let q) = sample {
            let unit = unitOption ?? view.preferredUnit(for: q.type, locale: locale)
            let value = try q.quantity.doubleValue(for: unit)
            if global.json {
                var o = SampleJSON.object(sample)
                o.set("converted", value)
                o.set("convertedUnit", unit.canonicalString)
                Output.line(o.string)
            } else {
                Output.line("\(JSONObject.number(value)) \(unit)  \(ISO8601.string(sample.startDate))  \(sample.common.source?.bundleIdentifier ?? "?")")
            }
            return
        }
        guard unitOption == nil else { throw CLIError.usage("--unit applies to quantity types") }
        QueryCommand.print([sample], json: global.json)
    }
}
