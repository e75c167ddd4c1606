import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

/// `healthledger priority set|show`: the owner's order of sources per quantity type.
enum PriorityCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] priority set TYPE [SOURCE...]
               healthledger [--ledger PATH] priority show TYPE [--json]

        The Health app's Data Sources & Access order, per quantity type: where samples
        of several sources overlap in time, a sum (`statistics --sum`) counts only the
        highest-ranked source in each stretch.

          set TYPE SOURCE...  the owner's order, best first (bundle identifiers of
                              registered sources), recorded as an event; sources not
                              listed rank below, in the default order. No SOURCE: back
                              to the default order. The order already in force: no event.
          show TYPE           the order in force among the listed sources and those
                              that saved TYPE, each marked `owner` (listed) or `default`

        HealthKit's default order: samples entered by hand (HKWasUserEntered) first,
        then Apple devices (Apple Watch before iPhone), then other apps in the order
        they were first granted sharing. Changes are events: `statistics --as-of T`
        gives the totals of the order in force at T.

        \(ExitStatus.table)
        """

    static let command = Command(name: "priority", abstract: "Set or show the order of sources for a type's sums", help: help) { args, global in
        if handledHelp(&args, help) { return }
        _ = args.flag("--owner")  // the owner's command; accepted for symmetry
        let action = try args.required("set or show")
        let typeText = try args.required("TYPE")
        guard case .quantity(let type) = try Parse.type(typeText) else {
            throw CLIError.invalidInput(StatisticsError.notAQuantityType(typeText).description)
        }
        switch action {
        case "set":
            let sources = args.remainingPositionals()
            try args.finish()
            try await withStore(global, .owner) { _, _, owner in try await owner.setSourcePriority(type, sources) }
            if global.json {
                Output.line("{\"type\":\(JSONObject.quote(type.shortName)),\"sources\":[\(sources.map(JSONObject.quote).joined(separator: ","))]}")
            } else {
                Output.line(sources.isEmpty ? "\(type.shortName): default order" : "\(type.shortName): \(sources.joined(separator: " > "))")
            }
        case "show":
            try args.finish()
            let order = try LedgerView.read(global, as: .owner).sourcePriority(of: type)
            for (i, (source, basis)) in order.enumerated() {
                if global.json {
                    Output.line("{\"rank\":\(i + 1),\"source\":\(JSONObject.quote(source)),\"basis\":\"\(basis.rawValue)\"}")
                } else {
                    Output.line("\(i + 1)\t\(source)\t\(basis.rawValue)")
                }
            }
        default:
            throw CLIError.usage("priority takes set or show")
        }
    }
}
