import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

/// `healthledger save` (quantity and category samples) and `healthledger workout save`.
enum SaveCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] save --app ID --type TYPE --value V [--unit U]
                                        [--start T] [--end T] [--uuid UUID] [--meta KEY=VALUE]...

        Save one sample as an app. Quantity types need --unit (it must fit the type: a
        bodyMass in count/min is refused); category types take a value name or number
        (sleepAnalysis asleepCore). Times are ISO 8601 (a date alone is the start of that
        day in the owner's time zone); --start defaults to now and --end to --start. --meta values are typed: 42, 0.5, true, "56 degF", or text.
        Prints the new sample's UUID.

        \(ExitStatus.table)
        """

    static func sample(type: ObjectType, value: String, unit: String?, start: Date, end: Date, uuid: UUID,
                       metadata: Metadata, device: Device? = nil) throws -> Sample {
        switch type {
        case .quantity(let q):
            guard let unit else { throw CLIError.usage("a quantity sample needs --unit") }
            let v = try Parse.number(value, "value")
            return .quantity(try QuantitySample(type: q, quantity: try Quantity(v, unit: unit), start: start, end: end, uuid: uuid,
                                                metadata: metadata, device: device))
        case .category(let c):
            return .category(try CategorySample(type: c, value: try c.value(named: value), start: start, end: end, uuid: uuid,
                                                metadata: metadata, device: device))
        default:
            throw CLIError.invalidInput("wrongKindOfType: save takes quantity and category types (use `workout save` for workouts)")
        }
    }

    static let command = Command(name: "save", abstract: "Save a quantity or category sample as an app", help: help) { args, global in
        if handledHelp(&args, help) { return }
        guard case .app(let bundle)? = try Identity.read(&args, ownerAllowed: false) else { return }
        guard let typeText = try args.option("--type") else { throw CLIError.usage("save needs --type TYPE") }
        guard let value = try args.option("--value") else { throw CLIError.usage("save needs --value V") }
        let unit = try args.option("--unit")
        let startText = try args.option("--start"), endText = try args.option("--end")
        let start = try startText.map { try Parse.date($0, "--start") } ?? Date()
        let end = try endText.map { try Parse.date($0, "--end") } ?? start
        let uuid = try args.option("--uuid").map { text -> UUID in
            guard let u = UUIDText.parse(text) else { throw CLIError.invalidInput("invalidUUID: '\(text)'") }
            return u
        } ?? UUID()
        let metadata = try Parse.metadata(try args.options("--meta"))
        try args.finish()
        let type = try Parse.type(typeText)
        var s = try sample(type: type, value: value, unit: unit, start: start, end: end, uuid: uuid, metadata: metadata)
        try await withStore(global, .app(bundle)) { ledger, store, _ in
            // A date alone is a day boundary in the owner's time zone (checked above in UTC).
            if [startText, endText].contains(where: { $0?.utf8.count == 10 }) {
                let zone = global.timeZone(ledgerZone: await ledger.ownerTimeZone)
                let zonedStart = try startText.map { try Parse.date($0, "--start", zone: zone) } ?? start
                let zonedEnd = try endText.map { try Parse.date($0, "--end", zone: zone) } ?? zonedStart
                s = try sample(type: type, value: value, unit: unit, start: zonedStart, end: zonedEnd, uuid: uuid, metadata: metadata)
            }
            try await store!.save(s)
        }
        if global.json { Output.line(SampleJSON.object(s).string) } else { Output.line(uuid.uuidString) }
    }
}
