import Foundation
import HealthModel
import LedgerReporting

/// `healthledger preferred-unit`: HKHealthStore.preferredUnits(for:) and the owner's
/// choice of unit per quantity type (an event).
enum PreferredUnitCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] preferred-unit [--app ID | --owner] [TYPE...] [--locale ID] [--json]
               healthledger [--ledger PATH] preferred-unit set TYPE UNIT
               healthledger [--ledger PATH] preferred-unit clear TYPE

        HealthKit's preferredUnits(for:): the unit each quantity TYPE is shown in —
        the owner's choice when they made one, else the locale's (--locale, default
        en_US: lb, in, mi, mi/hr, degF, fl_oz_us; metric elsewhere: kg, cm, km, km/hr,
        degC, mL; other types in their canonical unit). Without TYPE: every quantity
        type. As in HealthKit, an app (--app ID) must have asked to share or read each
        type (exit 5 otherwise). `latest`, `profile` and `query` use these units when
        --unit is absent.

        `set` records the owner's choice (an event; UNIT must measure what TYPE
        measures, exit 3 otherwise); `clear` goes back to the locale's unit.

        \(ExitStatus.table)
        """

    static let command = Command(name: "preferred-unit", abstract: "Preferred units per quantity type (show, set, clear)",
                                 help: help) { args, global in
        if handledHelp(&args, help) { return }
        switch args.words.first {
        case "set":
            _ = args.positional()
            let type = try quantityType(try args.required("TYPE"))
            let unit = try HealthUnit(try args.required("UNIT"))
            try args.finish()
            try await withStore(global, .owner) { _, _, owner in try await owner.setPreferredUnit(unit, for: type) }
            Output.line(global.json ? "{\"type\":\(JSONObject.quote(type.shortName)),\"unit\":\(JSONObject.quote(unit.canonicalString))}"
                                    : "\(type.shortName)\t\(unit)")
        case "clear":
            _ = args.positional()
            let type = try quantityType(try args.required("TYPE"))
            try args.finish()
            try await withStore(global, .owner) { _, _, owner in try await owner.setPreferredUnit(nil, for: type) }
        default:
            let identity = try Identity.read(&args, required: false) ?? .owner
            let locale = try args.option("--locale") ?? "en_US"
            var types: [QuantityType] = []
            while let text = args.positional() { types.append(try quantityType(text)) }
            try args.finish()
            if types.isEmpty { types = QuantityType.allTypes }
            let view = try LedgerView.read(global, as: identity)
            if case .app(let bundle) = identity, let type = view.firstTypeNotRequested(types) {
                throw CLIError(status: ExitStatus.refused,
                               message: "authorizationNotDetermined: \(bundle) never asked to share or read \(type.identifier)")
            }
            if global.json {
                var o = JSONObject()
                for type in types { o.set(type.shortName, view.preferredUnit(for: type, locale: locale).canonicalString) }
                Output.line(o.string)
            } else {
                for type in types { Output.line("\(type.shortName)\t\(view.preferredUnit(for: type, locale: locale))") }
            }
        }
    }

    static func quantityType(_ text: String) throws -> QuantityType {
        guard case .quantity(let q) = try Parse.type(text) else {
            throw CLIError.invalidInput("wrongKindOfType: \(text) is not a quantity type (preferred units are for quantities)")
        }
        return q
    }
}
