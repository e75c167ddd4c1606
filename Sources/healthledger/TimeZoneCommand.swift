import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

/// `healthledger timezone [ZONE]`: the owner's time zone, shown or set (an event).
enum TimeZoneCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] timezone [ZONE] [--json]

        Without ZONE: the owner's time zone the ledger keeps (UTC when none is set).
        With ZONE (an IANA name such as Pacific/Honolulu): records it as an event. Age,
        "today" and day boundaries are counted in it; --tz overrides it for one command.

        \(ExitStatus.table)
        """

    static let command = Command(name: "timezone", abstract: "Show or set the owner's time zone", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let zone = args.positional()
        try args.finish()
        let shown: String
        if let zone {
            try await withStore(global, .owner) { _, _, owner in try await owner.setTimeZone(zone) }
            shown = zone
        } else {
            shown = try LedgerView.read(global, as: .owner).ownerTimeZone ?? "UTC"
        }
        Output.line(global.json ? "{\"timeZone\":\(JSONObject.quote(shown))}" : shown)
    }
}
