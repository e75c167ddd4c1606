import Foundation
import HealthModel
import HealthLedger
import LedgerCore
import LedgerLog
import TestSupport

func date(_ text: String) -> Date { ISO8601.date(from: text)! }

/// An open ledger on a simulated disk with a stepping clock.
func makeLedger(_ fs: SimulatedFileSystem = SimulatedFileSystem()) throws -> Ledger {
    let clock = SteppingClock(start: 1_772_366_400_000_000_000, step: 1_000_000_000)
    return try Ledger.create(fs, ledgerId: fixedLedgerId,
                             options: LedgerOptions(log: LogWriterOptions(clock: clock.function, allocationChunk: smallChunk)))
}

let tracker = AppRegistration(
    bundleIdentifier: "com.raywenderlich.PrancerciseTracker", name: "Prancercise Tracker",
    readPurpose: "Prancercise Tracker reads your profile to show your BMI.",
    sharePurpose: "Prancercise Tracker saves your BMI and your workouts.")
let healthApp = AppRegistration(bundleIdentifier: "com.apple.Health", name: "Health", readPurpose: "Your data.",
                                sharePurpose: "Entries you type into Health.")

func weight(_ kg: Double, at: String, uuid: UUID = UUID()) throws -> Sample {
    .quantity(try QuantitySample(type: .bodyMass, quantity: try Quantity(kg, unit: "kg"), start: date(at), end: date(at), uuid: uuid))
}
