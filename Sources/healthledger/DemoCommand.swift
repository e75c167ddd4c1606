import Foundation
import HealthLedger
import LedgerTools
import HealthModel

/// `healthledger demo`: the tutorial's journey into a fresh ledger, step by step.
enum DemoCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] demo

        Walk through the HealthKit tutorial on a fresh ledger (default ./health.ledger; an
        existing ledger is never touched): the Prancercise Tracker registers with its
        purpose strings and asks for permissions, the owner grants them and sets date of
        birth, sex and blood type, height and weight arrive from a second source, the app
        shows the Profile & BMI screen, saves the BMI and logs a Prancercise workout;
        then `audit` of the BMI and `verify`. Each step is printed.

        \(ExitStatus.table)
        """

    static let tracker = AppRegistration(
        bundleIdentifier: "com.raywenderlich.PrancerciseTracker", name: "Prancercise Tracker",
        readPurpose: "Prancercise Tracker reads your date of birth, sex, blood type, height and weight to show your profile and BMI.",
        sharePurpose: "Prancercise Tracker saves your BMI and your Prancercise workouts.")
    static let health = AppRegistration(bundleIdentifier: "com.apple.Health", name: "Health",
                                        readPurpose: "Health shows all your data.", sharePurpose: "Entries you type into Health.")

    static let command = Command(name: "demo", abstract: "The tutorial's whole journey on a fresh ledger", help: help) { args, global in
        if handledHelp(&args, help) { return }
        try args.finish()
        let location = global.reads.location
        guard try !location.holdsLedger() else {
            throw CLIError(status: ExitStatus.failure, message: "demo: \(global.ledgerPath) already holds a ledger; the demo only writes to a fresh one (--ledger NEW_PATH)")
        }
        var step = 0
        func say(_ text: String) {
            step += 1
            Output.line("")
            Output.line("\(step). \(text)")
        }
        func detail(_ text: String) { Output.line("   " + text) }

        let ledger = try location.create()
        say("Created a ledger at \(global.ledgerPath) (id \(ledger.ledgerId.uuidString)): a folder whose single source of truth is ledger.log.")

        let app = try await HealthStore(ledger: ledger, app: tracker)
        say("\(tracker.name) registers, with its two purpose strings.")
        detail("reads:  \(tracker.readPurpose!)")
        detail("writes: \(tracker.sharePurpose!)")

        let share: Set<ObjectType> = [.quantity(.bodyMassIndex), .quantity(.activeEnergyBurned), .workout]
        let read: Set<ObjectType> = [.characteristic(.dateOfBirth), .characteristic(.bloodType), .characteristic(.biologicalSex),
                                     .quantity(.bodyMassIndex), .quantity(.height), .quantity(.bodyMass), .workout]
        try await app.requestAuthorization(toShare: share, read: read)
        say("The app asks to share \(share.sorted().map(\.shortName).joined(separator: ", ")) and to read \(read.sorted().map(\.shortName).joined(separator: ", ")).")
        detail("status for bodyMassIndex: \(try await app.authorizationStatus(for: .quantity(.bodyMassIndex)).name) (nobody has answered yet)")

        let owner = OwnerStore(ledger: ledger)
        try await owner.grantRequested(app: tracker.bundleIdentifier)
        try await owner.setCharacteristic(.dateOfBirth(try DateOfBirth(year: 1990, month: 4, day: 12)))
        try await owner.setCharacteristic(.biologicalSex(.female))
        try await owner.setCharacteristic(.bloodType(.aPositive))
        say("The owner grants what was asked and sets date of birth 1990-04-12, sex female, blood type A+.")
        detail("status for bodyMassIndex: \(try await app.authorizationStatus(for: .quantity(.bodyMassIndex)).name); read permission is never revealed to the app")

        let now = Date()
        let healthStore = try await HealthStore(ledger: ledger, app: health)
        try await owner.decide(app: health.bundleIdentifier, [(.quantity(.height), .granted, .granted), (.quantity(.bodyMass), .granted, .granted)])
        let entered: Metadata = [Metadata.WellKnownKey.wasUserEntered: .bool(true)]
        let measured = now.addingTimeInterval(-86_400)
        try await healthStore.save([
            .quantity(try QuantitySample(type: .height, quantity: try Quantity(1.75, unit: "m"), start: measured, end: measured, metadata: entered)),
            .quantity(try QuantitySample(type: .bodyMass, quantity: try Quantity(70, unit: "kg"), start: measured, end: measured, metadata: entered)),
        ])
        say("Height 1.75 m and weight 70 kg arrive from a second source: the owner's own entries in Health.")

        let profile = try await ProfileScreen.load(from: app, now: now)
        say("The app shows its Profile & BMI screen:")
        for line in profile.lines { detail(line) }

        guard let bmi = profile.bodyMassIndex else { throw CLIError(status: ExitStatus.failure, message: "demo: no BMI") }
        let bmiSample = try QuantitySample(type: .bodyMassIndex, quantity: bmi, start: now, end: now)
        try await app.save(.quantity(bmiSample))
        say("The app saves the BMI (\(BodyMassIndex.formatted(bmi)), a count quantity) as a sample: \(bmiSample.uuid.uuidString).")

        let start = now.addingTimeInterval(-3600), end = now.addingTimeInterval(-1800)
        let energy = try Quantity(250, unit: "kcal")
        let workout = try Workout(activityType: .other, start: start, end: end, totalEnergyBurned: energy,
                                  metadata: [Metadata.WellKnownKey.workoutBrandName: .string("Prancercise")])
        try await app.save([.workout(workout),
                            .quantity(try QuantitySample(type: .activeEnergyBurned, quantity: energy, start: start, end: end))])
        say("The app logs a 30-minute Prancercise workout (activity type other, HKWorkoutBrandName Prancercise) burning 250 kcal.")

        let events = await ledger.lastSequence
        try await ledger.close()
        say("audit bodyMassIndex — every event that touched the type, who, when, and the authorization in force:")
        for e in try global.reads.history(of: .type(.quantity(.bodyMassIndex))) {
            detail("#\(e.sequence) \(ISO8601.string(e.recordedDate)) \(e.actor): \(e.what)" + (e.authorization.map { " [\($0)]" } ?? ""))
        }

        let report = try global.reads.verifyLedger()
        say("verify: \(report.isIntact ? "OK" : "NOT INTACT") — \(report.log.bytes) bytes, \(report.log.batches) batches, \(events) events, every rule holds.")
        detail("chain head \(report.log.chainHead.hex)")
        detail("projection digest \(report.digest.hex)")
        Output.line("")
        Output.line("Next: healthledger --ledger \(global.ledgerPath) log --json | head   ·   replay   ·   replay --as-of TIME   ·   verify")
        if !report.isIntact { throw CLIError(status: ExitStatus.damaged, message: "demo: the ledger does not verify") }
    }
}
