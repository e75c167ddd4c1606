import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

/// `healthledger characteristic set|get|clear`.
enum CharacteristicCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] characteristic set NAME VALUE
               healthledger [--ledger PATH] characteristic get NAME [--app ID | --owner] [--json]
               healthledger [--ledger PATH] characteristic clear NAME

        The owner's characteristics: dateOfBirth 1990-04-12 · biologicalSex female ·
        bloodType A+ · fitzpatrickSkinType I…VI · wheelchairUse yes|no · activityMoveMode
        activeEnergy|appleMoveTime. `get --app ID` answers as HealthKit answers that app:
        notSet when not set or not readable, and for dateOfBirth an error.

        \(ExitStatus.table)
        """

    static let command = Command(name: "characteristic", abstract: "Set, get or clear a characteristic", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let sub = try args.required("set, get or clear")
        let type = try CharacteristicType(identifier: try args.required("NAME"))
        switch sub {
        case "set":
            var value = try args.required("VALUE")
            if type == .fitzpatrickSkinType, !value.hasPrefix("HK"), !value.lowercased().hasPrefix("type"), Int(value) == nil { value = "type" + value }
            try args.finish()
            let parsed = try CharacteristicValue(type: type, text: value)
            try await withStore(global, .owner) { _, _, owner in 
                let zone = global.timeZone(ledgerZone: try await owner.ledger.read(as: .owner) { $0.ownerTimeZone })
                try await owner.setCharacteristic(parsed, timeZone: zone)
            }
            Output.line(global.json ? "{\"characteristic\":\(JSONObject.quote(type.identifier)),\"value\":\(JSONObject.quote(parsed.description))}"
                                    : "\(type.shortName) = \(parsed.displayString)")
        case "clear":
            try args.finish()
            try await withStore(global, .owner) { _, _, owner in try await owner.clearCharacteristic(type) }
            Output.line("\(type.shortName) cleared")
        case "get":
            let identity = try Identity.read(&args, required: false) ?? .owner
            try args.finish()
            // unset and unreadable look the same: the read view decides
            let value = try LedgerView.read(global, as: identity).characteristic(type)
            if value == nil && type == .dateOfBirth {
                throw HealthStoreError.noData(characteristic: type.identifier)
            }
            let text = value?.displayString ?? "Not Set"
            Output.line(global.json ? "{\"characteristic\":\(JSONObject.quote(type.identifier)),\"value\":\(value.map { JSONObject.quote($0.description) } ?? "null"),\"display\":\(JSONObject.quote(text))}" : text)
        default:
            throw CLIError.usage("characteristic takes set, get or clear")
        }
    }
}
