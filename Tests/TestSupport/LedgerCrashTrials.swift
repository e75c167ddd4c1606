import Foundation
import HealthModel
import LedgerCore
import LedgerLog

/// Ledger-level crash trials on the simulated disk: a seeded workload of saves,
/// deletes, snapshot writes and clean closes, power lost at a random file or folder
/// sync (sometimes again during the recovery that follows), then the checks:
/// every acknowledged save and delete is there, nothing that was never attempted
/// is, the ledger takes a new save, and `verify` passes.
///
/// Everything runs on one task, one command at a time, on a simulated disk whose
/// power losses come from the seed: a seed reproduces its run exactly. Run by
/// `swift test` (a few hundred) and by `ledger-torture crash-trials` (the soak).
package enum LedgerCrashTrials {
    /// What one trial saw.
    package struct Outcome: Sendable {
        package var failure: String?
        package var crashed = false
        package var recoveryCrashed = false
        package var tailCut = false
        package var acknowledged = 0
    }

    /// Totals over many trials.
    package struct Totals: Sendable, CustomStringConvertible {
        package var trials = 0
        package var crashed = 0
        package var recoveryCrashed = 0
        package var tailsCut = 0
        package var acknowledged = 0
        package var failures: [String] = []

        package init() {}

        package mutating func add(_ o: Outcome) {
            trials += 1
            if o.crashed { crashed += 1 }
            if o.recoveryCrashed { recoveryCrashed += 1 }
            if o.tailCut { tailsCut += 1 }
            acknowledged += o.acknowledged
            if let f = o.failure { failures.append(f) }
        }

        package mutating func add(contentsOf other: Totals) {
            trials += other.trials
            crashed += other.crashed
            recoveryCrashed += other.recoveryCrashed
            tailsCut += other.tailsCut
            acknowledged += other.acknowledged
            failures += other.failures
        }

        package var description: String {
            "ledger crash trials: \(trials), crashed \(crashed), recovery crashed \(recoveryCrashed), tails cut \(tailsCut), "
                + "acknowledged commands \(acknowledged), failures \(failures.count)"
        }
    }

    static let app = AppRegistration(bundleIdentifier: "com.example.trial", name: "Trial", readPurpose: "reads",
                                     sharePurpose: "saves")

    static func options() -> LedgerOptions {
        let clock = SteppingClock(start: 1_772_366_400_000_000_000, step: 1_000_000_000)
        return LedgerOptions(log: LogWriterOptions(clock: clock.function, allocationChunk: smallChunk), snapshotEvery: 4,
                             snapshotsKept: 2)
    }

    static func uuid(_ rng: inout SeededRandom) -> UUID {
        let a = rng.next(), b = rng.next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: a >> (8 * UInt64(i)))
            bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (8 * UInt64(i)))
        }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// Runs trials `seeds` and adds them up.
    package static func run(_ seeds: Range<UInt64>) async -> Totals {
        var totals = Totals()
        for seed in seeds { totals.add(await trial(seed)) }
        return totals
    }

    /// One trial.
    package static func trial(_ seed: UInt64) async -> Outcome {
        var outcome = Outcome()
        do {
            try await trial(seed, &outcome)
        } catch {
            outcome.failure = "seed \(seed): \(error)"
        }
        return outcome
    }

    private static func trial(_ seed: UInt64, _ outcome: inout Outcome) async throws {
        var rng = SeededRandom(seed: seed)
        let fs = SimulatedFileSystem(seed: seed)
        let ledger = try Ledger.create(fs, ledgerId: UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)),
                                       options: options())
        try await ledger.append(.registerApp(app))
        try await ledger.append(.decideAuthorization(bundleIdentifier: app.bundleIdentifier,
                                                      decisions: [(.quantity(.bodyMass), .granted, .granted)], basis: .owner))
        if rng.next() % 3 == 0 {
            fs.crashAtFolderSync = fs.folderSyncCount + Int(rng.next() % 6) + 1
        } else {
            fs.crashAtSync = fs.syncCount + Int(rng.next() % 24) + 1
        }
        var attempted = Set<UUID>()
        var saved = Set<UUID>()  // acknowledged saves
        var deleted = Set<UUID>()  // acknowledged deletes
        var deleteAttempted = Set<UUID>()
        var minute = 0.0
        var closed = false
        workload: for _ in 0..<12 {
            do {
                switch rng.next() % 10 {
                case 0...4:  // a save of 1–3 samples
                    var samples: [Sample] = []
                    for _ in 0..<Int(rng.next() % 3 + 1) {
                        minute += 1
                        let id = uuid(&rng)
                        let at = Date(timeIntervalSince1970: 1_770_000_000 + minute * 60)
                        samples.append(.quantity(try QuantitySample(type: .bodyMass, quantity: try Quantity(Double(60 + rng.next() % 40), unit: "kg"),
                                                                    start: at, end: at, uuid: id)))
                        attempted.insert(id)
                    }
                    let deferred = rng.next() % 4 == 0
                    try await ledger.append(.save(bundleIdentifier: app.bundleIdentifier, samples: samples),
                                             durability: deferred ? .deferred : .durable)
                    if deferred { try await ledger.sync() }
                    for s in samples { saved.insert(s.uuid) }
                    outcome.acknowledged += 1
                case 5, 6:  // delete one live sample
                    guard let victim = saved.subtracting(deleted).sorted(by: { $0.uuidString < $1.uuidString }).first else { continue }
                    deleteAttempted.insert(victim)
                    try await ledger.append(.delete(bundleIdentifier: app.bundleIdentifier, uuids: [victim], reason: nil))
                    deleted.insert(victim)
                    outcome.acknowledged += 1
                case 7, 8:  // a snapshot
                    _ = try await ledger.snapshot()
                default:  // a clean close (with its snapshot), the end of the workload
                    try await ledger.close()
                    closed = true
                    break workload
                }
            } catch {
                break workload
            }
        }
        if !closed { ledger.abandon() }
        outcome.crashed = fs.crashed

        // Power comes back; sometimes the recovery itself loses power too.
        var disk = fs.rebooted(seed: seed &* 0x9E37 &+ 1)
        if rng.next() % 3 == 0 {
            if rng.next() % 2 == 0 { disk.crashAtSync = Int(rng.next() % 4) + 1 } else { disk.crashAtFolderSync = Int(rng.next() % 3) + 1 }
            if let opened = try? Ledger.open(disk, options: options()) {
                if opened.openReport.recovery?.cut != nil { outcome.tailCut = true }
                opened.abandon()
            }
            outcome.recoveryCrashed = disk.crashed
            disk = disk.rebooted(seed: seed &* 0x9E37 &+ 2)
        }
        let reopened: Ledger
        do { reopened = try Ledger.open(disk, options: options()) } catch { throw TrialFailure("recovery failed: \(error)") }
        if reopened.openReport.recovery?.cut != nil { outcome.tailCut = true }
        let state = await reopened.state
        for id in saved {
            guard let slot = try state.samples.slot(of: id) else { throw TrialFailure("acknowledged save \(id) lost") }
            if state.samples.entry(slot).isDeleted && !deleteAttempted.contains(id) {
                throw TrialFailure("\(id) deleted but never asked to be")
            }
        }
        for id in deleted {
            guard let slot = try state.samples.slot(of: id), state.samples.entry(slot).isDeleted else {
                throw TrialFailure("acknowledged delete of \(id) lost")
            }
        }
        for slot in 0..<UInt32(state.samples.count) where !attempted.contains(try state.samples.uuid(slot)) {
            throw TrialFailure("sample \(try state.samples.uuid(slot)) was never saved")
        }
        // Still a working ledger, and it verifies.
        let at = Date(timeIntervalSince1970: 1_771_000_000)
        try await reopened.append(.save(bundleIdentifier: app.bundleIdentifier, samples: [
            .quantity(try QuantitySample(type: .bodyMass, quantity: try Quantity(70, unit: "kg"), start: at, end: at, uuid: uuid(&rng))),
        ]))
        try await reopened.close()
        let report = try LedgerVerifier.verify(disk)
        guard report.isIntact else { throw TrialFailure("verify fails after recovery: \(report)") }
    }

    struct TrialFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
