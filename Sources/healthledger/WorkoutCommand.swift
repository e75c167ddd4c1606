import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

enum WorkoutCommand {
    static func uuid(_ text: String) throws -> UUID {
        guard let u = UUIDText.parse(text) else { throw CLIError.invalidInput("invalidUUID: '\(text)'") }
        return u
    }

    static let help = """
        USAGE: healthledger [--ledger PATH] workout save --app ID --activity TYPE --start T --end T
                                        [--energy V UNIT] [--distance V UNIT] [--brand NAME]
                                        [--meta KEY=VALUE]...
               healthledger [--ledger PATH] workout build --app ID [--file PATH] [--json]
               healthledger [--ledger PATH] workout add --app ID WORKOUT SAMPLE...
               healthledger [--ledger PATH] workout samples (--app ID | --owner) WORKOUT TYPE [--json]

        save: save a workout as an app (a date alone for --start/--end is the start of
        that day in the owner's time zone). TYPE is a HealthKit activity type (running,
        walking, HKWorkoutActivityTypeYoga, hiit, other, …). Prancercise is `--activity
        other --brand Prancercise` (HealthKit's HKWorkoutBrandName metadata). With
        --energy, an activeEnergyBurned sample over the workout's interval is saved with
        it and associated with it, as the tutorial does (the app needs share permission
        for activeEnergyBurned as well as for workouts; nothing is saved otherwise).

        build: HKWorkoutBuilder step by step (begin, add samples, events, activities,
        route points, metadata, end, finish) from JSON Lines, committed at finish in
        one go (`workout build --help`).

        add: HKHealthStore.add(_:to:) — associate samples the app saved (UUIDs) with
        a workout it saved (an event).

        samples: the samples of TYPE associated with WORKOUT, as the app (or owner)
        may see them (HKQuery.predicateForObjects(from: workout)).

        \(ExitStatus.table)
        """

    static func quantity(_ args: inout ArgumentList, _ name: String) throws -> Quantity? {
        guard let i = args.words.firstIndex(of: name) else { return nil }
        guard i + 2 < args.words.count else { throw CLIError.usage("\(name) takes VALUE UNIT") }
        let value = args.words[i + 1], unit = args.words[i + 2]
        args = ArgumentList(Array(args.words[..<i]) + Array(args.words[(i + 3)...]))
        return try Quantity(try Parse.number(value, name), unit: unit)
    }

    static let command = Command(name: "workout", abstract: "Save, build or read a workout as an app", help: help) { args, global in
        // `workout build` has its own help and options.
        var probe = args
        _ = try? probe.option("--file")
        if probe.positional() == "build" {
            _ = args.positional()
            try await WorkoutBuildCommand.run(&args, global)
            return
        }
        if handledHelp(&args, help) { return }
        let sub = args.positional()
        switch sub {
        case "save": break
        case "add":
            guard case .app(let bundle)? = try Identity.read(&args, ownerAllowed: false) else { return }
            let workout = try uuid(try args.required("WORKOUT"))
            let samples = try args.remainingPositionals().map(uuid)
            try args.finish()
            guard !samples.isEmpty else { throw CLIError.usage("workout add needs at least one SAMPLE uuid") }
            try await withStore(global, .app(bundle)) { _, store, _ in try await store!.add(samples, to: workout) }
            return
        case "samples":
            guard let identity = try Identity.read(&args) else { return }
            let workout = try uuid(try args.required("WORKOUT"))
            let type = try Parse.type(try args.required("TYPE"))
            try args.finish()
            var view = try LedgerView.read(global, as: identity)
            let found = try view.associatedSamples(of: workout, type: type)
            QueryCommand.print(found, json: global.json)
            return
        default:
            throw CLIError.usage("workout needs a subcommand: save, build, add or samples")
        }
        guard case .app(let bundle)? = try Identity.read(&args, ownerAllowed: false) else { return }
        guard let activityText = try args.option("--activity") else { throw CLIError.usage("workout save needs --activity TYPE") }
        guard let startText = try args.option("--start"), let endText = try args.option("--end") else {
            throw CLIError.usage("workout save needs --start T and --end T")
        }
        let energy = try quantity(&args, "--energy"), distance = try quantity(&args, "--distance")
        var metadata = try Parse.metadata(try args.options("--meta"))
        if let brand = try args.option("--brand") { metadata.append(Metadata.WellKnownKey.workoutBrandName, .string(brand)) }
        try args.finish()
        let activity = try WorkoutActivityType(name: activityText)
        // Checked before the ledger opens (a date alone as UTC here), then built again
        // with the owner's day boundaries once the ledger's zone is known.
        func build(_ zone: TimeZone?) throws -> (Workout, [Sample]) {
            let workout = try Workout(activityType: activity, start: try Parse.date(startText, "--start", zone: zone),
                                      end: try Parse.date(endText, "--end", zone: zone), totalEnergyBurned: energy,
                                      totalDistance: distance, uuid: uuid, metadata: metadata)
            let attached = try energy.map { energy -> Sample in
                .quantity(try QuantitySample(type: .activeEnergyBurned, quantity: energy, start: workout.startDate,
                                             end: workout.endDate, uuid: energyUUID))
            }
            return (workout, attached.map { [$0] } ?? [])
        }
        let uuid = UUID(), energyUUID = UUID()
        var (workout, attached) = try build(nil)
        try await withStore(global, .app(bundle)) { ledger, store, _ in
            // A date alone is the start of that day in the owner's time zone (`--tz` overrides).
            (workout, attached) = try build(global.timeZone(ledgerZone: await ledger.ownerTimeZone))
            try await store!.save(workout, with: attached)
        }
        if global.json { Output.line(SampleJSON.object(.workout(workout)).string) } else { Output.line(workout.uuid.uuidString) }
    }
}
